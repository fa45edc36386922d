package sqlserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server"
)

// askText gets the ask prompt for the named tables and returns its text.
func askText(t *testing.T, s *server.Server, tables string) (string, error) {
	r, rpcErr := handle(t, context.Background(), s, nil, "prompts/get",
		map[string]any{"name": "ask", "arguments": map[string]string{"question": "How many?", "tables": tables}})
	if rpcErr != nil {
		return "", fmt.Errorf("error %d %s", rpcErr.Code, rpcErr.Message)
	}
	return r.Messages[0]["content"].(map[string]any)["text"].(string), nil
}

// testAskCache: concurrent ask prompts share one computation of the data
// profile, which takes none of the --max-concurrent places, so a plain
// query runs while it is under way even with a single place; later calls
// are answered from the cache until the data changes.
func testAskCache(t *testing.T, e *env) {
	d, s := e.open(t, func(o *Options) {
		o.MaxConcurrent = 1
		o.QueueTimeout = 200 * time.Millisecond
		o.PollInterval = 20 * time.Millisecond
	})
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	d.ask.hook = func() {
		once.Do(func() {
			close(started)
			<-release
		})
	}
	const callers = 4
	texts := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { texts[i], errs[i] = askText(t, s, "t") })
	}
	<-started
	waitFor(t, func() bool { return d.ask.waiting.Load() == callers })
	if n := len(d.slots); n != 0 {
		t.Errorf("the profile's computation holds %d of the query places", n)
	}
	if r := callTool(t, s, "query", map[string]any{"sql": "SELECT count(*) FROM t"}); r.IsError {
		t.Errorf("a plain query was not served while the profile was computed: %s", r.text())
	}
	close(release)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || !strings.Contains(texts[i], "TABLE t (3 rows)") || !strings.Contains(texts[i], "values: 'one' (1)") {
			t.Errorf("caller %d: %v\n%s", i, errs[i], texts[i])
		}
	}
	if n := d.ask.computations.Load(); n != 1 {
		t.Errorf("%d concurrent ask calls computed the profile %d times, want once", callers, n)
	}
	// Cached: asked again, for all tables or some, nothing more is read
	// once every table is known.
	if _, err := askText(t, s, ""); err != nil {
		t.Fatal(err)
	}
	computed := d.ask.computations.Load()
	for _, tables := range []string{"", "t", "u, t"} {
		if _, err := askText(t, s, tables); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.ask.computations.Load(); n != computed {
		t.Errorf("cached ask calls computed the profile again (%d computations, want %d)", n, computed)
	}
	// A change of the data is seen.
	mustExec(t, e.write, "INSERT INTO t (id, name) VALUES (50, 'fifty')")
	defer mustExec(t, e.write, "DELETE FROM t WHERE id = 50")
	waitFor(t, func() bool {
		text, err := askText(t, s, "t")
		return err == nil && strings.Contains(text, "TABLE t (4 rows)")
	})
	if n := d.ask.computations.Load(); n != computed+1 {
		t.Errorf("%d computations after one change, want %d", n, computed+1)
	}
	if _, err := askText(t, s, "nope"); err == nil || !strings.Contains(err.Error(), `unknown table "nope"`) {
		t.Errorf("unknown table: %v", err)
	}
}

// testAskCountBounded: the ask prompt counts a large table's rows only up
// to a bound (or takes PostgreSQL's estimate), and says so.
func testAskCountBounded(t *testing.T, e *env) {
	mustExec(t, e.write, "CREATE TABLE big AS SELECT * FROM ("+e.series(profileMaxRows+5)+") AS s")
	defer mustExec(t, e.write, "DROP TABLE big")
	d, s := e.open(t, nil)
	text, err := askText(t, s, "big")
	if err != nil {
		t.Fatal(err)
	}
	if e.name == "postgres" {
		// What it cost: the rows its sessions read, which they report to
		// the statistics when they end.
		d.Close()
		var scans, read int64
		waitFor(t, func() bool {
			e.write.Exec("SELECT pg_stat_clear_snapshot()")
			err := e.write.QueryRow("SELECT COALESCE(seq_scan, 0), COALESCE(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = 'big' AND schemaname = current_schema()").Scan(&scans, &read)
			return err == nil && (scans > 0 || strings.Contains(text, "~"))
		})
		if read > profileMaxRows+1 {
			t.Errorf("the ask prompt read %d rows of big (%d scans), more than the %d it counts up to", read, scans, profileMaxRows)
		}
	}
	// PostgreSQL's autovacuum may have analysed it already.
	if !strings.Contains(text, fmt.Sprintf("TABLE big (at least %d rows)", profileMaxRows)) &&
		!(e.name == "postgres" && strings.Contains(text, fmt.Sprintf("TABLE big (~%d rows)", profileMaxRows+5))) {
		t.Errorf("large table:\n%s", text)
	}
	if e.name == "postgres" {
		mustExec(t, e.write, "ANALYZE big")
		_, s := e.open(t, nil)
		if text, err := askText(t, s, "big"); err != nil || !strings.Contains(text, fmt.Sprintf("TABLE big (~%d rows)", profileMaxRows+5)) {
			t.Errorf("analysed large table: %v\n%s", err, text)
		}
	}
}
