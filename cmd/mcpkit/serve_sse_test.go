package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/sse"
)

// TestServeSQLSSE speaks to `mcpkit serve sql` as a 2024-11-05 client over
// the HTTP+SSE transport it serves at /sse.
func TestServeSQLSSE(t *testing.T) {
	url, _ := serveSQL(t)
	base := strings.TrimSuffix(url, "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := sse.Dial(ctx, base+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(conn.Endpoint(), base+"/sse?sessionId=") {
		t.Errorf("endpoint %s", conn.Endpoint())
	}
	c := client.New(protocol.Implementation{Name: "test", Version: "1"}, &client.Options{Era: client.EraLegacy, ProtocolVersion: protocol.Version2024_11_05})
	s, err := c.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "query") {
		t.Fatalf("tools %v", names)
	}
	res, err := s.CallTool(ctx, "query", map[string]any{"sql": "select count(*) as n from customers"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*protocol.TextContent); !ok || !strings.Contains(tc.Text, "250") {
		t.Fatalf("query: %+v", res.Content)
	}
}

// TestServeSQLSSEPath: --sse-path moves the HTTP+SSE endpoint, "" turns it
// off, and a path that is not one of its own is a usage error.
func TestServeSQLSSEPath(t *testing.T) {
	for _, p := range []string{"mcp", "/mcp", "/.well-known/x"} {
		r := mcpkit(t, "serve", "sql", "--db", "/nonexistent/db.sqlite", "--sse-path", p)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--sse-path") {
			t.Errorf("--sse-path %q: %d %q", p, r.code, r.stderr)
		}
	}
	if r := mcpkit(t, "serve", "sql", "--stdio", "--db", "/nonexistent/db.sqlite", "--sse-path", "/x"); r.code != exitUsage {
		t.Errorf("--sse-path with --stdio: %d %q", r.code, r.stderr)
	}

	url, _ := serveSQL(t, "--sse-path", "/legacy/sse")
	base := strings.TrimSuffix(url, "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := sse.Dial(ctx, base+"/legacy/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if resp, err := http.Get(base + "/sse"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /sse with --sse-path /legacy/sse: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}

	url, _ = serveSQL(t, "--sse-path", "")
	if _, err := sse.Dial(ctx, strings.TrimSuffix(url, "/mcp")+"/sse", nil); err == nil {
		t.Fatal("HTTP+SSE served with --sse-path \"\"")
	}
}

func TestServeSQLHelpMentionsSSE(t *testing.T) {
	r := mcpkit(t, "serve", "sql", "--help")
	for _, want := range []string{"--sse-path", "HTTP+SSE", "2024-11-05"} {
		if r.code != exitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %s: %d %s", want, r.code, r.stdout)
		}
	}
}
