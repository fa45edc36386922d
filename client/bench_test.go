package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// echoConn is a modern server reduced to fixed answers, answering on the
// calling goroutine: what a call costs the client alone.
type echoConn struct{}

var (
	echoDiscover = json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}`)
	echoResult   = json.RawMessage(`{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`)
)

func (echoConn) Call(ctx context.Context, c *transport.Call, onMessage func(*jsonrpc.Message)) (*jsonrpc.Message, error) {
	if c.Message.Method == protocol.MethodDiscover {
		return &jsonrpc.Message{ID: c.Message.ID, Result: echoDiscover}, nil
	}
	return &jsonrpc.Message{ID: c.Message.ID, Result: echoResult}, nil
}
func (echoConn) Send(context.Context, []byte, string) error { return nil }
func (echoConn) Inbound(func(*jsonrpc.Message))             {}
func (echoConn) CarriesHeaders() bool                       { return false }
func (echoConn) Close() error                               { return nil }

// BenchmarkCallTool measures the client's side of one tools/call against
// a server that answers at once (no transport, no server work).
func BenchmarkCallTool(b *testing.B) {
	ctx := context.Background()
	s, err := client.New(clientInfo, &client.Options{Era: client.EraModern}).Connect(ctx, echoConn{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	args := map[string]any{"text": "hi"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.CallTool(ctx, "echo", args, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallToolMiddleware is BenchmarkCallTool through a middleware
// that only passes the call on, and with a trace context in _meta.
func BenchmarkCallToolMiddleware(b *testing.B) {
	ctx := context.Background()
	pass := client.Middleware{Call: func(next client.CallFunc) client.CallFunc { return next }}
	s, err := client.New(clientInfo, &client.Options{Era: client.EraModern, Middleware: []client.Middleware{pass}}).Connect(ctx, echoConn{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	args := map[string]any{"text": "hi"}
	for _, bc := range []struct {
		name string
		o    *client.CallOptions
	}{
		{"plain", nil},
		{"traceparent", &client.CallOptions{Meta: map[string]json.RawMessage{"traceparent": json.RawMessage(traceparent)}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.CallTool(ctx, "echo", args, bc.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
