package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// onConn runs fn on a connection of d's read-only pool.
func onConn(t *testing.T, d *DB, fn func(pc *pgx.Conn)) {
	t.Helper()
	c, err := d.ro.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		if sessionOf(pc.PgConn()) == nil {
			t.Fatal("a read-only connection has no pgSession")
		}
		fn(pc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pipe runs query's pipeline on pc, statements bound again allowed.
func pipe(d *DB, pc *pgx.Conn, query string, args ...any) (*queryResult, bool, error) {
	res, end, reused, err := d.dialect.(postgresDialect).pipeline(context.Background(), pc, query, args,
		scanLimits{maxRows: 10, maxBytes: 1 << 20}, nil, true)
	if err == nil && end != pgClean {
		err = fmt.Errorf("the pipeline ended %d", end)
	}
	return res, reused, err
}

// TestPostgresStatementReuse: a call whose SQL is the previous call's on
// the connection binds the unnamed statement again; anything else written
// on the connection in between, or other SQL, parses afresh — and every
// call answers its own SQL.
func TestPostgresStatementReuse(t *testing.T) {
	e := postgresEnv(t)
	d, _ := e.open(t, func(o *Options) { o.MaxConcurrent = 1 })
	const byID = "SELECT name FROM t WHERE id = $1"
	cell := func(res *queryResult) string { return string(res.Rows[0]) }
	onConn(t, d, func(pc *pgx.Conn) {
		run := func(query string, args ...any) (*queryResult, bool) {
			t.Helper()
			res, reused, err := pipe(d, pc, query, args...)
			if err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			return res, reused
		}
		other := func(sql string) {
			t.Helper()
			if _, err := pc.PgConn().ExecParams(context.Background(), sql, [][]byte{[]byte("1")}, nil, nil, nil).Close(); err != nil {
				t.Fatal(err)
			}
		}
		if res, reused := run(byID, 1); reused || cell(res) != `["one"]` {
			t.Errorf("first call: reused %v, %s", reused, cell(res))
		}
		if res, reused := run(byID, 2); !reused || cell(res) != `["two"]` {
			t.Errorf("same SQL again: reused %v, %s", reused, cell(res))
		}
		// The unnamed statement replaced by someone else's, of as many
		// parameters: binding it would answer 'other'.
		other("SELECT 'other' WHERE $1::int IS NOT NULL")
		if res, reused := run(byID, 3); reused || cell(res) != `["three"]` {
			t.Errorf("after another statement on the connection: reused %v, %s", reused, cell(res))
		}
		if res, reused := run("SELECT id FROM t WHERE name = $1", "two"); reused || cell(res) != `[2]` {
			t.Errorf("other SQL: reused %v, %s", reused, cell(res))
		}
		if res, reused := run(byID, 1); reused || cell(res) != `["one"]` {
			t.Errorf("back to the first SQL: reused %v, %s", reused, cell(res))
		}
	})
}

// TestPostgresStatementReuseOtherBackend: a session checked as its own
// backend binds again; a bound-again statement whose pipeline names
// another backend than the session's (what a transaction pooler would do)
// has its result dropped, and the session parses from then on.
func TestPostgresStatementReuseOtherBackend(t *testing.T) {
	e := postgresEnv(t)
	d, _ := e.open(t, func(o *Options) { o.MaxConcurrent = 1 })
	const byID = "SELECT name FROM t WHERE id = $1"
	onConn(t, d, func(pc *pgx.Conn) {
		sess := sessionOf(pc.PgConn())
		if sess.backend == 0 || sess.backend != pc.PgConn().PID() {
			t.Fatalf("a direct session's backend is %d, its PID %d", sess.backend, pc.PgConn().PID())
		}
		call := func(id int) (*queryResult, bool, error) { return pipe(d, pc, byID, id) }
		if _, _, err := call(1); err != nil {
			t.Fatal(err)
		}
		real := sess.backend
		sess.backend = real + 1 // as if the session's backend were another
		if res, reused, err := call(2); !reused || !errors.Is(err, errOtherBackend) || res != nil {
			t.Errorf("bound again on another backend: reused %v, %v, %v", reused, res, err)
		}
		if sess.backend != 0 {
			t.Errorf("the session still binds again (backend %d)", sess.backend)
		}
		if res, reused, err := call(3); err != nil || reused || string(res.Rows[0]) != `["three"]` {
			t.Errorf("after: reused %v, %v, %v", reused, res, err)
		}
	})
}

// TestPostgresStatementReuseAfterChange: a table whose columns changed
// between two calls of the same SQL is read as it is now.
func TestPostgresStatementReuseAfterChange(t *testing.T) {
	e := postgresEnv(t)
	_, s := e.open(t, func(o *Options) { o.MaxConcurrent = 1 })
	first := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": "SELECT * FROM t ORDER BY id"}))
	mustExec(t, e.write, "ALTER TABLE t ADD COLUMN extra integer DEFAULT 7")
	again := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": "SELECT * FROM t ORDER BY id"}))
	if len(first.Columns) != 2 || len(again.Columns) != 3 || again.Rows[0][2] != float64(7) {
		t.Errorf("columns before %v, after %v (row %v)", first.Columns, again.Columns, again.Rows[0])
	}
}

// TestPostgresCopyOut: COPY ... TO STDOUT is refused by name, and the
// connection serves the next call.
func TestPostgresCopyOut(t *testing.T) {
	e := postgresEnv(t)
	_, s := e.open(t, func(o *Options) { o.MaxConcurrent = 1 })
	r, rpcErr := handle(t, context.Background(), s, nil, "tools/call", map[string]any{"name": "query", "arguments": map[string]any{"sql": "COPY t TO STDOUT"}})
	if rpcErr != nil || !r.IsError || !strings.Contains(r.text(), "COPY ... TO STDOUT") {
		t.Fatalf("COPY TO STDOUT: %+v %v", r, rpcErr)
	}
	if q := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": "SELECT count(*) FROM t"})); q.Rows[0][0] != float64(3) {
		t.Errorf("the next call: %v", q.Rows)
	}
}
