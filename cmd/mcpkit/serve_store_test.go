package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/sqlserver"
	"github.com/mcpkit/mcpkit/store/redis/redistest"
)

// TestServeStoreFlags: --store and --state-key-file are checked before
// anything is served.
func TestServeStoreFlags(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte(strings.Repeat("ab", 32)), 0o644); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abcd"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPKIT_STATE_KEY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stdio", "--store", "redis://127.0.0.1:1/0"}, "--store is for replicas"},
		{[]string{"--store", "redis://127.0.0.1:1/0"}, "--store needs the key replicas share"},
		{[]string{"--state-key-file", open}, "may be read by others"},
		{[]string{"--state-key-file", short}, "64 hexadecimal digits"},
	} {
		r := mcpkit(t, append([]string{"serve", "sql"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("serve sql %v: exit %d, stderr %q; want usage error with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestServeSQLReplicas: two serve sql replicas sharing Redis (--store) and
// the state key: a legacy session opened on one is served by the other.
func TestServeSQLReplicas(t *testing.T) {
	p := redistest.Redis(t)
	t.Setenv("MCPKIT_STATE_KEY", strings.Repeat("5a", 32))
	db := filepath.Join(t.TempDir(), "demo.db")
	if err := sqlserver.EnsureDemo(db); err != nil {
		t.Fatal(err)
	}
	a, _ := startServe(t, "--db", db, "--store", p.URL())
	b, _ := startServe(t, "--db", db, "--store", p.URL())
	post := func(url, sid, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp, string(out)
	}
	resp, body := post(a, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize on A: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(b, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 202 {
		t.Fatalf("initialized on B: %d %s", resp.StatusCode, body)
	}
	resp, body = post(b, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":{"sql":"select count(*) as n from customers"}}}`)
	if resp.StatusCode != 200 || !strings.Contains(body, "250") {
		t.Fatalf("query on B in A's session: %d %s", resp.StatusCode, body)
	}
}

// TestServeSQLReplicasShareTasks: with --store, the replicas keep their
// tasks in the shared Redis: a query that became a task on one replica is
// read, with its progress, on another, and its cancellation (on the
// replica that runs it) is seen there too.
func TestServeSQLReplicasShareTasks(t *testing.T) {
	p := redistest.Redis(t)
	t.Setenv("MCPKIT_STATE_KEY", strings.Repeat("5a", 32))
	db := filepath.Join(t.TempDir(), "demo.db")
	if err := sqlserver.EnsureDemo(db); err != nil {
		t.Fatal(err)
	}
	a, _ := startServe(t, "--db", db, "--store", p.URL(), "--task-after", "200ms", "--statement-timeout", "10m")
	b, _ := startServe(t, "--db", db, "--store", p.URL(), "--task-after", "200ms")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sa, sb := tasksClient(t, ctx, a), tasksClient(t, ctx, b)
	tk := startTask(t, ctx, sa, map[string]any{"sql": slowSQLite})
	waitTask(t, ctx, sb, tk.TaskID, func(tk *tasks.Task) bool {
		return tk.Status == tasks.Working && strings.HasPrefix(tk.StatusMessage, "running for ")
	})
	if err := tasks.Cancel(ctx, sa, tk.TaskID); err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	waitTask(t, ctx, sb, tk.TaskID, func(tk *tasks.Task) bool { return tk.Status == tasks.Cancelled })
}

// TestServeSQLReplicasCancelPostgres: tasks/cancel on replica B stops the
// statement that the task's handler runs on replica A in PostgreSQL (the
// cancellation is forwarded through the shared feed).
func TestServeSQLReplicasCancelPostgres(t *testing.T) {
	dsn := os.Getenv("MCPKIT_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("MCPKIT_TEST_POSTGRES_DSN is not set in CI")
		}
		t.Skip("MCPKIT_TEST_POSTGRES_DSN is not set")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	p := redistest.Redis(t)
	t.Setenv("MCPKIT_STATE_KEY", strings.Repeat("5a", 32))
	args := []string{"--dsn", dsn, "--poll", "-1s", "--allow-privileged-role", "--task-after", "200ms",
		"--store", p.URL(), "--statement-timeout", "10m"}
	a, _ := startServe(t, args...)
	b, _ := startServe(t, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sa, sb := tasksClient(t, ctx, a), tasksClient(t, ctx, b)

	marker := fmt.Sprintf("relay_%d", time.Now().UnixNano())
	running := activeStatements(t, ctx, admin, marker)
	tk := startTask(t, ctx, sa, map[string]any{"sql": "select pg_sleep(600) as " + marker})
	waitTask(t, ctx, sb, tk.TaskID, func(*tasks.Task) bool { return running() == 1 })
	if err := tasks.Cancel(ctx, sb, tk.TaskID); err != nil {
		t.Fatalf("tasks/cancel on B: %v", err)
	}
	waitTask(t, ctx, sa, tk.TaskID, func(tk *tasks.Task) bool { return tk.Status == tasks.Cancelled })
	waitStatementsGone(t, running, "the statement of the task cancelled on B still runs on A")
}
