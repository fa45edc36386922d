package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// startServe starts serve sql with args on a free port and returns its
// URL and stderr; it stops when the test ends.
func startServe(t *testing.T, args ...string) (string, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inv := start(ctx, terminal{}, "", append([]string{"serve", "sql", "--addr", "127.0.0.1:0"}, args...)...)
	t.Cleanup(func() {
		cancel()
		if r := inv.wait(t); r.code != exitOK {
			t.Errorf("serve sql ended with %d: %s", r.code, r.stderr)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingURL.FindStringSubmatch(inv.stderr.String()); m != nil {
			return m[1], inv.stderr
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("serve sql did not start: %s", inv.stderr.String())
	return "", nil
}

// TestServeSeveralDatabases: --db NAME=PATH repeated, and --config, serve
// several databases from one process; every tool takes the database.
func TestServeSeveralDatabases(t *testing.T) {
	dir := t.TempDir()
	shop, notes := filepath.Join(dir, "shop.db"), filepath.Join(dir, "notes.db")
	for _, p := range []string{shop, notes} {
		if err := sqlserver.EnsureDemo(p); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(dir, "dbs.json")
	os.WriteFile(config, []byte(`{"databases": [{"name": "shop", "path": "`+shop+`", "max_rows": 7}, {"name": "notes", "path": "`+notes+`"}]}`), 0o600)
	for _, args := range [][]string{{"--db", "shop=" + shop, "--db", "notes=" + notes}, {"--config", config}} {
		url, stderr := startServe(t, args...)
		if !strings.Contains(stderr.String(), "shop (SQLite "+shop+")") {
			t.Errorf("first line: %s", stderr.String())
		}
		r := mcpkit(t, "call", url, "query", "database=shop", "sql=select count(*) as n from customers")
		if r.code != exitOK || !strings.Contains(r.stdout, "250") {
			t.Errorf("query shop: %d %s %s", r.code, r.stdout, r.stderr)
		}
		r = mcpkit(t, "call", url, "query", "database=notes", "sql=select id from customers order by id")
		wantCut := args[0] == "--config"
		if r.code != exitOK || strings.Contains(r.stdout, `"truncated": true`) {
			t.Errorf("query notes: %d %s %s", r.code, r.stdout, r.stderr)
		}
		r = mcpkit(t, "call", url, "query", "database=shop", "sql=select id from customers order by id")
		if r.code != exitOK || strings.Contains(r.stdout, `"row_count": 7,`) != wantCut {
			t.Errorf("shop's own max_rows (%v): %d %s", wantCut, r.code, r.stdout)
		}
		r = mcpkit(t, "read", url, "sql://notes/table/customers")
		if r.code != exitOK || !strings.Contains(r.stdout, "customers") {
			t.Errorf("read notes' table: %d %s %s", r.code, r.stdout, r.stderr)
		}
	}
	for _, bad := range [][]string{{"--db", "shop=" + shop, "--db", notes}, {"--db", "a=" + shop, "--db", "a=" + notes}, {"--config", config, "--db", shop}} {
		r := mcpkit(t, append([]string{"serve", "sql", "--stdio"}, bad...)...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", bad, r.code, exitUsage, r.stderr)
		}
	}
}
