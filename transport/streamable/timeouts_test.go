package streamable

import (
	"context"
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
