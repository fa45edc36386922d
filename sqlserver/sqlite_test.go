package sqlserver

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
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
		multi:   "attempt to write a readonly database",
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
