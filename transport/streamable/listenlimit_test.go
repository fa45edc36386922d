package streamable

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// TestListenStreamsPerPrincipal: one principal may hold a hundredth of the
// server's listen streams (here 1); one more of theirs is answered 503
// with Retry-After while another principal's is served.
func TestListenStreamsPerPrincipal(t *testing.T) {
	checkNoLeak(t)
	srv := server.New(testInfo, &server.Options{MaxListenStreams: 100})
	defer srv.Close()
	authn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(transport.WithPrincipal(r.Context(), r.Header.Get("X-Principal")))
		NewHandler(srv, nil).ServeHTTP(w, r)
	})
	ts, c := liveServer(t, authn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listen := func(principal string) *http.Response {
		body := rpc("1", protocol.MethodSubscriptionsListen, `"notifications":{"toolsListChanged":true}`)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header = standardHeaders(body)
		req.Header.Set("X-Principal", principal)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	acknowledged := func(resp *http.Response) {
		t.Helper()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if ack, err := newSSEReader(resp.Body).nextEvent(); err != nil || !strings.Contains(ack, "acknowledged") {
			t.Fatalf("acknowledgement: %q %v", ack, err)
		}
	}
	first := listen("alice")
	defer first.Body.Close()
	acknowledged(first)
	second := listen("alice")
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable || second.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "of yours") {
		t.Fatalf("alice's second stream: %d (Retry-After %q) %s", second.StatusCode, second.Header.Get("Retry-After"), body)
	}
	bob := listen("bob")
	defer bob.Body.Close()
	acknowledged(bob)
}
