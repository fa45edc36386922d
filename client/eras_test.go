package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/sse"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestConnectURLFallsBackToSSE: a URL that only an HTTP+SSE server
// answers gets the whole chain once (a modern request, initialize, the
// GET), and the next ConnectURL goes to the HTTP+SSE transport at once.
func TestConnectURLFallsBackToSSE(t *testing.T) {
	srv := server.New(protocol.Implementation{Name: "old", Version: "1"}, &server.Options{Legacy: legacy.Options{ModernDisabled: true, Versions: []string{protocol.Version2024_11_05}}})
	t.Cleanup(func() { srv.Close() })
	server.AddTool(srv, &protocol.Tool{Name: "t"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) { return "", nil })
	rec := &recorder{next: sse.NewHandler(srv, nil)}
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c := client.New(clientInfo, nil)
	for i := range 2 {
		s, err := c.ConnectURL(ctx, ts.URL+"/sse", nil)
		if err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
		if s.Era() != client.EraLegacy || s.Transport() != client.TransportSSE || s.ProtocolVersion() != protocol.Version2024_11_05 {
			t.Errorf("connect %d: %v %s %s", i, s.Era(), s.Transport(), s.ProtocolVersion())
		}
		if _, err := s.ListTools(ctx, nil); err != nil {
			t.Errorf("connect %d: tools/list: %v", i, err)
		}
		s.Close()
	}
	// The probes of the first connection only: one server/discover, and
	// one initialize on the SSE URL itself (refused), besides the two
	// sessions' initialize on the message endpoint.
	if n := rec.count(protocol.MethodDiscover); n != 1 {
		t.Errorf("%d server/discover probes, want 1", n)
	}
	if n := rec.count(protocol.MethodInitialize); n != 3 {
		t.Errorf("%d initialize POSTs, want 3 (one refused on the stream URL, one per session)", n)
	}
}

// TestConnectURLNotSSE: when initialize is refused and the URL is no
// HTTP+SSE server either, the error is initialize's refusal.
func TestConnectURLNotSSE(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	_, err := client.New(clientInfo, nil).ConnectURL(context.Background(), ts.URL+"/mcp", nil)
	var se *transport.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusNotFound || errors.Is(err, sse.ErrNotSSE) {
		t.Errorf("err %v, want initialize's 404", err)
	}
}

// TestConnectURLModernPinnedNoFallback: a client pinned to the modern era
// never opens a session, over either transport.
func TestConnectURLModernPinnedNoFallback(t *testing.T) {
	srv := server.New(protocol.Implementation{Name: "old", Version: "1"}, &server.Options{Legacy: legacy.Options{ModernDisabled: true}})
	t.Cleanup(func() { srv.Close() })
	rec := &recorder{next: streamable.NewHandler(srv, nil)}
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close)
	if _, err := client.New(clientInfo, &client.Options{Era: client.EraModern}).ConnectURL(context.Background(), ts.URL+"/mcp", nil); err == nil {
		t.Fatal("a modern-pinned client connected to a sessions-only server")
	}
	if n := rec.count(protocol.MethodInitialize); n != 0 {
		t.Errorf("%d initialize sent by a modern-pinned client", n)
	}
}

// TestExtensionsDeclared: the extensions of client.Options reach the
// server in both eras.
func TestExtensionsDeclared(t *testing.T) {
	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			srv := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
			t.Cleanup(func() { srv.Close() })
			var seen map[string]protocol.Object
			server.AddTool(srv, &protocol.Tool{Name: "caps"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
				seen = req.ClientCapabilities().Extensions
				return "ok", nil
			})
			ts := httptest.NewServer(streamable.NewHandler(srv, nil))
			t.Cleanup(ts.Close)
			c := client.New(clientInfo, &client.Options{Era: era, Extensions: map[string]protocol.Object{
				"io.modelcontextprotocol/ui": {"mimeTypes": []byte(`["text/html;profile=mcp-app"]`)},
				"com.example/none":           nil,
			}})
			s, err := c.ConnectURL(context.Background(), ts.URL+"/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.CallTool(context.Background(), "caps", nil, nil); err != nil {
				t.Fatal(err)
			}
			if string(seen["io.modelcontextprotocol/ui"]["mimeTypes"]) != `["text/html;profile=mcp-app"]` || seen["com.example/none"] == nil {
				t.Errorf("extensions seen by the server: %v", seen)
			}
		})
	}
}
