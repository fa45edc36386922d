package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeSQLLimitFlags: the per-caller stream limits and the HTTP+SSE
// buffer reach the server (set, a limit applies to callers without
// authentication too), and are refused where they mean nothing.
func TestServeSQLLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-sse-streams-per-principal", "-1"}, "must not be negative"},
		{[]string{"--max-listen-streams-per-principal", "-1"}, "must not be negative"},
		{[]string{"--max-sse-buffered", "0"}, "want a positive size"},
		{[]string{"--stdio", "--max-sse-streams-per-principal", "2"}, "is for HTTP"},
		{[]string{"--sse-path", "", "--max-sse-buffered", "1MiB"}, "which --sse-path \"\" turns off"},
	} {
		args := append([]string{"serve", "sql", "--db", "/nonexistent/db.sqlite"}, tc.args...)
		if r := mcpkit(t, args...); r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: %d %q, want a usage error with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}

	url, _ := serveSQL(t, "--max-sse-streams-per-principal", "1", "--max-listen-streams-per-principal", "1", "--max-sse-buffered", "1MiB")
	base := strings.TrimSuffix(url, "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	get := func() *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := get()
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first stream: %s", first.Status)
	}
	second := get()
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second HTTP+SSE stream with --max-sse-streams-per-principal 1: %s", second.Status)
	}
	// The stream holds at most 1 MiB: a POST of 2 MiB is refused.
	events := bufio.NewReader(first.Body)
	line, err := events.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data: ") {
		line, err = events.ReadString('\n')
	}
	if err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}}`
	resp, err := http.Post(base+strings.TrimSpace(strings.TrimPrefix(line, "data: ")), "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a POST beyond --max-sse-buffered: %s", resp.Status)
	}

	listen := func() *http.Response {
		body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	l1 := listen()
	defer l1.Body.Close()
	if l1.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(l1.Body)
		t.Fatalf("first listen stream: %s %s", l1.Status, b)
	}
	l2 := listen()
	b, _ := io.ReadAll(l2.Body)
	l2.Body.Close()
	if l2.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "of yours") {
		t.Errorf("second listen stream with --max-listen-streams-per-principal 1: %s %s", l2.Status, b)
	}
}
