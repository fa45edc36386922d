package sqlserver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sqliteEnv(t *testing.T) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	dsn, err := sqliteDSN(path, "_pragma=busy_timeout(5000)", "_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := w.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
		INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three');
		CREATE TABLE u (id INTEGER PRIMARY KEY, t_id INTEGER REFERENCES t (id));
		CREATE INDEX u_t ON u (t_id);
		INSERT INTO u VALUES (1, 1);`); err != nil {
		t.Fatal(err)
	}
	return &env{
		name:  "sqlite",
		opts:  Options{Path: path, PollInterval: -1},
		write: w,
		series: func(n int) string {
			return fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %d) SELECT x FROM c", n)
		},
		refusal: "attempt to write a readonly database",
		multi:   "more than one statement",
		slow:    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000000) SELECT count(*) FROM c, t",
	}
}

func TestSQLite(t *testing.T) {
	runShared(t, sqliteEnv(t))
}

// assertIdle checks that no statement still holds the database: a writer
// that will not wait for a lock gets through at once.
func (e *env) assertIdle(t *testing.T) {
	t.Helper()
	if e.name == "postgres" {
		e.assertIdlePostgres(t)
		return
	}
	dsn, _ := sqliteDSN(e.opts.Path, "_pragma=busy_timeout(0)")
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec("UPDATE t SET name = name WHERE id = 1"); err != nil {
		t.Errorf("database still busy after cancellation: %v", err)
	}
}

func TestSQLiteMissingFile(t *testing.T) {
	_, err := Open(context.Background(), &Options{Path: filepath.Join(t.TempDir(), "missing.db")})
	if err == nil {
		t.Fatal("opened a missing file")
	}
	if _, err := Open(context.Background(), &Options{Path: "x.db", DSN: "postgres://x"}); err == nil {
		t.Fatal("accepted both Path and DSN")
	}
}

func TestEnsureDemo(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a", "demo.db")
	b := filepath.Join(t.TempDir(), "demo.db")
	for _, p := range []string{a, b} {
		if err := EnsureDemo(p); err != nil {
			t.Fatal(err)
		}
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if len(ab) == 0 || !bytes.Equal(ab, bb) {
		t.Fatalf("two demo databases differ (%d and %d bytes)", len(ab), len(bb))
	}
	st, _ := os.Stat(a)
	time.Sleep(10 * time.Millisecond)
	if err := EnsureDemo(a); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(a); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("EnsureDemo rewrote an existing file")
	}
	d, err := Open(context.Background(), &Options{Path: a, PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	counts := map[string]int64{}
	total := int64(0)
	for _, tr := range d.knownTables() {
		info, err := d.describeTable(context.Background(), tr, true)
		if err != nil {
			t.Fatal(err)
		}
		counts[tr.Name] = *info.RowCount
		if tr.Kind == "table" {
			total += *info.RowCount
		}
		if tr.Name == "order_lines" && (len(info.ForeignKeys) != 2 || len(info.PrimaryKey) != 2) {
			t.Errorf("order_lines keys: %+v %+v", info.ForeignKeys, info.PrimaryKey)
		}
	}
	if counts["customers"] != demoCustomers || counts["products"] != demoProducts || counts["orders"] != demoOrders ||
		counts["order_lines"] < demoOrders || counts["order_totals"] != demoOrders || total < 2000 || total > 10000 {
		t.Errorf("demo rows: %v (total %d)", counts, total)
	}
	var fk string
	err = d.read(context.Background(), func(ctx context.Context, q querier) error {
		return scanOne(ctx, q, "SELECT count(*) FROM pragma_foreign_key_check", nil, &fk)
	})
	if err != nil || fk != "0" {
		t.Errorf("foreign key violations: %s %v", fk, err)
	}
}

func TestOpenDemoDefault(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	d, err := Open(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	path, _ := demoPath()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("demo not created at %s: %v", path, err)
	}
	if d.Dialect() != "SQLite" || len(d.knownTables()) != 5 {
		t.Errorf("%s, tables %v", d.Dialect(), d.knownTables())
	}
}

// TestSQLiteNoOpenTransaction: the read-only tool cannot leave a
// transaction open (which would lock out every writer and, in WAL mode,
// pin later reads to a stale snapshot).
func TestSQLiteNoOpenTransaction(t *testing.T) {
	for _, wal := range []bool{false, true} {
		t.Run(map[bool]string{false: "rollback journal", true: "WAL"}[wal], func(t *testing.T) {
			e := sqliteEnv(t)
			if wal {
				mustExec(t, e.write, "PRAGMA journal_mode = WAL")
			}
			_, s := e.open(t, nil)
			for _, q := range []string{"BEGIN", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "SAVEPOINT s1", "COMMIT", "END", "RELEASE s1", "ROLLBACK TO s1"} {
				r := callTool(t, s, "query", map[string]any{"sql": q})
				if !r.IsError || !strings.Contains(r.text(), "not authorized") || !strings.Contains(r.text(), "BEGIN, COMMIT, SAVEPOINT") {
					t.Errorf("%q: want a refusal, got %q", q, r.text())
				}
				callTool(t, s, "query", map[string]any{"sql": "SELECT count(*) FROM t"})
				e.assertIdle(t)
			}
			// Every later read sees committed data.
			mustExec(t, e.write, "INSERT INTO t (id, name) VALUES (50, 'fifty')")
			q := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": "SELECT count(*) FROM t"}))
			if q.Rows[0][0] != float64(4) {
				t.Errorf("a read after a write sees %v rows, want 4", q.Rows[0][0])
			}
		})
	}
}

// TestSQLiteEndRollsBack: a connection handed back while still in a
// transaction (which the authorizer prevents; this is the second line) is
// rolled back before anyone else can use it.
func TestSQLiteEndRollsBack(t *testing.T) {
	e := sqliteEnv(t)
	dsn, _ := sqliteDSN(e.opts.Path, "mode=ro")
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"BEGIN", "SELECT count(*) FROM t"} {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	endSQLite(c)
	e.assertIdle(t)
}

// TestSQLiteSizeLimits: values larger than the result cap are refused as
// they are made, not built in memory first.
func TestSQLiteSizeLimits(t *testing.T) {
	e := sqliteEnv(t)
	_, s := e.open(t, func(o *Options) { o.MaxResultBytes = 1 << 20 })
	for _, q := range []string{
		"SELECT randomblob(1000000000)",
		"SELECT length(zeroblob(1000000000))",
		"SELECT length(printf('%.*c', 100000000, 'x'))",
		"SELECT length(group_concat(hex(randomblob(1000)))) FROM (" + e.series(2000) + ")",
	} {
		r := callTool(t, s, "query", map[string]any{"sql": q})
		if !r.IsError || !strings.Contains(r.text(), "larger than 1048576 bytes") || !strings.Contains(r.text(), "--max-result-bytes") {
			t.Errorf("%q: want the size refusal, got %q", q, r.text())
		}
	}
}

// TestSQLiteTimeoutBound: the statement timeout bounds the call even when
// SQLite cannot be interrupted (one step of a slow function), and the
// runaway statement keeps its place until it ends.
func TestSQLiteTimeoutBound(t *testing.T) {
	e := sqliteEnv(t)
	d, s := e.open(t, func(o *Options) {
		o.StatementTimeout = 300 * time.Millisecond
		o.MaxConcurrent = 1
		o.QueueTimeout = 100 * time.Millisecond
	})
	// instr() compares the needle at every position of the haystack: one
	// step of a few seconds.
	slow := "SELECT instr(replace(hex(zeroblob(300000)), '0', 'a'), replace(hex(zeroblob(150000)), '0', 'a') || 'b')"
	start := time.Now()
	r := callTool(t, s, "query", map[string]any{"sql": slow})
	took := time.Since(start)
	if !r.IsError || !strings.Contains(r.text(), "statement timed out after 300ms") {
		t.Fatalf("want the timeout, got %q", r.text())
	}
	if took > 300*time.Millisecond+interruptGrace+500*time.Millisecond {
		t.Errorf("the call took %s, beyond its timeout and grace", took)
	}
	if len(d.slots) == 1 {
		r := callTool(t, s, "query", map[string]any{"sql": "SELECT 1"})
		if !r.IsError || !strings.Contains(r.text(), "busy") {
			t.Errorf("while the runaway statement runs: %q", r.text())
		}
	} else {
		t.Log("the statement ended within its grace; the machine is fast")
	}
	d.Close() // waits for it
	if len(d.slots) != 0 {
		t.Error("Close returned with a statement running")
	}
}

func TestSQLiteValues(t *testing.T) {
	e := sqliteEnv(t)
	mustExec(t, e.write, `CREATE TABLE docs (id INTEGER PRIMARY KEY, body JSON, raw BLOB, amount NUMERIC)`)
	mustExec(t, e.write, `INSERT INTO docs VALUES (1, '{"a":[1,2]}', x'00ff', 12.5), (2, 'not json', 'text in a blob column', NULL)`)
	_, s := e.open(t, nil)
	q := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": "SELECT body, raw, amount, x'01' AS lit FROM docs ORDER BY id"}))
	got, _ := json.Marshal(q.Rows)
	want := `[[{"a":[1,2]},{"base64":"AP8="},12.5,{"base64":"AQ=="}],["not json","text in a blob column",null,{"base64":"AQ=="}]]`
	if string(got) != want {
		t.Errorf("values:\n got %s\nwant %s", got, want)
	}
}
