package everything_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

var update = flag.Bool("update", false, "rewrite testdata/stdio_golden.jsonl from the actual output")

const timeout = 5 * time.Second

// wireMsg is any message the server writes.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	line []byte
}

// lineClient is a minimal stdio client: it writes request lines carrying the
// required _meta and demultiplexes the lines it reads, responses by id and
// notifications in arrival order.
type lineClient struct {
	t      *testing.T
	in     *io.PipeWriter
	notes  chan *wireMsg
	served chan error
	read   chan struct{}

	mu        sync.Mutex
	responses map[string]chan *wireMsg // by raw id
}

func newLineClient(t *testing.T, srv *server.Server) *lineClient {
	t.Helper()
	before := runtime.NumGoroutine()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{
		t: t, in: inW,
		notes:     make(chan *wireMsg, 256),
		served:    make(chan error, 1),
		read:      make(chan struct{}),
		responses: map[string]chan *wireMsg{},
	}
	go func() { c.served <- stdio.Serve(context.Background(), srv, inR, outW, nil) }()
	go func() {
		defer close(c.read)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				c.dispatch(line)
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-c.served:
			if err != nil {
				t.Errorf("Serve = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after end of input")
		}
		outW.Close()
		<-c.read
		srv.Close()
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("goroutines leaked: %d before, %d after", before, n)
		}
	})
	return c
}

func (c *lineClient) dispatch(line []byte) {
	if !bytes.HasSuffix(line, []byte("\n")) {
		c.t.Errorf("line without newline: %.200s", line)
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	if _, err := jsonrpc.Decode(line); err != nil {
		c.t.Errorf("server wrote a line that is not JSON-RPC (%v): %.200s", err, line)
		return
	}
	m := &wireMsg{line: line}
	if err := json.Unmarshal(line, m); err != nil {
		c.t.Errorf("line %.200s: %v", line, err)
		return
	}
	if m.Method != "" {
		if m.ID != nil {
			c.t.Errorf("the server sent a request on stdio: %s", line)
		}
		c.notes <- m
		return
	}
	c.box(string(m.ID)) <- m
}

func (c *lineClient) box(id string) chan *wireMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.responses[id]
	if ch == nil {
		ch = make(chan *wireMsg, 8)
		c.responses[id] = ch
	}
	return ch
}

var clientCaps = map[string]any{"elicitation": map[string]any{}}

// send writes a request (id not empty) or notification with params, adding
// the per-request _meta (and extra _meta members) to requests.
func (c *lineClient) send(id, method string, params map[string]any, extraMeta map[string]any) {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if id != "" {
		meta := map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": clientCaps,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "line-client", "version": "0.0.1"},
		}
		for k, v := range extraMeta {
			meta[k] = v
		}
		params["_meta"] = meta
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != "" {
		msg["id"] = json.RawMessage(id)
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendLine(string(b))
}

func (c *lineClient) sendLine(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("writing: %v", err)
	}
}

// response waits for the response to id.
func (c *lineClient) response(id string) *wireMsg {
	c.t.Helper()
	select {
	case m := <-c.box(id):
		return m
	case <-time.After(timeout):
		c.t.Fatalf("no response for id %s within %v", id, timeout)
		return nil
	}
}

// call sends a request and waits for its response.
func (c *lineClient) call(id, method string, params map[string]any) *wireMsg {
	c.t.Helper()
	c.send(id, method, params, nil)
	return c.response(id)
}

// notification waits for the next notification.
func (c *lineClient) notification() *wireMsg {
	c.t.Helper()
	select {
	case m := <-c.notes:
		return m
	case <-time.After(timeout):
		c.t.Fatalf("no notification within %v", timeout)
		return nil
	}
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

func resultOf[T any](t *testing.T, m *wireMsg) T {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error response %s", m.line)
	}
	return decode[T](t, m.Result)
}

type serverMeta struct {
	ServerInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"io.modelcontextprotocol/serverInfo"`
	SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
}

type toolResult struct {
	ResultType string `json:"resultType"`
	Content    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool       `json:"isError"`
	Meta    serverMeta `json:"_meta"`
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, " ")
}

func TestStdioEndToEnd(t *testing.T) {
	c := newLineClient(t, everything.New(nil))

	t.Run("discover", func(t *testing.T) {
		res := resultOf[struct {
			ResultType        string                     `json:"resultType"`
			SupportedVersions []string                   `json:"supportedVersions"`
			Capabilities      map[string]json.RawMessage `json:"capabilities"`
			TTLMs             *int64                     `json:"ttlMs"`
			CacheScope        string                     `json:"cacheScope"`
			Meta              serverMeta                 `json:"_meta"`
		}](t, c.call(`"discover"`, "server/discover", nil))
		if res.ResultType != "complete" {
			t.Errorf("resultType = %q", res.ResultType)
		}
		if !contains(res.SupportedVersions, "2026-07-28") {
			t.Errorf("supportedVersions = %q, want 2026-07-28 among them", res.SupportedVersions)
		}
		for _, k := range []string{"tools", "resources", "prompts", "completions", "logging"} {
			if _, ok := res.Capabilities[k]; !ok {
				t.Errorf("capabilities lack %q: %v", k, res.Capabilities)
			}
		}
		if res.Meta.ServerInfo == nil || res.Meta.ServerInfo.Name != everything.Info.Name || res.Meta.ServerInfo.Version != everything.Info.Version {
			t.Errorf("_meta serverInfo = %+v", res.Meta.ServerInfo)
		}
		if res.TTLMs == nil || *res.TTLMs <= 0 {
			t.Errorf("ttlMs = %v, want a positive TTL", res.TTLMs)
		}
		if res.CacheScope != "public" && res.CacheScope != "private" {
			t.Errorf("cacheScope = %q", res.CacheScope)
		}
	})

	t.Run("progress", func(t *testing.T) {
		c.send(`7`, "tools/call", map[string]any{"name": "test_tool_with_progress", "arguments": map[string]any{}},
			map[string]any{"progressToken": "progress-7"})
		last := -1.0
		for i := range 3 {
			n := c.notification()
			if n.Method != "notifications/progress" {
				t.Fatalf("notification %d = %s, want notifications/progress", i, n.line)
			}
			p := decode[struct {
				ProgressToken json.RawMessage `json:"progressToken"`
				Progress      float64         `json:"progress"`
				Total         float64         `json:"total"`
			}](t, n.Params)
			if string(p.ProgressToken) != `"progress-7"` {
				t.Errorf("progressToken = %s", p.ProgressToken)
			}
			if p.Progress <= last {
				t.Errorf("progress %v after %v: not increasing", p.Progress, last)
			}
			if p.Total != 100 {
				t.Errorf("total = %v", p.Total)
			}
			last = p.Progress
		}
		res := resultOf[toolResult](t, c.response(`7`))
		if res.ResultType != "complete" || res.text() != "Tool with progress completed" {
			t.Errorf("result = %+v", res)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		// A long sleep, and a short one that would answer within the
		// window below were its cancellation not honoured.
		c.send(`"slow"`, "tools/call", map[string]any{"name": "test_sleep", "arguments": map[string]any{"ms": 60000}}, nil)
		c.send(`"short"`, "tools/call", map[string]any{"name": "test_sleep", "arguments": map[string]any{"ms": 300}}, nil)
		c.send("", "notifications/cancelled", map[string]any{"requestId": "slow", "reason": "test"}, nil)
		c.send("", "notifications/cancelled", map[string]any{"requestId": "short", "reason": "test"}, nil)
		res := resultOf[toolResult](t, c.call(`"after-cancel"`, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "still answering"}}))
		if res.text() != "still answering" {
			t.Errorf("echo = %q", res.text())
		}
		window := time.After(700 * time.Millisecond)
		for {
			select {
			case m := <-c.box(`"slow"`):
				t.Fatalf("a response arrived for the cancelled request: %s", m.line)
			case m := <-c.box(`"short"`):
				t.Fatalf("a response arrived for the cancelled request: %s", m.line)
			case n := <-c.notes:
				t.Fatalf("a notification arrived for a cancelled request: %s", n.line)
			case <-window:
				return
			}
		}
	})

	t.Run("mrtr", func(t *testing.T) {
		call := func(id string, extra map[string]any) *wireMsg {
			params := map[string]any{"name": "test_input_required_result_elicitation", "arguments": map[string]any{}}
			for k, v := range extra {
				params[k] = v
			}
			return c.call(id, "tools/call", params)
		}
		type inputRequest struct {
			Method string `json:"method"`
			Params struct {
				Mode            string          `json:"mode"`
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			} `json:"params"`
		}
		first := resultOf[struct {
			ResultType    string                  `json:"resultType"`
			InputRequests map[string]inputRequest `json:"inputRequests"`
			RequestState  string                  `json:"requestState"`
		}](t, call(`"mrtr-1"`, nil))
		if first.ResultType != "input_required" {
			t.Fatalf("resultType = %q, want input_required", first.ResultType)
		}
		ir, ok := first.InputRequests["user_name"]
		if !ok || len(first.InputRequests) != 1 {
			t.Fatalf("inputRequests = %+v, want user_name only", first.InputRequests)
		}
		if ir.Method != "elicitation/create" || ir.Params.Message == "" || len(ir.Params.RequestedSchema) == 0 {
			t.Errorf("user_name = %+v", ir)
		}
		if first.RequestState == "" {
			t.Fatal("no requestState")
		}
		answers := map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}

		retry := resultOf[toolResult](t, call(`"mrtr-2"`, map[string]any{"inputResponses": answers, "requestState": first.RequestState}))
		if retry.ResultType != "complete" || retry.text() != "Hello, Alice!" {
			t.Errorf("retry = %+v, want Hello, Alice!", retry)
		}

		tampered := []byte(first.RequestState)
		i := len(tampered) / 2
		if tampered[i] == 'A' {
			tampered[i] = 'B'
		} else {
			tampered[i] = 'A'
		}
		bad := call(`"mrtr-3"`, map[string]any{"inputResponses": answers, "requestState": string(tampered)})
		if bad.Error == nil || bad.Error.Code != -32602 {
			t.Errorf("tampered requestState answered %s, want error -32602", bad.line)
		}
	})

	t.Run("subscription", func(t *testing.T) {
		c.send(`"listen-1"`, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"test://watched-resource"}}}, nil)
		ack := c.notification()
		if ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first notification %s, want the acknowledgement", ack.line)
		}
		ap := decode[struct {
			Meta          serverMeta `json:"_meta"`
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		}](t, ack.Params)
		if string(ap.Meta.SubscriptionID) != `"listen-1"` {
			t.Errorf("acknowledgement subscriptionId = %s, want \"listen-1\"", ap.Meta.SubscriptionID)
		}
		if len(ap.Notifications.ResourceSubscriptions) != 1 || ap.Notifications.ResourceSubscriptions[0] != "test://watched-resource" {
			t.Errorf("acknowledged %+v", ap.Notifications)
		}

		res := resultOf[toolResult](t, c.call(`"trigger"`, "tools/call", map[string]any{"name": "test_trigger_resource_update", "arguments": map[string]any{"uri": "test://watched-resource"}}))
		if res.IsError {
			t.Fatalf("trigger failed: %+v", res)
		}
		up := c.notification()
		if up.Method != "notifications/resources/updated" {
			t.Fatalf("notification %s, want notifications/resources/updated", up.line)
		}
		upp := decode[struct {
			URI  string     `json:"uri"`
			Meta serverMeta `json:"_meta"`
		}](t, up.Params)
		if upp.URI != "test://watched-resource" || string(upp.Meta.SubscriptionID) != `"listen-1"` {
			t.Errorf("update = %s", up.line)
		}

		c.send("", "notifications/cancelled", map[string]any{"requestId": "listen-1"}, nil)
		// Another update after the cancellation reaches nobody.
		c.call(`"trigger-2"`, "tools/call", map[string]any{"name": "test_trigger_resource_update", "arguments": map[string]any{"uri": "test://watched-resource"}})
		select {
		case n := <-c.notes:
			t.Errorf("notification after the listen was cancelled: %s", n.line)
		case m := <-c.box(`"listen-1"`):
			t.Errorf("response to the cancelled listen: %s", m.line)
		case <-time.After(200 * time.Millisecond):
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestStdioGolden serves a fixed sequence of requests and compares the
// response lines, sorted by id, with testdata/stdio_golden.jsonl. Run with
// -update to rewrite the file.
func TestStdioGolden(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{"text":"hello, golden"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{` + meta + `,"uri":"test://static-text"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"no/such/method","params":{` + meta + `}}`,
	}, "\n") + "\n"
	srv := everything.New(nil)
	defer srv.Close()
	var out bytes.Buffer
	if err := stdio.Serve(context.Background(), srv, strings.NewReader(input), &out, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	sort.Slice(lines, func(i, j int) bool {
		return idKey(t, lines[i]) < idKey(t, lines[j])
	})
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "stdio_golden.jsonl")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("responses differ from %s (run with -update after checking them):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func idKey(t *testing.T, line string) int {
	t.Helper()
	var m struct{ ID int }
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("line %s: %v", line, err)
	}
	return m.ID
}
