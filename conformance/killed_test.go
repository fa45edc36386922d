package conformance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// legacyClient is a 2025-11-25 client written out by hand, so that what
// crosses nginx is plain: a session, and a GET stream that it resumes
// with Last-Event-ID when its connection drops, as the revision says.
type legacyClient struct {
	t      *testing.T
	url    string
	sid    string
	events chan string // messages of the standalone stream
}

func (c *legacyClient) do(method, body, lastID string, ctx context.Context) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, method, c.url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return http.DefaultClient.Do(req)
}

// post sends one message and returns the status and the body (the
// response, for a request).
func (c *legacyClient) post(body string) (int, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.do("POST", body, "", ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if c.sid == "" {
		c.sid = resp.Header.Get("Mcp-Session-Id")
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// follow opens the GET stream and keeps it open, resuming it after the
// last event seen whenever the connection drops, until ctx ends.
func (c *legacyClient) follow(ctx context.Context) {
	c.t.Helper()
	c.events = make(chan string, 64)
	opened := make(chan error, 1)
	go func() {
		last := ""
		first := true
		for ctx.Err() == nil {
			resp, err := c.do("GET", "", last, ctx)
			if err == nil && resp.StatusCode != 200 {
				resp.Body.Close()
				err = fmt.Errorf("GET: %d", resp.StatusCode)
			}
			if first {
				opened <- err
				first = false
			}
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			r := bufio.NewReader(resp.Body)
			id, data := "", ""
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					break
				}
				line = strings.TrimRight(line, "\r\n")
				switch {
				case strings.HasPrefix(line, "id:"):
					id = strings.TrimSpace(line[3:])
				case strings.HasPrefix(line, "data:"):
					data += strings.TrimSpace(line[5:])
				case line == "":
					if id != "" {
						last = id
					}
					if data != "" {
						c.events <- data
					}
					id, data = "", ""
				}
			}
			resp.Body.Close()
		}
	}()
	if err := <-opened; err != nil {
		c.t.Fatal(err)
	}
}

// TestReplicaKilled: with sessions spread over three replicas behind
// nginx, each following its GET stream, one replica is killed with
// SIGKILL. No session is lost (each goes on on the others), the streams it
// held resume elsewhere, and a change announced afterwards reaches every
// session's stream exactly once.
func TestReplicaKilled(t *testing.T) {
	url, dir := startReplicas(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const sessions = 6
	var clients []*legacyClient
	for i := 0; i < sessions; i++ {
		c := &legacyClient{t: t, url: url}
		if code, body := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"k","version":"1"}}}`); code != 200 || c.sid == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		if code, body := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 202 {
			t.Fatalf("initialized: %d %s", code, body)
		}
		c.follow(ctx)
		clients = append(clients, c)
	}
	time.Sleep(300 * time.Millisecond) // every stream is followed
	announce := func(n int) {
		t.Helper()
		c := clients[n%sessions]
		if code, body := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_trigger_tool_change","arguments":{}}}`, 100+n)); code != 200 {
			t.Fatalf("test_trigger_tool_change: %d %s", code, body)
		}
	}
	expectOnce := func(round string) {
		t.Helper()
		for i, c := range clients {
			select {
			case m := <-c.events:
				if !strings.Contains(m, "notifications/tools/list_changed") {
					t.Errorf("%s: session %d got %s", round, i, m)
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("%s: session %d got no tools/list_changed", round, i)
			}
		}
		time.Sleep(500 * time.Millisecond)
		for i, c := range clients {
			select {
			case m := <-c.events:
				t.Errorf("%s: session %d got a second message %s", round, i, m)
			default:
			}
		}
	}
	announce(0)
	expectOnce("before the kill")

	b, err := os.ReadFile(filepath.Join(dir, "replica1.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the dropped streams resume elsewhere

	for i, c := range clients {
		if code, body := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 200+i)); code != 200 {
			t.Errorf("session %d after the kill: ping %d %s", i, code, body)
		}
	}
	announce(1)
	expectOnce("after the kill")
}
