package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/check"
	"github.com/mcpkit/mcpkit/sqlserver"
)

var servingURL = regexp.MustCompile(`on (http://\S+/mcp)`)

// serveSQL starts `mcpkit serve sql` on a demo database in a temporary
// directory and returns its URL; the server stops when the test ends.
func serveSQL(t *testing.T, extra ...string) (url, dbPath string) {
	t.Helper()
	dbPath = filepath.Join(t.TempDir(), "demo.db")
	if err := sqlserver.EnsureDemo(dbPath); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inv := start(ctx, terminal{}, "", append([]string{"serve", "sql", "--addr", "127.0.0.1:0", "--db", dbPath}, extra...)...)
	t.Cleanup(func() {
		cancel()
		if r := inv.wait(t); r.code != exitOK {
			t.Errorf("serve sql ended with %d: %s", r.code, r.stderr)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingURL.FindStringSubmatch(inv.stderr.String()); m != nil {
			return m[1], dbPath
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("serve sql did not start: %s", inv.stderr.String())
	return "", ""
}

func TestServeSQL(t *testing.T) {
	url, _ := serveSQL(t)
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			r := mcpkit(t, "tools", url, "--era", era)
			for _, tool := range []string{"query", "describe_table", "explain"} {
				if r.code != exitOK || !strings.Contains(r.stdout, tool) {
					t.Fatalf("tools: %d %s %s", r.code, r.stdout, r.stderr)
				}
			}
			if strings.Contains(r.stdout, "execute") {
				t.Errorf("execute offered without --allow-writes")
			}
			r = mcpkit(t, "call", url, "query", "sql=select count(*) as n from customers", "--era", era)
			if r.code != exitOK || !strings.Contains(r.stdout, "250") {
				t.Fatalf("query: %d %s %s", r.code, r.stdout, r.stderr)
			}
			r = mcpkit(t, "call", url, "query", "sql=delete from customers", "--era", era)
			if r.code != exitFailed || !strings.Contains(r.stderr, "readonly") {
				t.Fatalf("a write was not refused: %d %s %s", r.code, r.stdout, r.stderr)
			}
			r = mcpkit(t, "read", url, "sql://table/customers", "--era", era)
			if r.code != exitOK || !strings.Contains(r.stdout, `"email"`) {
				t.Fatalf("read: %d %s %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestServeSQLChecks runs the checker against the database server over
// HTTP (both eras on one endpoint) and over stdio.
func TestServeSQLChecks(t *testing.T) {
	url, dbPath := serveSQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := check.Run(ctx, &check.Options{URL: url, CallTool: "query", CallArgs: []byte(`{"sql":"select 1 as one"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Era != "dual-era" {
		var b strings.Builder
		_ = rep.WriteText(&b)
		t.Fatalf("check over HTTP (era %s):\n%s", rep.Era, b.String())
	}

	// The build has no deadline of its own (it takes a minute on a busy
	// machine); the check over stdio gets its own after it.
	bin := filepath.Join(t.TempDir(), "mcpkit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building mcpkit: %v\n%s", err, out)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err = check.Run(ctx, &check.Options{Command: []string{bin, "serve", "sql", "--stdio", "--db", dbPath}, CallTool: "query", CallArgs: []byte(`{"sql":"select 1 as one"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		var b strings.Builder
		_ = rep.WriteText(&b)
		t.Fatalf("check over stdio:\n%s", b.String())
	}
}
