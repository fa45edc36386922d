package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/sqlserver"
)

// slowSQLite is a query SQLite works on for minutes (and returns one row).
const slowSQLite = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 10000000000) select count(*) as n from c"

// tasksClient connects to url declaring the Tasks extension.
func tasksClient(t *testing.T, ctx context.Context, url string) *client.Session {
	t.Helper()
	o := &client.Options{}
	tasks.Use(o, &tasks.ClientOptions{MinPoll: 20 * time.Millisecond, MaxPoll: 200 * time.Millisecond})
	s, err := client.New(protocol.Implementation{Name: "serve-tasks-test", Version: "1.0.0"}, o).ConnectURL(ctx, url, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// startTask calls query with sql under Detach and returns the task it
// became.
func startTask(t *testing.T, ctx context.Context, s *client.Session, args map[string]any) *tasks.Task {
	t.Helper()
	_, err := s.CallTool(tasks.Detach(ctx), "query", args, nil)
	var started *tasks.StartedError
	if !errors.As(err, &started) {
		t.Fatalf("the query did not become a task: %v", err)
	}
	return started.Task
}

// waitTask polls the task until cond holds, for up to 30 s.
func waitTask(t *testing.T, ctx context.Context, s *client.Session, id string, cond func(*tasks.Task) bool) *tasks.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		tk, err := tasks.Get(ctx, s, id)
		if err != nil {
			t.Fatalf("tasks/get: %v", err)
		}
		if cond(tk) {
			return tk
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s: last %+v", id, tk)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestServeSQLQueryTask: a query still running after --task-after becomes
// a task for a client that declared the extension; its status message is
// the query's progress; cancelling it cancels the statement (the one
// place of --max-concurrent 1 is free at once for the next query); a
// query that ends in time answers synchronously, and one that ends later
// gives the client the same result; the task store is the SQLite file.
func TestServeSQLQueryTask(t *testing.T) {
	store := filepath.Join(t.TempDir(), "tasks.db")
	url, _ := serveSQL(t, "--task-after", "200ms", "--task-store", store, "--max-concurrent", "1", "--statement-timeout", "10m")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := tasksClient(t, ctx, url)

	tk := startTask(t, ctx, s, map[string]any{"sql": slowSQLite})
	if tk.Status != tasks.Working {
		t.Errorf("created %+v", tk)
	}
	tk = waitTask(t, ctx, s, tk.TaskID, func(tk *tasks.Task) bool { return strings.HasPrefix(tk.StatusMessage, "running for ") })
	t.Logf("status: %q", tk.StatusMessage)
	if err := tasks.Cancel(ctx, s, tk.TaskID); err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	waitTask(t, ctx, s, tk.TaskID, func(tk *tasks.Task) bool { return tk.Status == tasks.Cancelled })
	// The statement is stopped: the only place is free (a busy server
	// refuses after 10 s in the queue, and the query would run for minutes).
	start := time.Now()
	res, err := s.CallTool(ctx, "query", map[string]any{"sql": "select count(*) as n from customers"}, nil)
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*protocol.TextContent).Text, "250") {
		t.Fatalf("the next query: %+v %v", res, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the next query waited %s: the cancelled statement held its place", took)
	}

	// A query that ends after --task-after: the client polls the task to
	// the result the synchronous call would have given.
	const counted = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000) select count(*) as n from c"
	sync, err := client.New(protocol.Implementation{Name: "plain", Version: "1"}, nil).ConnectURL(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sync.Close()
	want, err := sync.CallTool(ctx, "query", map[string]any{"sql": counted}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var became bool
	got, err := s.CallTool(tasks.WithStatus(ctx, func(*tasks.Task) { became = true }), "query", map[string]any{"sql": counted}, nil)
	if err != nil || got.Content[0].(*protocol.TextContent).Text != want.Content[0].(*protocol.TextContent).Text {
		t.Fatalf("as a task: %+v %v; synchronously: %+v", got, err, want)
	}
	if !became {
		t.Log("the counting query ended before --task-after: it was not a task")
	}
	if fi, err := os.Stat(store); err != nil || fi.Size() == 0 {
		t.Errorf("task store %s: %v", store, err)
	}
}

// TestServeSQLTaskFlags: the flags are checked, and --task-after 0 serves
// no Tasks extension.
func TestServeSQLTaskFlags(t *testing.T) {
	for _, args := range [][]string{{"--task-after", "-1s"}, {"--task-after", "0", "--task-store", "x.db"}, {"--task-ttl", "0"},
		{"--store", "redis://127.0.0.1:1/0", "--task-store", "x.db"}} {
		r := mcpkit(t, append([]string{"serve", "sql", "--addr", "127.0.0.1:0"}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--task-") {
			t.Errorf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	url, _ := serveSQL(t, "--task-after", "0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := tasksClient(t, ctx, url)
	if _, ok := s.ServerCapabilities().Extensions[tasks.ID]; ok {
		t.Errorf("--task-after 0 advertises the extension")
	}
}

// TestServeSQLQueryTaskPostgres: on PostgreSQL, a query that became a
// task runs in the database until the task is cancelled, and then no
// longer: cancelling the task cancels the statement in the server.
func TestServeSQLQueryTaskPostgres(t *testing.T) {
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
	url, _ := startServe(t, "--dsn", dsn, "--poll", "-1s", "--allow-privileged-role", "--task-after", "200ms",
		"--task-store", filepath.Join(t.TempDir(), "tasks.db"), "--statement-timeout", "10m")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := tasksClient(t, ctx, url)

	marker := fmt.Sprintf("task_%d", time.Now().UnixNano())
	running := activeStatements(t, ctx, admin, marker)
	tk := startTask(t, ctx, s, map[string]any{"sql": "select pg_sleep(600) as " + marker})
	waitTask(t, ctx, s, tk.TaskID, func(*tasks.Task) bool { return running() == 1 })
	if err := tasks.Cancel(ctx, s, tk.TaskID); err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	waitTask(t, ctx, s, tk.TaskID, func(tk *tasks.Task) bool { return tk.Status == tasks.Cancelled })
	waitStatementsGone(t, running, "the statement of the cancelled task still runs in PostgreSQL")
}

// TestServeSQLTaskSurvivesRestart: by default the task store is an SQLite
// file named after the address and the databases, so a server restarted
// on the same address finds a completed task and its rows again.
func TestServeSQLTaskSurvivesRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dbPath := filepath.Join(t.TempDir(), "demo.db")
	if err := sqlserver.EnsureDemo(dbPath); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	serve := func() (stop func()) {
		sctx, scancel := context.WithCancel(ctx)
		inv := start(sctx, terminal{}, "", "serve", "sql", "--addr", addr, "--db", dbPath, "--task-after", "10ms", "--statement-timeout", "10m")
		deadline := time.Now().Add(15 * time.Second)
		for !servingURL.MatchString(inv.stderr.String()) {
			if time.Now().After(deadline) {
				scancel()
				t.Fatalf("serve sql did not start: %s", inv.stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(inv.stderr.String(), "kept in "+os.Getenv("XDG_CACHE_HOME")) {
			t.Errorf("not the default task store: %s", inv.stderr.String())
		}
		return func() {
			scancel()
			if r := inv.wait(t); r.code != exitOK {
				t.Errorf("serve sql ended with %d: %s", r.code, r.stderr)
			}
		}
	}
	url := "http://" + addr + "/mcp"
	stop := serve()
	s := tasksClient(t, ctx, url)
	const counted = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000) select count(*) as n from c"
	tk := startTask(t, ctx, s, map[string]any{"sql": counted})
	done := waitTask(t, ctx, s, tk.TaskID, func(tk *tasks.Task) bool { return tk.Status.Terminal() })
	s.Close()
	stop()

	stop = serve()
	defer stop()
	again, err := tasks.Get(ctx, tasksClient(t, ctx, url), tk.TaskID)
	if err != nil || again.Status != tasks.Completed || string(again.Result) != string(done.Result) || !strings.Contains(string(again.Result), "300000") {
		t.Fatalf("after a restart: %+v %v; before: %+v", again, err, done)
	}
}

// activeStatements returns a count of the statements PostgreSQL is
// running whose text holds marker (other than the one counting them).
func activeStatements(t *testing.T, ctx context.Context, admin *sql.DB, marker string) func() int {
	return func() int {
		t.Helper()
		var n int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`, marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// waitStatementsGone fails the test with msg unless running counts none
// within 5 s.
func waitStatementsGone(t *testing.T, running func() int, msg string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for running() != 0 {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
