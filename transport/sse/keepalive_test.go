package sse

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// streamRecorder is a ResponseWriter whose body can be read while the
// handler writes.
type streamRecorder struct {
	mu     sync.Mutex
	header http.Header
	code   int
	body   bytes.Buffer
}

func newStreamRecorder() *streamRecorder { return &streamRecorder{header: http.Header{}} }

func (w *streamRecorder) Header() http.Header { return w.header }

func (w *streamRecorder) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = code
	}
}

func (w *streamRecorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.Write(b)
}

func (w *streamRecorder) Flush() {}

func (w *streamRecorder) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.String()
}

// TestKeepAlive: a quiet stream gets a comment line every KeepAlive; a
// message puts the next one off.
func TestKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := server.New(protocol.Implementation{Name: "keepalive", Version: "1"}, nil)
		defer srv.Close()
		x := NewHandler(srv, &Options{KeepAlive: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://localhost/sse", nil)
		r.Header.Set("Accept", "text/event-stream")
		w := newStreamRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			x.ServeHTTP(w, r)
		}()
		synctest.Wait()
		out := w.String()
		if !strings.HasPrefix(out, "event: endpoint\ndata: /sse?sessionId=") || !strings.HasSuffix(out, "\n\n") {
			t.Fatalf("stream %q", out)
		}
		endpoint := strings.TrimSuffix(strings.TrimPrefix(out, "event: endpoint\ndata: "), "\n\n")
		pings := func() int { return strings.Count(w.String(), "\n:\n\n") }

		time.Sleep(time.Second - time.Millisecond)
		synctest.Wait()
		if n := pings(); n != 0 {
			t.Fatalf("%d keep-alives before the interval", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := pings(); n != 1 {
			t.Fatalf("%d keep-alives after the interval, want 1", n)
		}

		// A message half an interval later: the next comment comes an
		// interval after it.
		time.Sleep(500 * time.Millisecond)
		pr := httptest.NewRequest(http.MethodPost, "http://localhost"+endpoint, strings.NewReader(pingMsg))
		pr.Header.Set("Content-Type", "application/json")
		pw := httptest.NewRecorder()
		x.ServeHTTP(pw, pr)
		if pw.Code != http.StatusAccepted {
			t.Fatalf("POST: %d %s", pw.Code, pw.Body)
		}
		synctest.Wait()
		if !strings.Contains(w.String(), "event: message\ndata: {") {
			t.Fatalf("no message: %q", w.String())
		}
		time.Sleep(time.Second - time.Millisecond)
		synctest.Wait()
		if n := pings(); n != 1 {
			t.Fatalf("%d keep-alives within an interval of the message, want 1", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := pings(); n != 2 {
			t.Fatalf("%d keep-alives an interval after the message, want 2", n)
		}
		cancel()
		<-done
	})
}
