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
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// TestTakeoverShutdown serves a listen stream from a real http.Server:
// Shutdown, which does not know hijacked connections, still ends it (the
// handler registered CloseStreams), and nothing is left running.
func TestTakeoverShutdown(t *testing.T) {
	checkNoLeak(t)
	feed := server.NewMemoryFeed()
	srv := server.New(testInfo, &server.Options{Feed: feed})
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: NewHandler(srv, nil)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp := send(ctx, t, &http.Client{Transport: tr}, "http://"+ln.Addr().String()+"/", rpc("1", protocol.MethodSubscriptionsListen, `"notifications":{}`))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("got %d %v", resp.StatusCode, resp.Header)
	}
	r := newSSEReader(resp.Body)
	if _, err := r.nextEvent(); err != nil {
		t.Fatalf("acknowledgement: %v", err)
	}
	if err := hs.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := r.nextEvent(); !errors.Is(err, io.EOF) {
		t.Fatalf("after Shutdown: %v, want the end of the stream", err)
	}
	eventually(t, "the subscription to end", func() bool { return feed.Subscribers() == 0 })
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve = %v", err)
	}
}

// TestTakeoverHeadersAndErrors checks what goes out on a taken-over
// connection: headers a middleware set, the SSE head with chunked
// coding, and a plain JSON answer with its length when the request fails
// before the stream starts.
func TestTakeoverHeadersAndErrors(t *testing.T) {
	checkNoLeak(t)
	srv := newTestServer()
	defer srv.Close()
	h := NewHandler(srv, nil)
	cors := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "http://localhost:3000")
		h.ServeHTTP(w, r)
	})
	ts, c := liveServer(t, cors)
	t.Cleanup(h.CloseStreams)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	resp := send(ctx, t, c, ts.URL, rpc("1", protocol.MethodSubscriptionsListen, `"notifications":{"toolsListChanged":true}`))
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "http://localhost:3000" {
		t.Errorf("middleware header = %q", got)
	}
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || !resp.Close {
		t.Errorf("transfer coding %v, close %v", resp.TransferEncoding, resp.Close)
	}
	if _, err := newSSEReader(resp.Body).nextEvent(); err != nil {
		t.Fatalf("acknowledgement: %v", err)
	}
	resp.Body.Close()

	// No notifications filter: an error, answered as JSON.
	resp = send(ctx, t, c, ts.URL, rpc("2", protocol.MethodSubscriptionsListen, ""))
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") != "application/json" || resp.ContentLength != int64(len(body)) {
		t.Errorf("error answer: %v, length %d for %d bytes", resp.Header, resp.ContentLength, len(body))
	}
	var e struct {
		ID    json.RawMessage    `json:"id"`
		Error struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || string(e.ID) != "2" || e.Error.Code != protocol.CodeInvalidParams {
		t.Errorf("error answer %s (%v)", body, err)
	}
}

// TestTakeoverHTTP10 reads a listen stream of an HTTP/1.0 request, which
// has no chunked coding: the stream is delimited by the connection.
func TestTakeoverHTTP10(t *testing.T) {
	checkNoLeak(t)
	srv := newTestServer()
	h := NewHandler(srv, nil)
	ts, _ := liveServer(t, h)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	body := rpc("5", protocol.MethodSubscriptionsListen, `"notifications":{"toolsListChanged":true}`)
	var req strings.Builder
	fmt.Fprintf(&req, "POST /mcp HTTP/1.0\r\nHost: localhost\r\nContent-Length: %d\r\n", len(body))
	for k, v := range standardHeaders(body) {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v[0])
	}
	req.WriteString("\r\n" + body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.ProtoMinor != 0 || len(resp.TransferEncoding) != 0 {
		t.Fatalf("got %s %d %v", resp.Proto, resp.StatusCode, resp.TransferEncoding)
	}
	r := newSSEReader(resp.Body)
	if _, err := r.nextEvent(); err != nil {
		t.Fatalf("acknowledgement: %v", err)
	}
	srv.Close()
	if _, err := r.nextEvent(); err != nil {
		t.Fatalf("closing result: %v", err)
	}
	if _, err := r.nextEvent(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the closing result: %v, want EOF", err)
	}
}

// TestTakeoverNoticesHangup closes the client side of a listen stream
// whose keep-alive comments are far off: on Linux the handler notices at
// once (its epoll watch), unsubscribes and closes the connection.
func TestTakeoverNoticesHangup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("hang-ups are noticed at once on Linux only")
	}
	checkNoLeak(t)
	feed := server.NewMemoryFeed()
	srv := server.New(testInfo, &server.Options{Feed: feed})
	defer srv.Close()
	ts, c := liveServer(t, NewHandler(srv, &Options{KeepAlive: time.Hour}))
	for range 3 {
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
}
