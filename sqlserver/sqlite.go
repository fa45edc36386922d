package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteDialect is the SQLite dialect (modernc.org/sqlite, no cgo).
//
// Reads run on connections opened with mode=ro (SQLITE_OPEN_READONLY) and
// query_only(1), with an authorizer that refuses ATTACH, DETACH, temporary
// objects, pragma assignments and transaction control, so a statement can
// neither write the file, nor reach another one, nor lift query_only, nor
// keep a transaction (and its locks and snapshot) open past its call.
// Every call runs exactly one statement. A value is at most maxLength
// bytes (SQLITE_LIMIT_LENGTH) and temporary results stay in memory, within
// the process's SQLite heap limit (see heap.go), rather than on disk.
type sqliteDialect struct {
	maxLength int
	maxMemory int64
}

func (sqliteDialect) name() string { return "SQLite" }

// endsOnCancel: sqlite3_interrupt is noticed between steps, and one step
// (a function over a long string) can run on for long after it.
func (sqliteDialect) endsOnCancel() bool { return false }

func sqliteDSN(path string, params ...string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: abs}
	return u.String() + "?" + strings.Join(params, "&"), nil
}

func openSQLite(path string, writes bool, conns int) (ro, rw *sql.DB, err error) {
	dsn, err := sqliteDSN(path, "mode=ro", "_pragma=query_only(1)", "_pragma=busy_timeout(5000)", "_pragma=temp_store(2)")
	if err != nil {
		return nil, nil, err
	}
	base, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, nil, err
	}
	ro = sql.OpenDB(authorized{base, readAuthorizer})
	ro.SetMaxOpenConns(conns)
	ro.SetMaxIdleConns(conns)
	if err := ro.Ping(); err != nil {
		ro.Close()
		return nil, nil, fmt.Errorf("sqlserver: opening %s: %w", path, err)
	}
	if !writes {
		return ro, nil, nil
	}
	wdsn, err := sqliteDSN(path, "mode=rw", "_pragma=busy_timeout(5000)", "_pragma=foreign_keys(1)", "_pragma=temp_store(2)")
	if err != nil {
		ro.Close()
		return nil, nil, err
	}
	wbase, err := sqlite.NewConnector(wdsn)
	if err != nil {
		ro.Close()
		return nil, nil, err
	}
	rw = sql.OpenDB(authorized{wbase, writeAuthorizer})
	rw.SetMaxOpenConns(1)
	rw.SetMaxIdleConns(1)
	return ro, rw, nil
}

// authorized installs an SQLite authorizer on every connection it opens.
type authorized struct {
	driver.Connector
	fn sqlite.AuthorizerFn
}

func (a authorized) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := a.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	r, ok := c.(sqlite.AuthorizerRegisterer)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("sqlserver: SQLite connection %T has no authorizer", c)
	}
	if err := r.RegisterAuthorizer(a.fn); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// readPragmas are the pragmas that take an argument yet only read.
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true,
	"table_list": true, "integrity_check": true, "quick_check": true,
}

// sessionAction refuses what would leave state on a connection past its
// call: transaction control and savepoints (ROLLBACK, which can only end a
// transaction, is allowed: the dialect runs it after every call) and pragma
// assignments.
func sessionAction(action sqlite.AuthorizerActionCode, arg1, arg2 string) bool {
	switch action {
	case sqlite.AuthTransaction:
		return !strings.EqualFold(arg1, "ROLLBACK")
	case sqlite.AuthSavepoint:
		return true
	case sqlite.AuthPragma:
		return arg2 != "" && !readPragmas[strings.ToLower(arg1)]
	}
	return false
}

func readAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthAttach, sqlite.AuthDetach,
		sqlite.AuthCreateTempTable, sqlite.AuthCreateTempIndex,
		sqlite.AuthCreateTempTrigger, sqlite.AuthCreateTempView:
		return sqlite.AuthorizerDeny
	}
	if sessionAction(action, arg1, arg2) {
		return sqlite.AuthorizerDeny
	}
	return sqlite.AuthorizerOK
}

// writeAuthorizer keeps confirmed writes to the one database file and to
// the one statement confirmed.
func writeAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	if action == sqlite.AuthAttach || action == sqlite.AuthDetach || sessionAction(action, arg1, arg2) {
		return sqlite.AuthorizerDeny
	}
	return sqlite.AuthorizerOK
}

func (sqliteDialect) oneStatement(sql string) error { return oneSQLiteStatement(sql) }

// inspectWrite compiles the statement (EXPLAIN) on the writable
// connection, the one that would run it: its schema, temporary triggers
// and foreign_keys setting are those the write will meet.
func (d sqliteDialect) inspectWrite(ctx context.Context, _, rw *sql.DB, query string, args []any) (triggerSet, error) {
	c, end, err := d.conn(ctx, rw)
	if err != nil {
		return triggerSet{}, err
	}
	defer end()
	return sqliteTriggers(ctx, c, query, args)
}

// conn takes a connection of db's with the value length limit set, and
// returns the function that gives it back: a connection that is somehow
// still in a transaction is rolled back first, or discarded.
func (d sqliteDialect) conn(ctx context.Context, db *sql.DB) (*sql.Conn, func(), error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := sqlite.Limit(c, sqlite3.SQLITE_LIMIT_LENGTH, d.maxLength); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, func() { endSQLite(c) }, nil
}

// endSQLite gives c back to its pool in autocommit mode.
func endSQLite(c *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil && !strings.Contains(err.Error(), "no transaction is active") {
		_ = c.Raw(func(any) error { return driver.ErrBadConn })
	}
	c.Close()
}

func (d sqliteDialect) begin(ctx context.Context, db *sql.DB) (querier, func(), error) {
	return d.conn(ctx, db)
}

// exec lists the statement's triggers for confirm and runs it on the same
// connection, which the write pool's only connection: no other write of
// this server comes between. total_changes() counts the rows changed by
// the statement, its triggers and its foreign-key actions; the driver's
// count of affected rows is that of the last INSERT, UPDATE or DELETE on
// the connection, so a statement that changed none (DDL) is held to the
// total.
func (d sqliteDialect) exec(ctx context.Context, rw *sql.DB, query string, args []any, confirm func(triggerSet) error) (writeResult, error) {
	c, end, err := d.conn(ctx, rw)
	if err != nil {
		return writeResult{}, err
	}
	defer end()
	set, err := sqliteTriggers(ctx, c, query, args)
	if err != nil {
		return writeResult{}, err
	}
	if err := confirm(set); err != nil {
		return writeResult{}, err
	}
	var before, after int64
	if err := scanOne(ctx, c, "SELECT total_changes()", nil, &before); err != nil {
		return writeResult{}, err
	}
	res, err := c.ExecContext(ctx, query, args...)
	if err != nil {
		return writeResult{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return writeResult{}, err
	}
	if err := scanOne(ctx, c, "SELECT total_changes()", nil, &after); err != nil {
		return writeResult{}, err
	}
	total := after - before
	return writeResult{rows: min(n, total), total: total}, nil
}

// limitError names the limit behind SQLite's "too big" and "out of
// memory" errors, and what the authorizer refuses.
func (d sqliteDialect) limitError(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_TOOBIG:
		return &limitError{tooBigMessage(d.maxLength)}
	case sqlite3.SQLITE_NOMEM:
		return &limitError{outOfMemoryMessage(d.maxMemory)}
	case sqlite3.SQLITE_AUTH:
		return fmt.Errorf("database error: %w (refused: statements here do not ATTACH or DETACH databases, "+
			"control transactions (BEGIN, COMMIT, SAVEPOINT), create temporary objects or assign pragmas)", err)
	}
	return nil
}

func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func (sqliteDialect) listTables(ctx context.Context, q querier) ([]tableRef, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type FROM sqlite_schema
		WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tableRef
	for rows.Next() {
		var t tableRef
		if err := rows.Scan(&t.Name, &t.Kind); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (sqliteDialect) describe(ctx context.Context, q querier, t tableRef) (*tableInfo, error) {
	info := newTableInfo(t)
	rows, err := q.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid`, t.Name)
	if err != nil {
		return nil, err
	}
	type pkCol struct {
		name string
		pos  int
	}
	var pks []pkCol
	for rows.Next() {
		var c columnInfo
		var notNull, pk int
		var dflt sql.NullString
		if err := rows.Scan(&c.Name, &c.Type, &notNull, &dflt, &pk); err != nil {
			rows.Close()
			return nil, err
		}
		c.Nullable = notNull == 0 && pk == 0
		if dflt.Valid {
			c.Default = &dflt.String
		}
		if pk > 0 {
			c.PrimaryKey = true
			pks = append(pks, pkCol{c.Name, pk})
		}
		info.Columns = append(info.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := 1; i <= len(pks); i++ {
		for _, p := range pks {
			if p.pos == i {
				info.PrimaryKey = append(info.PrimaryKey, p.name)
			}
		}
	}
	if t.Kind == "view" {
		return info, nil
	}
	rows, err = q.QueryContext(ctx, `SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq`, t.Name)
	if err != nil {
		return nil, err
	}
	lastID := -1
	for rows.Next() {
		var id int
		var ref, from string
		var to sql.NullString
		if err := rows.Scan(&id, &ref, &from, &to); err != nil {
			rows.Close()
			return nil, err
		}
		if id != lastID {
			info.ForeignKeys = append(info.ForeignKeys, foreignKey{RefTable: ref, Columns: []string{}, RefColumns: []string{}})
			lastID = id
		}
		fk := &info.ForeignKeys[len(info.ForeignKeys)-1]
		fk.Columns = append(fk.Columns, from)
		fk.RefColumns = append(fk.RefColumns, to.String)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT l.name, l."unique", l.origin, group_concat(i.name, char(31))
		FROM pragma_index_list(?) AS l, pragma_index_info(l.name) AS i
		GROUP BY l.name ORDER BY l.name`, t.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var ix indexInfo
		var unique int
		var origin string
		var cols sql.NullString
		if err := rows.Scan(&ix.Name, &unique, &origin, &cols); err != nil {
			return nil, err
		}
		ix.Unique, ix.Primary = unique == 1, origin == "pk"
		ix.Columns = strings.Split(cols.String, "\x1f")
		info.Indexes = append(info.Indexes, ix)
	}
	return info, rows.Err()
}

func (sqliteDialect) countRows(ctx context.Context, q querier, t tableRef) (int64, bool, error) {
	var n int64
	err := scanOne(ctx, q, "SELECT count(*) FROM "+t.ident(), nil, &n)
	return n, false, err
}

// estimateRows: SQLite keeps no estimate it would be safe to rely on
// (sqlite_stat1 exists only after ANALYZE, and ages).
func (sqliteDialect) estimateRows(context.Context, querier, tableRef) (float64, bool, error) {
	return 0, false, nil
}

func scanOne(ctx context.Context, q querier, query string, args []any, dest ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

func (sqliteDialect) explain(ctx context.Context, q querier, query string, args []any) (string, error) {
	rows, err := q.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	depth := map[int]int{0: -1}
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		d := depth[parent] + 1
		depth[id] = d
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", d), detail)
	}
	return b.String(), rows.Err()
}

func (d sqliteDialect) query(ctx context.Context, db *sql.DB, query string, args []any, lim scanLimits, read *atomic.Int64) (*queryResult, error) {
	q, end, err := d.begin(ctx, db)
	if err != nil {
		return nil, err
	}
	defer end()
	return scanRows(ctx, q, query, args, lim, read)
}
