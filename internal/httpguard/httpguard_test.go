package httpguard

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		accept string // "|" separates header lines; "-" means no header
		want   Acceptance
	}{
		{"-", Acceptance{JSON: true, SSE: true}},
		{"application/json", Acceptance{JSON: true}},
		{"text/event-stream", Acceptance{SSE: true, PreferSSE: true}},
		{"application/json, text/event-stream", Acceptance{JSON: true, SSE: true}},
		{"text/event-stream, application/json", Acceptance{JSON: true, SSE: true, PreferSSE: true}},
		{"text/event-stream|application/json", Acceptance{JSON: true, SSE: true, PreferSSE: true}},
		{"*/*", Acceptance{JSON: true, SSE: true}},
		{"text/*", Acceptance{SSE: true, PreferSSE: true}},
		{"application/*", Acceptance{JSON: true}},
		{"application/json;q=0, text/event-stream", Acceptance{SSE: true, PreferSSE: true}},
		{"application/json;q=0.2, text/event-stream;q=0.8", Acceptance{JSON: true, SSE: true, PreferSSE: true}},
		{"application/json;q=0.8, text/event-stream;q=0.2", Acceptance{JSON: true, SSE: true}},
		{"APPLICATION/JSON", Acceptance{JSON: true}},
		{"application/json; charset=utf-8", Acceptance{JSON: true}},
		{"image/png", Acceptance{}},
		{"", Acceptance{}},
		{" , ,", Acceptance{}},
		{"text/event-stream;q=0", Acceptance{}},
		{"*/*;q=0", Acceptance{}},
		{"*/*, text/*;q=0", Acceptance{JSON: true}},
		{"text/*;q=0, */*", Acceptance{JSON: true}},
		{"*/*, application/json;q=0", Acceptance{SSE: true, PreferSSE: true}},
		{"*/*;q=0.5, text/*;q=0.9", Acceptance{JSON: true, SSE: true, PreferSSE: true}},
		{"text/*;q=0.9, text/event-stream;q=0.1, application/json;q=0.5", Acceptance{JSON: true, SSE: true}},
		{"application/json;q=0.1, application/json;q=0.9, text/event-stream;q=0.5", Acceptance{JSON: true, SSE: true}},
		{"application/json;q=bogus", Acceptance{JSON: true}},
		{"application/json;;, text/event-stream", Acceptance{SSE: true, PreferSSE: true}},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			var values []string
			if tc.accept != "-" {
				values = strings.Split(tc.accept, "|")
			}
			if got := Negotiate(values); got != tc.want {
				t.Errorf("Negotiate(%q) = %+v, want %+v", values, got, tc.want)
			}
		})
	}
}

func TestOriginPolicy(t *testing.T) {
	for _, tc := range []struct {
		list   []string
		origin string
		want   bool
	}{
		{nil, "http://localhost", true},
		{nil, "http://localhost:3000", true},
		{nil, "https://LOCALHOST:3000/", true},
		{nil, "http://app.localhost", true},
		{nil, "http://127.0.0.1:8080", true},
		{nil, "http://127.1.2.3", true},
		{nil, "http://[::1]:8080", true},
		{nil, "http://evil.example.com", false},
		{nil, "http://localhost.evil.example.com", false},
		{nil, "http://127.0.0.1.nip.io", false},
		{nil, "ws://localhost", false},
		{nil, "null", false},
		{nil, "http://", false},
		{nil, "%zz", false},
		{[]string{"https://app.example.com"}, "https://app.example.com", true},
		{[]string{"https://app.example.com"}, "https://app.example.com/", true},
		{[]string{"https://app.example.com"}, "http://app.example.com", false},
		{[]string{"https://App.Example.com/"}, "https://app.example.COM", true},
		{[]string{"*"}, "https://anything.example", true},
	} {
		if got := NewOriginPolicy(tc.list).Allowed(tc.origin); got != tc.want {
			t.Errorf("%v allowed(%q) = %v, want %v", tc.list, tc.origin, got, tc.want)
		}
	}
}

func TestIsJSONContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                true,
		"application/json; charset=utf-8": true,
		"Application/Json":                true,
		"":                                false,
		"text/plain":                      false,
		"application/json-seq":            false,
		"application/jsonx":               false,
		"application/json;":               true,
		"application/json; =":             false,
		"application/*":                   false,
	} {
		if got := IsJSONContentType(ct); got != want {
			t.Errorf("IsJSONContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestHostPolicy(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8080}
	for _, tc := range []struct {
		list []string
		on   net.Addr // nil: not served by net/http
		host string
		want bool
	}{
		{nil, loopback, "localhost:8080", true},
		{nil, loopback, "127.0.0.1:8080", true},
		{nil, loopback, "[::1]:8080", true},
		{nil, loopback, "app.localhost", true},
		{nil, loopback, "evil.example.com", false},
		{nil, loopback, "evil.example.com:8080", false},
		{nil, nil, "evil.example.com", false},
		{nil, public, "evil.example.com", true},
		{[]string{"mcp.example.com"}, loopback, "mcp.example.com:8080", true},
		{[]string{"mcp.example.com:8080"}, loopback, "MCP.example.com:8080", true},
		{[]string{"mcp.example.com:9090"}, loopback, "mcp.example.com:8080", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = tc.host
		if tc.on != nil {
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.on))
		}
		if got := NewHostPolicy(tc.list).Allowed(r); got != tc.want {
			t.Errorf("%v on %v: Allowed(%q) = %v, want %v", tc.list, tc.on, tc.host, got, tc.want)
		}
	}
}

// TestShutdownPerServer: a server shutting down ends the streams it
// serves, and only those: the same handler served by another server, or
// by a server started after, keeps its streams.
func TestShutdownPerServer(t *testing.T) {
	sd := NewShutdown()
	ended := make(chan string, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Watched before the client sees the stream, as the transports
		// do: a server whose Shutdown began before its first Watch
		// registered nothing to end the stream with.
		watch := sd.Watch(r)
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case <-watch.Done():
			ended <- r.URL.Path
		case <-r.Context().Done():
		}
	})
	start := func() (*httptest.Server, *http.Response) {
		ts := httptest.NewServer(h)
		resp, err := ts.Client().Get(ts.URL + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		return ts, resp
	}
	a, ra := start()
	b, rb := start()
	defer func() {
		rb.Body.Close()
		b.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Config.Shutdown(ctx); err != nil {
		t.Fatalf("shutting a down: %v", err)
	}
	ra.Body.Close()
	if got := <-ended; got != "/stream" {
		t.Fatalf("ended %q", got)
	}
	// A server started after a's shutdown, and b, keep their streams.
	c, rc := start()
	defer func() {
		rc.Body.Close()
		c.Close()
	}()
	select {
	case p := <-ended:
		t.Fatalf("a stream of another server ended (%s)", p)
	case <-time.After(200 * time.Millisecond):
	}
}
