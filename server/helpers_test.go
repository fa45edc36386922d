package server

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// testMeta is a valid modern _meta with the given client capabilities.
func testMeta(caps string) map[string]json.RawMessage {
	return map[string]json.RawMessage{
		protocol.MetaProtocolVersion:    json.RawMessage(`"2026-07-28"`),
		protocol.MetaClientCapabilities: json.RawMessage(caps),
	}
}

// params builds request params: fields plus a valid _meta.
func params(t *testing.T, fields map[string]any, caps string) json.RawMessage {
	t.Helper()
	m := map[string]any{}
	for k, v := range fields {
		m[k] = v
	}
	if _, ok := m["_meta"]; !ok {
		m["_meta"] = testMeta(caps)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// collector records notifications.
type collector struct {
	mu   sync.Mutex
	msgs []json.RawMessage
}

func (c *collector) Notify(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, append(json.RawMessage(nil), b...))
	return nil
}

func (c *collector) all() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.msgs...)
}

// do sends one request and returns the response.
func do(t *testing.T, s *Server, method string, p json.RawMessage) *jsonrpc.Response {
	t.Helper()
	return doWith(t, context.Background(), s, method, p, &collector{})
}

func doWith(t *testing.T, ctx context.Context, s *Server, method string, p json.RawMessage, n *collector) *jsonrpc.Response {
	t.Helper()
	msg := &jsonrpc.Message{ID: jsonrpc.IntID(7), Method: method, Params: p}
	return handle(s, ctx, msg, n)
}

// status is the HTTP status Streamable HTTP answers a request with.
func status(t *testing.T, s *Server, method string, p json.RawMessage) int {
	t.Helper()
	msg := &jsonrpc.Message{ID: jsonrpc.IntID(7), Method: method, Params: p}
	_, err := s.Serve(context.Background(), &transport.Request{Message: msg, Kind: transport.Classify(msg, nil), Cancel: func() {}})
	return streamable.Status(err)
}

// handle serves one request as a transport does and makes its response.
func handle(s *Server, ctx context.Context, msg *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := s.Serve(ctx, &transport.Request{Message: msg, Kind: transport.Classify(msg, nil), Notifier: n, Cancel: cancel})
	return transport.Respond(ctx, msg.ID, res, err)
}

// result decodes a successful response's result into a generic map.
func result(t *testing.T, r *jsonrpc.Response) map[string]any {
	t.Helper()
	if r == nil {
		t.Fatal("no response")
	}
	if r.Error != nil {
		t.Fatalf("unexpected error %d %s %s", r.Error.Code, r.Error.Message, r.Error.Data)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	return m
}

// wantError asserts an error response with the code.
func wantError(t *testing.T, r *jsonrpc.Response, code int64) *jsonrpc.Error {
	t.Helper()
	if r == nil || r.Error == nil {
		var res string
		if r != nil {
			res = string(r.Result)
		}
		t.Fatalf("want error %d, got result %s", code, res)
	}
	if r.Error.Code != code {
		t.Fatalf("error code = %d (%s), want %d", r.Error.Code, r.Error.Message, code)
	}
	return r.Error
}

func newTestServer(opts *Options) *Server {
	return New(protocol.Implementation{Name: "test", Version: "1.0.0"}, opts)
}
