package redis_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// client speaks the 2025-11-25 revision to one endpoint, by hand, so that
// every request is visible.
type client struct {
	t    *testing.T
	base string // http://host:port/mcp
	sid  string
	hc   *http.Client
}

func newClient(t *testing.T, addr string) *client {
	return &client{t: t, base: "http://" + addr + "/mcp", hc: &http.Client{Timeout: 30 * time.Second}}
}

func (c *client) request(method, body string, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequest(method, c.base, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return c.hc.Do(req)
}

// post sends a message and returns the status and, for a request, the
// response's JSON.
func (c *client) post(body string) (int, string) {
	c.t.Helper()
	resp, err := c.request("POST", body, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && c.sid == "" {
		c.sid = sid
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := newSSE(resp.Body)
		for {
			e, ok := sc.next()
			if !ok {
				return resp.StatusCode, ""
			}
			if strings.Contains(e.data, `"result"`) || strings.Contains(e.data, `"error"`) {
				return resp.StatusCode, e.data
			}
		}
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (c *client) initialize() {
	c.t.Helper()
	code, body := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if code != 200 || c.sid == "" {
		c.t.Fatalf("initialize: %d %s", code, body)
	}
}

func (c *client) initialized() {
	c.t.Helper()
	if code, body := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 202 {
		c.t.Fatalf("notifications/initialized: %d %s", code, body)
	}
}

func (c *client) call(id int, tool string) (int, string) {
	c.t.Helper()
	return c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool))
}

// sseEvent is one event of a stream.
type sseEvent struct{ id, data string }

type sseReader struct{ r *bufio.Reader }

func newSSE(r io.Reader) *sseReader { return &sseReader{bufio.NewReader(r)} }

func (s *sseReader) next() (sseEvent, bool) {
	var e sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return e, false
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if e.data != "" {
				return e, true
			}
			e = sseEvent{}
		case strings.HasPrefix(line, "id:"):
			e.id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			e.data += strings.TrimSpace(line[5:])
		}
	}
}

// stream is an open GET stream whose messages arrive on events.
type stream struct {
	events chan sseEvent
	cancel context.CancelFunc
	done   chan struct{}
	lastID string
	mu     sync.Mutex
}

// get opens the session's standalone stream (resuming after lastID when
// set); it fails the test unless the server answers 200.
func (c *client) get(lastID string) *stream {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", c.base, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		cancel()
		c.t.Fatalf("GET: %d", resp.StatusCode)
	}
	s := &stream{events: make(chan sseEvent, 64), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		defer close(s.events)
		r := newSSE(resp.Body)
		for {
			e, ok := r.next()
			if !ok {
				return
			}
			if e.data != "" && strings.Contains(e.data, "method") {
				s.events <- e
			}
		}
	}()
	c.t.Cleanup(s.close)
	return s
}

func (s *stream) close() {
	s.cancel()
	<-s.done
}

// expect reads n messages, failing on a wrong one or a wait beyond d, then
// checks that no other comes within quiet.
func (s *stream) expect(t *testing.T, want []string, d, quiet time.Duration) []sseEvent {
	t.Helper()
	var got []sseEvent
	deadline := time.After(d)
	for len(got) < len(want) {
		select {
		case e, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended after %d of %d messages", len(got), len(want))
			}
			got = append(got, e)
		case <-deadline:
			t.Fatalf("got %d of %d messages: %v", len(got), len(want), got)
		}
	}
	for i, e := range got {
		if !strings.Contains(e.data, want[i]) {
			t.Errorf("message %d = %s, want %s", i, e.data, want[i])
		}
	}
	select {
	case e := <-s.events:
		t.Errorf("unexpected message %s", e.data)
	case <-time.After(quiet):
	}
	return got
}

func newClientWith(t *testing.T, addr, sid string) *client {
	c := newClient(t, addr)
	c.sid = sid
	return c
}
