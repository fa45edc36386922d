package stdio_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// dualClient speaks both eras to one Serve over pipes: requests go out as
// lines; lines coming back are sorted into responses (by raw id), server
// requests and notifications.
type dualClient struct {
	*pipeConn
	t         *testing.T
	responses map[string]string
	requests  []string
	notes     []string
}

// startDual serves a dual-era adapter in front of the everything server
// and returns the client and the core. The adapter is closed when the test
// ends, after Serve has returned.
func startDual(t *testing.T, opts *legacy.Options) (*dualClient, *server.Server) {
	t.Helper()
	checkLeaks(t)
	core := everything.New(nil)
	both := legacy.New(core, opts)
	t.Cleanup(func() {
		both.Close()
		core.Close()
	})
	c := &dualClient{pipeConn: startConn(t, both, nil), t: t, responses: map[string]string{}}
	return c, core
}

// pump reads one line and files it.
func (c *dualClient) pump(timeout time.Duration) {
	c.t.Helper()
	line := string(c.recv(timeout))
	m, err := jsonrpc.Decode([]byte(line))
	if err != nil {
		c.t.Fatalf("undecodable line %s: %v", line, err)
	}
	switch {
	case m.IsRequest():
		c.requests = append(c.requests, line)
	case m.IsNotification():
		c.notes = append(c.notes, line)
	default:
		c.responses[string(m.ID.Raw())] = line
	}
}

// response returns the response line with the raw id, reading lines until
// it arrives.
func (c *dualClient) response(id string) string {
	c.t.Helper()
	for {
		if l, ok := c.responses[id]; ok {
			delete(c.responses, id)
			return l
		}
		c.pump(5 * time.Second)
	}
}

// request returns the next server-to-client request line.
func (c *dualClient) request() string {
	c.t.Helper()
	for len(c.requests) == 0 {
		c.pump(5 * time.Second)
	}
	l := c.requests[0]
	c.requests = c.requests[1:]
	return l
}

// notification returns the next notification line with the method.
func (c *dualClient) notification(method string) string {
	c.t.Helper()
	for {
		for i, l := range c.notes {
			if m, _ := jsonrpc.Decode([]byte(l)); m.Method == method {
				c.notes = append(c.notes[:i], c.notes[i+1:]...)
				return l
			}
		}
		c.pump(5 * time.Second)
	}
}

// initialize performs the legacy handshake with the capabilities.
func (c *dualClient) initialize(caps string) string {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"legacy-client","version":"1.0"}}}`)
	resp := c.response("0")
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return resp
}

// endsAtOnce closes the input and checks that Serve returns well under the
// 2 s shutdown grace (nothing left running: why says what would have been)
// and writes nothing more.
func (c *dualClient) endsAtOnce(why string) {
	c.t.Helper()
	start := time.Now()
	c.closeInput()
	if err := c.wait(5 * time.Second); err != nil {
		c.t.Fatalf("Serve: %v", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		c.t.Errorf("Serve took %v after end of input: %s", d, why)
	}
	if rest := c.rest(); len(rest) != 0 {
		c.t.Errorf("lines after end of input: %q", rest)
	}
}

func legacyCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// resultOf returns the result member of a response line, failing on an
// error response.
func resultOf(t *testing.T, line string) json.RawMessage {
	t.Helper()
	m, err := jsonrpc.Decode([]byte(line))
	if err != nil || m.Error != nil || m.Result == nil {
		t.Fatalf("want a result, got %s (%v)", line, err)
	}
	return m.Result
}

func TestDualEraInterleaved(t *testing.T) {
	c, _ := startDual(t, nil)

	// A modern request before any handshake.
	c.send(`{"jsonrpc":"2.0","id":"m0","method":"server/discover","params":{` + modernMeta + `}}`)
	if r := resultOf(t, c.response(`"m0"`)); member(r, "resultType") == nil {
		t.Errorf("modern server/discover without resultType: %s", r)
	}

	init := c.initialize(`{}`)
	r := resultOf(t, init)
	if v, _ := jsonrpc.StringValue(member(r, "protocolVersion")); v != "2025-11-25" {
		t.Errorf("initialize: protocolVersion %q in %s", v, init)
	}
	if want := `{"name":"mcpkit-everything-server","version":"0.1.0"}`; string(member(r, "serverInfo")) != want {
		t.Errorf("initialize: serverInfo %s", member(r, "serverInfo"))
	}
	if member(member(r, "capabilities"), "extensions") != nil {
		t.Errorf("initialize advertises the modern extensions member: %s", r)
	}

	// Legacy and modern requests, interleaved on the one connection.
	c.send(
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"m1","method":"tools/list","params":{`+modernMeta+`}}`,
		legacyCall("2", "echo", `{"text":"old"}`),
		toolCall(`"m2"`, "echo", `{"text":"new"}`),
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"method":"server/discover"}`,
	)
	legacyList := resultOf(t, c.response("1"))
	modernList := resultOf(t, c.response(`"m1"`))
	for _, name := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if member(legacyList, name) != nil {
			t.Errorf("legacy tools/list carries %s", name)
		}
		if member(modernList, name) == nil {
			t.Errorf("modern tools/list lacks %s", name)
		}
	}
	if !strings.Contains(string(legacyList), `"name":"test_elicitation"`) {
		t.Errorf("legacy tools/list lacks the fixtures: %.200s", legacyList)
	}
	if got, want := c.response("2"), `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"old"}]}}`; got != want {
		t.Errorf("legacy tools/call\n got %s\nwant %s", got, want)
	}
	if got, want := c.response(`"m2"`), `{"jsonrpc":"2.0","id":"m2","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpkit-everything-server","version":"0.1.0"}},"content":[{"type":"text","text":"new"}]}}`; got != want {
		t.Errorf("modern tools/call\n got %s\nwant %s", got, want)
	}
	if got, want := c.response("3"), `{"jsonrpc":"2.0","id":3,"result":{}}`; got != want {
		t.Errorf("legacy ping: %s", got)
	}
	if got, want := c.response("4"), `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found: server/discover"}}`; got != want {
		t.Errorf("legacy server/discover\n got %s\nwant %s", got, want)
	}

	// initialize carrying modern _meta is a modern request: the modern era
	// has no initialize.
	c.send(`{"jsonrpc":"2.0","id":"m3","method":"initialize","params":{` + modernMeta + `,"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	m, _ := jsonrpc.Decode([]byte(c.response(`"m3"`)))
	if m.Error == nil || m.Error.Code != -32601 || !strings.Contains(m.Error.Message, "2026-07-28") {
		t.Errorf("modern initialize: %+v", m.Error)
	}
	// A second legacy initialize is refused inside the session.
	c.send(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	if got, want := c.response("5"), `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"the session is already initialized"}}`; got != want {
		t.Errorf("second initialize\n got %s\nwant %s", got, want)
	}
	if len(c.requests)+len(c.notes) != 0 {
		t.Errorf("unexpected lines: %q %q", c.requests, c.notes)
	}
}

func TestDualEraElicitation(t *testing.T) {
	c, _ := startDual(t, nil)
	c.initialize(`{"elicitation":{}}`)
	c.send(legacyCall("7", "test_elicitation", `{"message":"Who are you?"}`))
	line := c.request()
	want := `{"jsonrpc":"2.0","id":"mcpkit-1","method":"elicitation/create","params":{"message":"Who are you?","requestedSchema":{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}}}`
	if line != want {
		t.Errorf("elicitation request\n got %s\nwant %s", line, want)
	}
	m, _ := jsonrpc.Decode([]byte(line))
	if !m.ID.IsString() {
		t.Fatalf("request id %s", m.ID.Raw())
	}
	c.send(`{"jsonrpc":"2.0","id":` + string(m.ID.Raw()) + `,"result":{"action":"accept","content":{"username":"ada","email":"ada@example.com"}}}`)
	if got, want := c.response("7"), `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"User response: action=accept, content={\"email\":\"ada@example.com\",\"username\":\"ada\"}"}]}}`; got != want {
		t.Errorf("tool result\n got %s\nwant %s", got, want)
	}

	// The same tool without the capability.
	c2, _ := startDual(t, nil)
	c2.initialize(`{}`)
	c2.send(legacyCall("8", "test_elicitation", `{"message":"Who are you?"}`))
	m, _ = jsonrpc.Decode([]byte(c2.response("8")))
	if m.Error == nil || m.Error.Code != -32600 {
		t.Errorf("without the capability: %+v", m.Error)
	}
}

func TestDualEraResourceUpdated(t *testing.T) {
	c, core := startDual(t, nil)
	c.initialize(`{}`)
	feed := core.Feed().(*server.MemoryFeed)
	waitFor(t, 5*time.Second, "the adapter's feed subscription", func() bool { return feed.Subscribers() > 0 })

	c.send(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}`)
	if got := c.response("1"); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("subscribe: %s", got)
	}
	c.send(legacyCall("2", "test_trigger_resource_update", `{"uri":"test://watched-resource"}`))
	resultOf(t, c.response("2"))
	if got, want := c.notification("notifications/resources/updated"), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://watched-resource"}}`; got != want {
		t.Errorf("update\n got %s\nwant %s", got, want)
	}

	// An update of a resource not subscribed to sends nothing; a tool list
	// change, which every initialized session gets, shows that delivery
	// has happened.
	c.send(legacyCall("3", "test_trigger_resource_update", `{"uri":"test://static-text"}`))
	resultOf(t, c.response("3"))
	c.send(legacyCall("4", "test_trigger_tool_change", `{}`))
	resultOf(t, c.response("4"))
	if got := c.notification("notifications/tools/list_changed"); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("list change: %s", got)
	}
	if len(c.notes) != 0 {
		t.Errorf("unexpected notifications: %q", c.notes)
	}
}

func TestDualEraCancelled(t *testing.T) {
	c, _ := startDual(t, nil)
	c.initialize(`{}`)
	c.send(legacyCall("9", "test_sleep", `{"ms":10000}`))
	c.send(cancelled("9"), `{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if got := c.response("10"); got != `{"jsonrpc":"2.0","id":10,"result":{}}` {
		t.Fatalf("ping: %s", got)
	}
	c.expectNone(100 * time.Millisecond)
	if l, ok := c.responses["9"]; ok {
		t.Errorf("the cancelled call was answered: %s", l)
	}
	c.endsAtOnce("the cancelled call was still running")
}

// TestDualEraEOF: end of input ends Serve at once, the session and its
// stream pump with it.
func TestDualEraEOF(t *testing.T) {
	c, _ := startDual(t, nil)
	c.initialize(`{}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	c.response("1")
	c.endsAtOnce("nothing was in flight")
}

// TestDualEraIdleSession: the process's legacy session lasts as long as
// its input, however long the client stays quiet.
func TestDualEraIdleSession(t *testing.T) {
	// In a bubble, so that the quiet spells are the adapter's sweeps and
	// not a race with the goroutine that reads the session's stream.
	synctest.Test(t, func(t *testing.T) {
		const idle = 30 * time.Millisecond
		c, _ := startDual(t, &legacy.Options{IdleTimeout: idle})
		c.initialize(`{}`)
		synctest.Wait()
		time.Sleep(10 * idle)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if got := c.response("1"); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Errorf("ping after a quiet spell: %s", got)
		}
		synctest.Wait()
		time.Sleep(10 * idle)
		c.send(legacyCall("2", "test_trigger_tool_change", `{}`))
		resultOf(t, c.response("2"))
		if got := c.notification("notifications/tools/list_changed"); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
			t.Errorf("list change: %s", got)
		}
	})
}

// member returns the raw value of the member key of the JSON object obj,
// or nil.
func member(obj []byte, key string) []byte {
	var m map[string]json.RawMessage
	if jsonrpc.Unmarshal(obj, &m) != nil {
		return nil
	}
	return m[key]
}

// TestDualEraSessionEnd: when the process's legacy session ends (its
// adapter closed) the requests it was serving are cancelled — stdio, not
// the session, keeps them — and nothing is written for them; what comes
// after is refused.
func TestDualEraSessionEnd(t *testing.T) {
	checkLeaks(t)
	core := everything.New(nil)
	both := legacy.New(core, nil)
	t.Cleanup(func() { core.Close() })
	c := &dualClient{pipeConn: startConn(t, both, nil), t: t, responses: map[string]string{}}
	c.initialize(`{}`)
	c.send(legacyCall("9", "test_sleep", `{"ms":10000}`), `{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	c.response("10") // read after 9, so 9 is in flight
	both.Close()
	c.send(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	if got := c.response("11"); !strings.Contains(got, `"error"`) || !strings.Contains(got, "session closed") {
		t.Errorf("a request after the session ended: %s", got)
	}
	c.endsAtOnce("the session's call was still running")
	if l, ok := c.responses["9"]; ok {
		t.Errorf("the call of the ended session was answered: %s", l)
	}
}
