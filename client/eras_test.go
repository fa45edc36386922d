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
	"github.com/mcpkit/mcpkit/transport/inmemory"
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

// TestElicitationComplete: a 2025-11-25 server's URL elicitation carries
// its elicitationId to the handler, and its completion notification
// reaches OnElicitationComplete.
func TestElicitationComplete(t *testing.T) {
	srv := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	t.Cleanup(func() { srv.Close() })
	server.AddTool(srv, &protocol.Tool{Name: "signin"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		res, err := req.Elicit("signin", &protocol.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/signin", ElicitationID: "e-1"})
		if err != nil {
			return "", err
		}
		if err := req.ElicitationComplete("e-1"); err != nil {
			return "", err
		}
		return res.Action, nil
	})
	var asked []string
	completed := make(chan string, 1)
	c := client.New(clientInfo, &client.Options{
		Era:              client.EraLegacy,
		ElicitationModes: []string{"url"},
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			asked = append(asked, p.Mode+" "+p.URL+" "+p.ElicitationID)
			return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
		},
		OnElicitationComplete: func(id string) { completed <- id },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, inmemory.New(srv, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "signin", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*protocol.TextContent).Text; got != protocol.ElicitAccept {
		t.Errorf("result %q", got)
	}
	if len(asked) != 1 || asked[0] != "url https://example.com/signin e-1" {
		t.Errorf("the handler was asked %q", asked)
	}
	select {
	case id := <-completed:
		if id != "e-1" {
			t.Errorf("completed %q", id)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/elicitation/complete")
	}
}

// TestHeaderlessRevisions: sessions of revisions before 2025-06-18 send no
// MCP-Protocol-Version header (it came in 2025-06-18); later ones do.
func TestHeaderlessRevisions(t *testing.T) {
	for _, tc := range []struct{ version, header string }{
		{protocol.Version2024_11_05, ""},
		{protocol.Version2025_03_26, ""},
		{protocol.Version2025_06_18, protocol.Version2025_06_18},
	} {
		t.Run(tc.version, func(t *testing.T) {
			srv := server.New(protocol.Implementation{Name: "s", Version: "1"}, &server.Options{Legacy: legacy.Options{ModernDisabled: true, Versions: []string{tc.version}}})
			t.Cleanup(func() { srv.Close() })
			server.AddTool(srv, &protocol.Tool{Name: "t"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) { return "", nil })
			hs := serveHTTP(t, srv)
			s, err := client.New(clientInfo, nil).ConnectURL(context.Background(), hs.ts.URL+"/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.ProtocolVersion() != tc.version {
				t.Fatalf("negotiated %s", s.ProtocolVersion())
			}
			if _, err := s.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			posts := hs.rec.posts(protocol.MethodToolsList)
			if len(posts) != 1 || posts[0].Header.Get(streamable.HeaderProtocolVersion) != tc.header {
				t.Errorf("tools/list sent MCP-Protocol-Version %q, want %q", posts[0].Header.Get(streamable.HeaderProtocolVersion), tc.header)
			}
		})
	}
}
