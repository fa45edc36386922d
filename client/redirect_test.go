package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/conformance/everything"
)

// An MCP endpoint that redirects to another origin does not get the
// client's messages sent there (they carry tool arguments and session
// ids); a redirect within the origin is followed.
func TestRedirectsStayOnOrigin(t *testing.T) {
	core := everything.New(nil)
	t.Cleanup(func() { core.Close() })
	real := serveHTTP(t, core)

	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		real.rec.ServeHTTP(w, r)
	}))
	t.Cleanup(other.Close)

	mux := http.NewServeMux()
	mux.HandleFunc("/cross", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	mux.Handle("/mcp", real.rec)
	front := httptest.NewServer(mux)
	t.Cleanup(func() {
		front.CloseClientConnections()
		front.Close()
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := client.New(clientInfo, nil)
	if s, err := c.ConnectURL(ctx, front.URL+"/cross", nil); err == nil {
		s.Close()
		t.Fatal("connected through a redirect to another origin")
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}

	s, err := c.ConnectURL(ctx, front.URL+"/same", nil)
	if err != nil {
		t.Fatalf("a same-origin redirect: %v", err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "echo", map[string]any{"text": "hi"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("call through a same-origin redirect: %v %+v", err, res)
	}
}
