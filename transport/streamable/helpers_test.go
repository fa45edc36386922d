package streamable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/transporttest"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
)

// testMeta is the _meta every well-formed test request carries.
const testMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// testInfo identifies the test server in result _meta.
var testInfo = protocol.Implementation{Name: "test-server", Version: "1.0.0"}

// regionSchema is the input schema of the "region" tool: parameters
// mirrored into Mcp-Param-* headers of each supported type, one nested.
const regionSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"count":{"type":"integer","x-mcp-header":"Count"},` +
	`"dry":{"type":"boolean","x-mcp-header":"Dry"},` +
	`"place":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},` +
	`"query":{"type":"string"}}}`

// newTestServer returns a server core with the tools the tests call:
// fixed (a fixed text), echo ({"text"} back), progress (two progress
// notifications, then a text), region (x-mcp-header parameters), and a
// prompt so that prompt list changes exist as a notification type.
// newTestServer returns a modern-only core; the legacy tests put an
// adapter of their own in front of it.
func newTestServer() *server.Server {
	s := server.New(testInfo, &server.Options{Legacy: legacy.Options{Disabled: true}})
	server.AddTool(s, &protocol.Tool{Name: "fixed", Description: "Returns a fixed text"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			return "fixed text", nil
		})
	type echoArgs struct {
		Text string `json:"text"`
	}
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *server.CallRequest, in echoArgs) (string, error) {
			return in.Text, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "progress", Description: "Reports progress twice"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			for _, p := range []float64{1, 2} {
				if err := req.Progress(p, 2, ""); err != nil {
					return "", err
				}
			}
			return "done", nil
		})
	s.AddToolHandler(&protocol.Tool{Name: "region", Description: "Mirrors parameters into headers", InputSchema: json.RawMessage(regionSchema)},
		func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
			return server.TextResult("args " + string(req.Arguments)), nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "hello", Description: "Says hello"},
		func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{}, nil
		})
	return s
}

// rpc returns a request body with the given id (raw JSON), method and
// params members; testMeta is added as _meta.
func rpc(id, method, members string) string {
	if members != "" {
		members += ","
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + members + `"_meta":` + testMeta + `}}`
}

// callBody returns a tools/call body for tool with the arguments (raw JSON).
func callBody(id, tool, args string) string {
	return rpc(id, protocol.MethodToolsCall, `"name":"`+tool+`","arguments":`+args)
}

// standardHeaders returns the headers a conforming client sends with body:
// content type, accept, protocol version, Mcp-Method and, where the method
// names something, Mcp-Name. Values are taken from the body when it parses.
func standardHeaders(body string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set(HeaderProtocolVersion, protocol.Version2026_07_28)
	var m struct {
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal([]byte(body), &m) != nil || m.Method == "" {
		return h
	}
	h.Set(HeaderMethod, m.Method)
	if p := protocol.NameParam(m.Method); p != "" {
		var name string
		if json.Unmarshal(m.Params[p], &name) == nil {
			h.Set(HeaderName, name)
		}
	}
	return h
}

// newPost returns a request to a loopback-named host, as httptest would
// see it, with the standard headers for body.
func newPost(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
	r.Header = standardHeaders(body)
	return r
}

// wireError is the decoded shape of a response; ID is nil when the member
// is absent or null (checkErrorBody tells the two apart).
type wireError struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

// checkErrorBody asserts that body is a compact single-line JSON-RPC error
// with the code and the id (raw JSON; "" means the member must be absent).
func checkErrorBody(t *testing.T, header http.Header, body []byte, code int64, id string) wireError {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		t.Fatalf("error body is not JSON: %v\n%s", err, body)
	}
	if !bytes.Equal(compact.Bytes(), body) {
		t.Errorf("error body is not compact single-line JSON: %q", body)
	}
	var e wireError
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("decoding error body: %v", err)
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(body, &members)
	if raw, ok := members["id"]; ok {
		e.ID = &raw
	}
	if e.JSONRPC != "2.0" {
		t.Errorf("jsonrpc = %q", e.JSONRPC)
	}
	if e.Error == nil {
		t.Fatalf("body has no error member: %s", body)
	}
	if e.Error.Code != code {
		t.Errorf("error code = %d, want %d (%s)", e.Error.Code, code, body)
	}
	if e.Error.Message == "" {
		t.Errorf("error message is empty")
	}
	switch {
	case id == "" && e.ID != nil:
		t.Errorf("id = %s, want no id member", *e.ID)
	case id != "" && e.ID == nil:
		t.Errorf("no id member, want %s", id)
	case id != "" && string(*e.ID) != id:
		t.Errorf("id = %s, want %s", *e.ID, id)
	}
	return e
}

// sseFrame is one item read from an SSE stream: a comment or an event.
type sseFrame struct {
	Comment bool
	Event   string
	Data    string
}

// sseReader reads frames from an SSE body.
type sseReader struct{ br *bufio.Reader }

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReader(r)} }

// next returns the next comment or event. It fails on a line that is
// neither, so stray bytes on the wire are caught.
func (s *sseReader) next() (sseFrame, error) {
	var f sseFrame
	started := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if err == io.EOF && started {
				return f, io.ErrUnexpectedEOF
			}
			return f, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if started {
				return f, nil
			}
		case strings.HasPrefix(line, ":") && !started:
			f.Comment = true
			started = true
		case strings.HasPrefix(line, "event: "):
			f.Event, started = strings.TrimPrefix(line, "event: "), true
		case strings.HasPrefix(line, "data: "):
			f.Data, started = strings.TrimPrefix(line, "data: "), true
		default:
			return f, fmt.Errorf("unexpected SSE line %q", line)
		}
	}
}

// nextEvent skips comments and returns the next event's data.
func (s *sseReader) nextEvent() (string, error) {
	for {
		f, err := s.next()
		if err != nil {
			return "", err
		}
		if !f.Comment {
			if f.Event != "message" {
				return "", fmt.Errorf("event type %q, want message", f.Event)
			}
			return f.Data, nil
		}
	}
}

// parseSSE splits a complete SSE body into its events' data, failing on
// anything that is not an "event: message" with one data line.
func parseSSE(t *testing.T, body string) []string {
	t.Helper()
	r := newSSEReader(strings.NewReader(body))
	var out []string
	for {
		d, err := r.nextEvent()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("parsing SSE body: %v\n%q", err, body)
		}
		out = append(out, d)
	}
}

// stubHandler is a transport.Handler whose behaviour a test supplies.
type stubHandler struct {
	handle func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response
	notes  chan *jsonrpc.Message
}

func (h *stubHandler) Serve(ctx context.Context, r *transport.Request) (protocol.Result, error) {
	return transporttest.Serve(h.handle(ctx, r.Message, r.Notifier))
}

func (h *stubHandler) Receive(ctx context.Context, msg *jsonrpc.Message, sess transport.Session) {
	if h.notes != nil {
		h.notes <- msg
	}
}

func (h *stubHandler) ParamHeaders(string) []transport.HeaderParam { return nil }

func (h *stubHandler) Legacy() transport.Legacy { return nil }

// checkNoLeak fails the test if it leaves goroutines behind.
func checkNoLeak(t testing.TB) { leakcheck.Check(t) }

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
