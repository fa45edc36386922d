package sse

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// slowCall is a call of the slow tool whose _meta carries pad bytes.
func slowCall(id string, pad int) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"slow","_meta":{"pad":"` + strings.Repeat("x", pad) + `"}}}`
}

// postStatus POSTs body to url and returns the answer's status, its
// Retry-After and body.
func postStatus(t *testing.T, hs interface{ Client() *http.Client }, url string, body io.Reader, n int64) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, body)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = n
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

func (x *Handler) streamBudgetUsed(endpoint string) int64 {
	i := strings.Index(endpoint, "sessionId=")
	st := x.lookup(endpoint[i+len("sessionId="):])
	if st == nil {
		return -1
	}
	return st.budget.Used()
}

// TestStreamBudget: the messages of a stream not yet answered hold at most
// MaxStreamBytes; a POST beyond it is refused with 429 and Retry-After,
// unread, and is taken again once a request is finished.
func TestStreamBudget(t *testing.T) {
	checkLeaks(t)
	srv, p := testServer(t)
	x := NewHandler(srv, &Options{MaxStreamBytes: 64 << 10})
	hs := serveHTTP(t, x)
	s := openStream(t, hs, "/sse")
	s.initialize()
	for _, id := range []string{"a", "b"} {
		if st, b := s.post(slowCall(id, 20<<10)); st != http.StatusAccepted {
			t.Fatalf("POST %s: %d %s", id, st, b)
		}
		<-p.started
	}
	body := slowCall("c", 20<<10)
	st, retry, b := postStatus(t, hs, s.endpoint, strings.NewReader(body), int64(len(body)))
	if st != http.StatusTooManyRequests || retry == "" || errorCode(b) != protocol.CodeInternalError {
		t.Fatalf("a POST beyond the stream's budget: %d (Retry-After %q) %s", st, retry, b)
	}
	// A cancellation fits, and frees its request's bytes.
	if st, b := s.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`); st != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", st, b)
	}
	<-p.cancelled
	waitUntil(t, "the cancelled request's bytes", func() bool { return x.streamBudgetUsed(s.endpoint) < 40<<10 })
	if st, b := s.post(body); st != http.StatusAccepted {
		t.Fatalf("POST after the cancellation: %d %s", st, b)
	}
	<-p.started
	s.close()
	waitUntil(t, "the handler's budget to be free", func() bool { return x.budget.Used() == 0 })
}

// TestHandlerBudget: all the streams together hold at most
// MaxBufferedBytes; a POST beyond it is refused with 503 and Retry-After,
// though its stream has room.
func TestHandlerBudget(t *testing.T) {
	checkLeaks(t)
	srv, p := testServer(t)
	x := NewHandler(srv, &Options{MaxStreamBytes: 64 << 10, MaxBufferedBytes: 80 << 10})
	hs := serveHTTP(t, x)
	a, b := openStream(t, hs, "/sse"), openStream(t, hs, "/sse")
	a.initialize()
	b.initialize()
	for i, s := range []*rawStream{a, a, b} {
		if st, body := s.post(slowCall(strconv.Itoa(i), 20<<10)); st != http.StatusAccepted {
			t.Fatalf("POST %d: %d %s", i, st, body)
		}
		<-p.started
	}
	body := slowCall("more", 20<<10)
	st, retry, resp := postStatus(t, hs, b.endpoint, strings.NewReader(body), int64(len(body)))
	if st != http.StatusServiceUnavailable || retry == "" || errorCode(resp) != protocol.CodeInternalError {
		t.Fatalf("a POST beyond the handler's budget: %d (Retry-After %q) %s", st, retry, resp)
	}
	a.close()
	waitUntil(t, "the closed stream's bytes", func() bool { return x.budget.Used() < 40<<10 })
	if st, resp := b.post(body); st != http.StatusAccepted {
		t.Fatalf("POST once the other stream closed: %d %s", st, resp)
	}
	<-p.started
	b.close()
	waitUntil(t, "the handler's budget to be free", func() bool { return x.budget.Used() == 0 })
}

// TestBodyBeingReadCounts: a body counts against the budgets from before
// it is read, so POSTs that are still sending their bodies cannot make
// the server hold more than the budget.
func TestBodyBeingReadCounts(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	x := NewHandler(srv, &Options{MaxStreamBytes: 64 << 10})
	hs := serveHTTP(t, x)
	s := openStream(t, hs, "/sse")
	s.initialize()
	slow := slowCall("big", 40<<10)
	pr, pw := io.Pipe()
	first := make(chan int, 1)
	go func() {
		st, _, _ := postStatus(t, hs, s.endpoint, pr, int64(len(slow)))
		first <- st
	}()
	if _, err := io.WriteString(pw, slow[:1000]); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the first body's bytes to be taken", func() bool { return x.streamBudgetUsed(s.endpoint) >= 40<<10 })
	other := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("y", 30<<10) + `"}}}`
	if st, retry, b := postStatus(t, hs, s.endpoint, strings.NewReader(other), int64(len(other))); st != http.StatusTooManyRequests || retry == "" {
		t.Fatalf("a POST beside a body being read: %d (Retry-After %q) %s", st, retry, b)
	}
	if _, err := io.WriteString(pw, slow[1000:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if st := <-first; st != http.StatusAccepted {
		t.Fatalf("the first POST: %d", st)
	}
	// A body of unknown length is taken a chunk at a time.
	pr2, pw2 := io.Pipe()
	go func() {
		io.WriteString(pw2, other)
		pw2.Close()
	}()
	if st, retry, b := postStatus(t, hs, s.endpoint, pr2, -1); st != http.StatusTooManyRequests || retry == "" {
		t.Fatalf("a chunked POST beyond the budget: %d (Retry-After %q) %s", st, retry, b)
	}
}

// TestStreamsPerPrincipal: one principal may open a hundredth of
// MaxStreams (here 3) by default, callers without a principal share
// MaxStreams, and MaxStreamsPerPrincipal, when set, applies to all.
func TestStreamsPerPrincipal(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, withPrincipal(NewHandler(srv, &Options{MaxStreams: 300})))
	var alice []*rawStream
	for range 3 {
		alice = append(alice, openStream(t, hs, "/sse", "X-Principal", "alice"))
	}
	if st, retry := getStatus(t, hs.URL+"/sse", "alice"); st != http.StatusTooManyRequests || retry == "" {
		t.Fatalf("alice's fourth stream: %d (Retry-After %q)", st, retry)
	}
	openStream(t, hs, "/sse", "X-Principal", "bob")
	for range 4 {
		openStream(t, hs, "/sse")
	}
	alice[0].close()
	waitUntil(t, "alice's stream to end", func() bool {
		st, _ := getStatus(t, hs.URL+"/sse", "alice")
		return st == http.StatusOK
	})

	hs2 := serveHTTP(t, withPrincipal(NewHandler(srv, &Options{MaxStreamsPerPrincipal: 1})))
	openStream(t, hs2, "/sse")
	if st, _ := getStatus(t, hs2.URL+"/sse", ""); st != http.StatusTooManyRequests {
		t.Fatalf("a second anonymous stream with MaxStreamsPerPrincipal 1: %d", st)
	}
}

// getStatus opens a stream as principal and returns the answer's status
// and Retry-After; a stream opened is closed at once.
func getStatus(t *testing.T, url, principal string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	if principal != "" {
		req.Header.Set("X-Principal", principal)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// TestPostAuthorizedPerMessage: each POSTed message is served with its
// own POST's principal and scopes, not the GET's: a POST carrying a token
// without the write scope, on a stream opened with one that had it, does
// not see or run the tool that needs it.
func TestPostAuthorizedPerMessage(t *testing.T) {
	checkLeaks(t)
	srv := server.New(protocol.Implementation{Name: "scoped", Version: "1"}, nil)
	t.Cleanup(func() { srv.Close() })
	server.AddTool(srv, &protocol.Tool{Name: "read"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "read", nil
	})
	server.AddTool(srv, &protocol.Tool{Name: "write"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "written", nil
	}, server.RequireScopes("w"))
	// As authentication middleware would: the principal and the scopes of
	// each request's credentials.
	authn := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := transport.WithPrincipal(r.Context(), r.Header.Get("X-Principal"))
			ctx = server.WithScopes(ctx, strings.Fields(r.Header.Get("X-Scopes")))
			h.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	hs := serveHTTP(t, authn(NewHandler(srv, nil)))
	rw := []string{"X-Principal", "alice", "X-Scopes", "r w"}
	ro := []string{"X-Principal", "alice", "X-Scopes", "r"}
	s := openStream(t, hs, "/sse", rw...)
	s.initialize(rw...)

	s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ro...)
	if m := s.message(); !strings.Contains(m, `"name":"read"`) || strings.Contains(m, `"name":"write"`) {
		t.Errorf("tools/list with the read scope only: %s", m)
	}
	s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write"}}`, ro...)
	if m := s.message(); strings.Contains(m, "written") || !strings.Contains(m, `"error"`) {
		t.Errorf("write with the read scope only: %s", m)
	}
	s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write"}}`, rw...)
	if m := s.message(); !strings.Contains(m, "written") {
		t.Errorf("write with the write scope: %s", m)
	}
	s.post(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, rw...)
	if m := s.message(); !strings.Contains(m, `"name":"write"`) {
		t.Errorf("tools/list with the write scope: %s", m)
	}
}

// waitUntil polls cond until it holds, failing after wait.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
