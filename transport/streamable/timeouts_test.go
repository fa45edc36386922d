package streamable

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
)

// TestListenOutlivesReadTimeout checks that the body read deadline is lifted
// once the body is read: a listen stream lasts longer than ReadTimeout.
func TestListenOutlivesReadTimeout(t *testing.T) {
	checkNoLeak(t)
	srv := newTestServer()
	ts, c := liveServer(t, NewHandler(srv, &Options{ReadTimeout: 50 * time.Millisecond, KeepAlive: -1}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp := send(ctx, t, c, ts.URL, rpc("9", protocol.MethodSubscriptionsListen, `"notifications":{"toolsListChanged":true}`))
	defer resp.Body.Close()
	r := newSSEReader(resp.Body)
	if _, err := r.nextEvent(); err != nil {
		t.Fatalf("acknowledgement: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	srv.NotifyToolsChanged()
	got, err := r.nextEvent()
	if err != nil {
		t.Fatalf("stream ended after the read timeout: %v", err)
	}
	want := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}`
	if got != want {
		t.Fatalf("event %s, want %s", got, want)
	}
	cancel()
}

// TestListenNeedsSSE checks that a listen request from a client that accepts
// JSON only is refused instead of being held open.
func TestListenNeedsSSE(t *testing.T) {
	srv := newTestServer()
	ts, c := liveServer(t, NewHandler(srv, nil))
	body := rpc("3", protocol.MethodSubscriptionsListen, `"notifications":{"toolsListChanged":true}`)
	req, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = standardHeaders(body)
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Fatalf("status = %d", resp.StatusCode)
	}
}

// TestBodyThatNeverArrives: a request whose headers announce a body that
// does not come is answered when ReadTimeout lapses and its connection is
// closed, rather than held while net/http waits to drain the body.
func TestBodyThatNeverArrives(t *testing.T) {
	checkNoLeak(t)
	ts, _ := liveServer(t, NewHandler(newTestServer(), &Options{ReadTimeout: 100 * time.Millisecond}))
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := rpc("1", protocol.MethodToolsList, "")
	// The head announces 1000 bytes; 10 come.
	if _, err := io.WriteString(conn, rawPost(body, 1000)+body[:10]); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(conn) // ends when the server closes the connection
	if err != nil {
		t.Fatalf("the connection was not closed: %v (read %q)", err, got)
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 400") || !strings.Contains(string(got), "Connection: close") {
		t.Errorf("answer %q", got)
	}
}
