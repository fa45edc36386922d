package sqlserver

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests of what a hostile user of the tools must not be able to do, on
// both dialects (run from runShared).

func testOneStatement(t *testing.T, e *env) {
	_, s := e.open(t, func(o *Options) { o.AllowWrites = true })
	for _, tool := range []string{"query", "explain", "execute"} {
		for _, q := range []string{"SELECT 1; SELECT 2", "SELECT 1;SELECT 2;"} {
			r := callTool(t, s, tool, map[string]any{"sql": q})
			if !r.IsError || !strings.Contains(r.text(), e.multi) {
				t.Errorf("%s %q: want a refusal carrying %q, got %q", tool, q, e.multi, r.text())
			}
		}
	}
	// A trailing semicolon or comment is not a second statement.
	for _, q := range []string{"SELECT 1;", "SELECT 1; -- done", "SELECT ';' AS x;"} {
		if r := callTool(t, s, "query", map[string]any{"sql": q}); r.IsError {
			t.Errorf("%q: %s", q, r.text())
		}
	}
	if r := callTool(t, s, "query", map[string]any{"sql": "SELECT 1\x00; SELECT 2"}); !r.IsError {
		t.Errorf("SQL with a NUL ran: %s", r.text())
	}
}

func testConcurrencyCap(t *testing.T, e *env) {
	d, s := e.open(t, func(o *Options) {
		o.MaxConcurrent = 1
		o.QueueTimeout = 200 * time.Millisecond
		o.StatementTimeout = 3 * time.Second
	})
	var wg sync.WaitGroup
	wg.Add(1)
	first := make(chan string, 1)
	go func() {
		defer wg.Done()
		first <- callTool(t, s, "query", map[string]any{"sql": e.slow}).text()
	}()
	defer wg.Wait()
	// The query tool may take the slot for a short read before its
	// statement: wait until the slot has stayed taken for a while, which
	// only the slow statement does.
	held := 0
	waitFor(t, func() bool {
		if len(d.slots) == 1 {
			held++
		} else {
			held = 0
		}
		time.Sleep(10 * time.Millisecond)
		return held >= 20
	})
	start := time.Now()
	r := callTool(t, s, "query", map[string]any{"sql": "SELECT 1"})
	if !r.IsError || !strings.Contains(r.text(), "busy") || !strings.Contains(r.text(), "--max-concurrent") {
		select {
		case f := <-first:
			t.Errorf("second statement: want the busy refusal, got %q; the slow one had ended with %q", r.text(), f)
		default:
			t.Errorf("second statement: want the busy refusal, got %q", r.text())
		}
	}
	if took := time.Since(start); took < 150*time.Millisecond || took > 2*time.Second {
		t.Errorf("the busy refusal came after %s, want about the queue timeout", took)
	}
	// Resource reads run statements too, and wait the same way.
	if _, rpcErr := handle(t, context.Background(), s, nil, "resources/read", map[string]any{"uri": TableURI("t")}); rpcErr == nil ||
		!strings.Contains(rpcErr.Message, "busy") {
		t.Errorf("resource read while busy: %v", rpcErr)
	}
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// idleSessions reports the server's sessions on the database other than
// idle ones (an open transaction shows as "idle in transaction").
func busySessions(t *testing.T, db *sql.DB, appName string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle'`, appName).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// testCursor: rows past max_rows are reachable with the sealed cursor the
// truncated result carries, and only with it.
func testCursor(t *testing.T, e *env) {
	_, s := e.open(t, func(o *Options) { o.MaxRows = 10 })
	q := e.series(25) + " ORDER BY x"
	var got []float64
	cursor := ""
	for page := 0; ; page++ {
		args := map[string]any{"sql": q}
		if cursor != "" {
			args["cursor"] = cursor
		}
		r := decodeQuery(t, callTool(t, s, "query", args))
		if r.Offset != 10*page {
			t.Fatalf("page %d: offset %d", page, r.Offset)
		}
		for _, row := range r.Rows {
			got = append(got, row[0].(float64))
		}
		if !r.Truncated {
			if r.NextCursor != "" {
				t.Error("a complete result carries a cursor")
			}
			break
		}
		if r.NextCursor == "" || !strings.Contains(r.Notice, "next_cursor") {
			t.Fatalf("page %d: truncated without a cursor: %+v", page, r)
		}
		cursor = r.NextCursor
		if page > 3 {
			t.Fatal("no end")
		}
	}
	if len(got) != 25 || got[0] != 1 || got[24] != 25 {
		t.Errorf("rows read through the cursor: %v", got)
	}
	first := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": q}))
	for name, args := range map[string]map[string]any{
		"other sql":      {"sql": e.series(26) + " ORDER BY x", "cursor": first.NextCursor},
		"other params":   {"sql": q, "params": []any{1}, "cursor": first.NextCursor},
		"altered cursor": {"sql": q, "cursor": first.NextCursor[:len(first.NextCursor)-2] + "AA"},
		"made up":        {"sql": q, "cursor": "t1.offset=10"},
	} {
		if r := callTool(t, s, "query", args); !r.IsError || !strings.Contains(r.text(), "cursor") {
			t.Errorf("%s: %q", name, r.text())
		}
	}
}
