package streamable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// liveServer serves h on a loopback listener and returns it with a client
// of its own; both are closed when the test ends.
func liveServer(t *testing.T, h http.Handler) (*httptest.Server, *http.Client) {
	t.Helper()
	ts := httptest.NewServer(h)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		ts.Close()
	})
	return ts, &http.Client{Transport: tr}
}

// send POSTs body with the standard headers.
func send(ctx context.Context, t *testing.T, c *http.Client, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = standardHeaders(body)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	return resp
}

// rawExchange writes a request of raw header lines to a fresh connection
// and reads the response, so header names go out exactly as written.
func rawExchange(t *testing.T, addr string, lines []string, body string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	req := "POST /mcp HTTP/1.1\r\n" + strings.Join(lines, "\r\n") +
		fmt.Sprintf("\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(body)) + body
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp, b
}

// TestWireHeaders sends requests as raw bytes to a loopback listener: the
// Host check of DNS-rebinding protection and header names in any case.
func TestWireHeaders(t *testing.T) {
	ts, _ := liveServer(t, NewHandler(newTestServer(), &Options{AllowedHosts: []string{"mcp.internal"}}))
	addr := ts.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	list := rpc("1", protocol.MethodToolsList, "")
	base := []string{"Content-Type: application/json", "Accept: application/json, text/event-stream"}
	for _, tc := range []struct {
		name   string
		lines  []string
		status int
		code   int64
	}{
		{"host evil", []string{"Host: evil.example.com", "Mcp-Method: tools/list"}, 403, protocol.CodeInvalidRequest},
		{"host evil with origin", []string{"Host: evil.example.com:" + port, "Origin: http://evil.example.com", "Mcp-Method: tools/list"}, 403, protocol.CodeInvalidRequest},
		{"host localhost", []string{"Host: localhost:" + port, "Mcp-Method: tools/list"}, 200, 0},
		{"host 127.0.0.1", []string{"Host: 127.0.0.1:" + port, "Origin: http://127.0.0.1:" + port, "Mcp-Method: tools/list"}, 200, 0},
		{"host [::1] other port", []string{"Host: [::1]:1", "Mcp-Method: tools/list"}, 200, 0},
		{"host allowed", []string{"Host: mcp.internal:" + port, "Mcp-Method: tools/list"}, 200, 0},
		{"method header lower case", []string{"Host: localhost", "mcp-method: tools/list"}, 200, 0},
		{"method header upper case", []string{"Host: localhost", "MCP-METHOD: tools/list"}, 200, 0},
		{"version header lower case", []string{"Host: localhost", "mcp-protocol-version: 2026-07-28", "Mcp-Method: tools/list"}, 200, 0},
		{"method value upper case", []string{"Host: localhost", "Mcp-Method: TOOLS/LIST"}, 400, protocol.CodeHeaderMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := append(append([]string(nil), tc.lines[:1]...), base...)
			lines = append(lines, tc.lines[1:]...)
			if !strings.Contains(strings.ToLower(strings.Join(lines, "\n")), "mcp-protocol-version:") {
				lines = append(lines, "MCP-Protocol-Version: 2026-07-28")
			}
			resp, body := rawExchange(t, addr, lines, list)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.code != 0 {
				id := "1"
				if tc.status == 403 {
					id = ""
				}
				checkErrorBody(t, resp.Header, body, tc.code, id)
			} else if !strings.Contains(string(body), `"result"`) {
				t.Errorf("no result: %s", body)
			}
		})
	}
}

// TestListen follows a subscriptions/listen stream: the acknowledgement,
// a tagged change, a filtered one, keep-alive comments and the graceful
// close.
func TestListen(t *testing.T) {
	for _, id := range []string{"7", `"sub-1"`} {
		t.Run(id, func(t *testing.T) {
			checkNoLeak(t)
			srv := newTestServer()
			ts, c := liveServer(t, NewHandler(srv, &Options{KeepAlive: 20 * time.Millisecond}))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp := send(ctx, t, c, ts.URL, rpc(id, protocol.MethodSubscriptionsListen, `"notifications":{"toolsListChanged":true}`))
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
				t.Fatalf("got %d %v", resp.StatusCode, resp.Header)
			}
			r := newSSEReader(resp.Body)
			tag := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}`
			expect := func(want string) {
				t.Helper()
				got, err := r.nextEvent()
				if err != nil {
					t.Fatalf("reading event: %v", err)
				}
				if got != want {
					t.Fatalf("event\n got %s\nwant %s", got, want)
				}
			}
			expect(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},` + tag + `}}`)

			// Prompt changes were not asked for: the tool change is next.
			srv.NotifyPromptsChanged()
			srv.NotifyResourcesChanged()
			srv.NotifyToolsChanged()
			expect(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + tag + `}}`)

			// A quiet stream carries comments only.
			for comments := 0; comments < 2; {
				f, err := r.next()
				if err != nil {
					t.Fatalf("reading keep-alive: %v", err)
				}
				if !f.Comment {
					t.Fatalf("unexpected event on a quiet stream: %+v", f)
				}
				comments++
			}

			srv.Close()
			last, err := r.nextEvent()
			if err != nil {
				t.Fatalf("reading closing result: %v", err)
			}
			var res struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					ResultType string                     `json:"resultType"`
					Meta       map[string]json.RawMessage `json:"_meta"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(last), &res); err != nil {
				t.Fatalf("closing result %s: %v", last, err)
			}
			if string(res.ID) != id || res.Result.ResultType != "complete" || string(res.Result.Meta[protocol.MetaSubscriptionID]) != id {
				t.Errorf("closing result = %s", last)
			}
			if _, err := r.nextEvent(); !errors.Is(err, io.EOF) {
				t.Errorf("after the closing result: %v, want EOF", err)
			}
		})
	}
}

// TestListenClientGone checks that a listen stream whose client goes away
// unsubscribes from the feed and leaves nothing running.
func TestListenClientGone(t *testing.T) {
	checkNoLeak(t)
	feed := server.NewMemoryFeed()
	srv := server.New(testInfo, &server.Options{Feed: feed})
	ts, c := liveServer(t, NewHandler(srv, &Options{KeepAlive: 10 * time.Millisecond}))
	ctx, cancel := context.WithCancel(context.Background())
	resp := send(ctx, t, c, ts.URL, rpc("1", protocol.MethodSubscriptionsListen, `"notifications":{}`))
	if _, err := newSSEReader(resp.Body).nextEvent(); err != nil {
		t.Fatalf("acknowledgement: %v", err)
	}
	if n := feed.Subscribers(); n != 1 {
		t.Fatalf("%d subscribers, want 1", n)
	}
	cancel()
	resp.Body.Close()
	eventually(t, "the subscription to end", func() bool { return feed.Subscribers() == 0 })
}

// lateWrites wraps a handler and counts the bytes written for a request
// after its context was cancelled.
type lateWrites struct {
	h    http.Handler
	late atomic.Int64
}

func (l *lateWrites) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.h.ServeHTTP(&lateWriter{ResponseWriter: w, ctx: r.Context(), late: &l.late}, r)
}

type lateWriter struct {
	http.ResponseWriter
	ctx  context.Context
	late *atomic.Int64
}

func (w *lateWriter) Write(b []byte) (int, error) {
	if w.ctx.Err() != nil {
		w.late.Add(int64(len(b)))
	}
	return w.ResponseWriter.Write(b)
}

func (w *lateWriter) WriteHeader(code int) {
	if w.ctx.Err() != nil {
		w.late.Add(1)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *lateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestCancelOnDisconnect closes the client side of a request, before and
// after its stream started: the handler's context is cancelled, nothing
// more is written for the request, and no goroutine is left.
func TestCancelOnDisconnect(t *testing.T) {
	note := jsonrpc.AppendNotification(nil, protocol.NotificationProgress, json.RawMessage(`{"progressToken":1,"progress":1}`))
	for _, streamFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream started %v", streamFirst), func(t *testing.T) {
			checkNoLeak(t)
			started := make(chan struct{})
			after := make(chan error, 1) // Notify's error once cancelled
			stub := &stubHandler{handle: func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
				if streamFirst {
					if err := n.Notify(note); err != nil {
						t.Errorf("Notify: %v", err)
					}
				}
				close(started)
				<-ctx.Done()
				after <- n.Notify(note)
				return &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"late":true}`)}
			}}
			lw := &lateWrites{h: NewHandler(stub, nil)}
			ts, c := liveServer(t, lw)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(rpc("1", protocol.MethodToolsList, "")))
				req.Header = standardHeaders(rpc("1", protocol.MethodToolsList, ""))
				resp, err := c.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				_, _ = newSSEReader(resp.Body).nextEvent()
				<-ctx.Done()
			}()
			<-started
			cancel()
			select {
			case err := <-after:
				if err == nil {
					t.Errorf("Notify after cancellation succeeded")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the handler's context was not cancelled")
			}
			<-done
			ts.Close()
			if n := lw.late.Load(); n != 0 {
				t.Errorf("%d bytes written after cancellation", n)
			}
		})
	}
}

// TestCancelToolOnDisconnect cancels a tools/call of the real core whose
// tool blocks until its context ends.
func TestCancelToolOnDisconnect(t *testing.T) {
	checkNoLeak(t)
	srv := server.New(testInfo, nil)
	started := make(chan struct{})
	stopped := make(chan error, 1)
	server.AddTool(srv, &protocol.Tool{Name: "block", Description: "Blocks until cancelled"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return "", ctx.Err()
		})
	ts, c := liveServer(t, NewHandler(srv, nil))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(callBody("1", "block", "{}")))
		req.Header = standardHeaders(callBody("1", "block", "{}"))
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("tool context ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tool's context was not cancelled")
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v, want context.Canceled", err)
	}
}

// TestSlowReader floods a stream whose client never reads: the write
// timeout breaks the stream, cancels the request and frees the handler.
func TestSlowReader(t *testing.T) {
	checkNoLeak(t)
	big := jsonrpc.AppendNotification(nil, protocol.NotificationMessage,
		json.RawMessage(`{"level":"info","data":"`+strings.Repeat("x", 32<<10)+`"}`))
	type outcome struct {
		notifyErr error
		ctxErr    error
		sent      int
	}
	returned := make(chan outcome, 1)
	stub := &stubHandler{handle: func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
		for i := 0; ; i++ {
			if err := n.Notify(big); err != nil {
				returned <- outcome{err, ctx.Err(), i}
				return nil
			}
		}
	}}
	ts, _ := liveServer(t, NewHandler(stub, &Options{WriteTimeout: 50 * time.Millisecond}))
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := rpc("1", protocol.MethodToolsList, "")
	if _, err := io.WriteString(conn, rawPost(body, len(body))+body); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-returned:
		if o.notifyErr == nil || o.ctxErr == nil {
			t.Errorf("handler returned with Notify error %v, context error %v", o.notifyErr, o.ctxErr)
		}
		if o.sent == 0 {
			t.Errorf("no notification was written before the stream broke")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler is still writing to a client that does not read")
	}
}

// TestNoStaleWriteDeadline sends an SSE response and, on the same
// keep-alive connection after longer than WriteTimeout, a small JSON one,
// which is written without a deadline of its own: the stream's must not
// outlive it (net/http clears a connection's write deadline after each
// response) and fail the answer.
func TestNoStaleWriteDeadline(t *testing.T) {
	checkNoLeak(t)
	note := jsonrpc.AppendNotification(nil, protocol.NotificationProgress, json.RawMessage(`{"progressToken":1,"progress":1}`))
	stub := &stubHandler{handle: func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
		if req.Method == protocol.MethodToolsCall {
			_ = n.Notify(note)
		}
		return &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"ok":true}`)}
	}}
	ts, c := liveServer(t, NewHandler(stub, &Options{WriteTimeout: 50 * time.Millisecond}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var reused atomic.Bool
	trace := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused.Store(info.Reused) }})
	resp := send(trace, t, c, ts.URL, rpc("1", protocol.MethodToolsCall, `"name":"x"`))
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("first response %v %s (%v)", resp.Header, b, err)
	}
	time.Sleep(150 * time.Millisecond)
	resp = send(trace, t, c, ts.URL, rpc("2", protocol.MethodToolsList, ""))
	b, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.Contains(string(b), `"ok":true`) {
		t.Fatalf("second response: %s (%v)", b, err)
	}
	if !reused.Load() {
		t.Fatal("the second request did not reuse the connection; the test proves nothing")
	}
}

// rawPost returns the head of an HTTP/1.1 POST of body with the standard
// headers, announcing contentLength bytes of body.
func rawPost(body string, contentLength int) string {
	var req strings.Builder
	req.WriteString("POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
	for k, vs := range standardHeaders(body) {
		fmt.Fprintf(&req, "%s: %s\r\n", k, vs[0])
	}
	fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n", contentLength)
	return req.String()
}

// TestListenLargeAcknowledgement: the largest filter the server accepts
// (1,000 URIs of 1,000 bytes: a 1 MB acknowledgement) is acknowledged
// whole; the first write of a stream is never dropped for its size.
func TestListenLargeAcknowledgement(t *testing.T) {
	checkNoLeak(t)
	srv := newTestServer()
	srv.AddResource(&protocol.Resource{URI: "test://r", Name: "r"}, server.TextResource("text/plain", "r"))
	ts, c := liveServer(t, NewHandler(srv, nil))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uris := make([]string, 1000)
	for i := range uris {
		uris[i] = `"test://` + fmt.Sprintf("%04d", i) + strings.Repeat("x", 988) + `"`
	}
	body := rpc("1", protocol.MethodSubscriptionsListen, `"notifications":{"resourceSubscriptions":[`+strings.Join(uris, ",")+`]}`)
	resp := send(ctx, t, c, ts.URL, body)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	ack, err := newSSEReader(resp.Body).nextEvent()
	if err != nil {
		t.Fatalf("reading the acknowledgement: %v", err)
	}
	if !strings.Contains(ack, "notifications/subscriptions/acknowledged") || strings.Count(ack, `"test://`) != 1000 {
		t.Fatalf("acknowledgement of %d bytes names %d URIs", len(ack), strings.Count(ack, `"test://`))
	}
}

// TestShutdownEndsListenStreams: http.Server.Shutdown does not wait for
// open listen streams: the handler's hook ends them.
func TestShutdownEndsListenStreams(t *testing.T) {
	checkNoLeak(t)
	srv := newTestServer()
	defer srv.Close()
	ts, c := liveServer(t, NewHandler(srv, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp := send(ctx, t, c, ts.URL, rpc("1", protocol.MethodSubscriptionsListen, `"notifications":{"toolsListChanged":true}`))
	defer resp.Body.Close()
	r := newSSEReader(resp.Body)
	if ack, err := r.nextEvent(); err != nil || !strings.Contains(ack, "acknowledged") {
		t.Fatalf("acknowledgement: %q %v", ack, err)
	}
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if err := ts.Config.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown with a listen stream open: %v", err)
	}
	for {
		if _, err := r.next(); err != nil {
			break // the stream ended
		}
	}
}
