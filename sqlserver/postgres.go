package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/stdlib"
)

// postgresDialect is the PostgreSQL dialect (pgx through database/sql).
//
// Reads run in BEGIN READ ONLY transactions on sessions whose
// default_transaction_read_only and limits (statement_timeout,
// lock_timeout, idle_in_transaction_session_timeout, work_mem) are set in
// their startup message (sessionLimits), and are always rolled back, which
// undoes any setting a statement made; advisory locks and prepared
// statements, which a rollback keeps, are released after it (pgread.go),
// and DISCARD ALL resets the session when that fails, so the next call
// finds the connection as it was opened. Writes (the writer's pool) get
// the limits with SET LOCAL and DISCARD ALL after each. Statements from tools go
// through the extended protocol, which takes exactly one statement, as the
// session's unnamed statement, which SQL cannot see, list or drop: a call
// whose SQL is the previous call's on that connection binds it again
// (pgSession). A cancelled context sends the server a cancel request, so the
// backend stops working too. A message from the server larger than
// maxBodyLen ends the connection instead of being read into memory.
type postgresDialect struct {
	maxBodyLen  int
	workMem     int64 // bytes
	lockTimeout time.Duration
	timeout     time.Duration // StatementTimeout
	schemas     []string      // served, in search_path order
	types       *pgTypeCache  // names of result types
}

func newPostgresDialect(o Options) postgresDialect {
	share := o.MaxMemory / int64(o.MaxConcurrent)
	return postgresDialect{
		maxBodyLen:  int(max(share/2, int64(o.MaxResultBytes)+64<<10)),
		workMem:     max(share/4, 64<<10),
		lockTimeout: min(o.StatementTimeout, 5*time.Second),
		timeout:     o.StatementTimeout,
		types:       &pgTypeCache{},
	}
}

func (postgresDialect) name() string { return "PostgreSQL" }

// endsOnCancel: a call's context ending sends PostgreSQL a cancel request,
// and interruptGrace later ends every read and write on the connection
// (cancelBackend), which the pool then discards.
func (postgresDialect) endsOnCancel() bool { return true }

func cancelBackend(c *pgconn.PgConn) ctxwatch.Handler {
	return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: interruptGrace}
}

func pgConfig(dsn string, readOnly bool, maxBodyLen int) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlserver: parsing DSN: %w", err)
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
		cfg.DialFunc = dialSessions(cfg.DialFunc) // see pgSession
		cfg.AfterConnect = checkBackend
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "mcpkit-sql"
	}
	cfg.BuildContextWatcherHandler = cancelBackend
	// pgx's own statement cache is off: a named statement would outlive
	// its call and show its SQL in pg_prepared_statements, and DISCARD
	// ALL or a statement's own DEALLOCATE would invalidate it. The query
	// tool keeps only the unnamed statement (pgSession).
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		f := pgproto3.NewFrontend(r, w)
		f.SetMaxBodyLen(maxBodyLen)
		return f
	}
	return cfg, nil
}

func openPostgres(dsn string, writes bool, p *postgresDialect, schemas []string, conns int) (ro, rw *sql.DB, err error) {
	cfg, err := pgConfig(dsn, true, p.maxBodyLen)
	if err != nil {
		return nil, nil, err
	}
	if len(schemas) > 0 && cfg.RuntimeParams["search_path"] == "" {
		quoted := make([]string, len(schemas))
		for i, s := range schemas {
			quoted[i] = quoteIdent(s)
		}
		cfg.RuntimeParams["search_path"] = strings.Join(quoted, ", ")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// The read-only sessions' limits are in their startup message; the
	// role's own work_mem, when lower, is kept.
	probe, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlserver: connecting to PostgreSQL: %w", connectCause(err))
	}
	var roleWorkMem int64
	err = probe.QueryRow(ctx, "SELECT pg_size_bytes(current_setting('work_mem'))").Scan(&roleWorkMem)
	if err == nil {
		p.schemas, err = servedSchemas(ctx, probe, schemas)
	}
	probe.Close(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlserver: connecting to PostgreSQL: %w", err)
	}
	if roleWorkMem > 0 {
		p.workMem = min(p.workMem, roleWorkMem) // the role's own, when lower
	}
	p.sessionLimits(cfg)
	ro = stdlib.OpenDB(*cfg)
	ro.SetMaxOpenConns(conns)
	ro.SetMaxIdleConns(conns)
	if err := ro.PingContext(ctx); err != nil {
		ro.Close()
		return nil, nil, fmt.Errorf("sqlserver: connecting to PostgreSQL: %w", connectCause(err))
	}
	if !writes {
		return ro, nil, nil
	}
	wcfg, err := pgConfig(dsn, false, p.maxBodyLen)
	if err != nil {
		ro.Close()
		return nil, nil, err
	}
	rw = stdlib.OpenDB(*wcfg)
	rw.SetMaxOpenConns(2)
	rw.SetMaxIdleConns(2)
	return ro, rw, nil
}

// servedSchemas returns the schemas named (refusing those that do not
// exist or the role may not use), or those on the role's search_path.
func servedSchemas(ctx context.Context, c *pgx.Conn, named []string) ([]string, error) {
	if len(named) == 0 {
		var out []string
		err := c.QueryRow(ctx, "SELECT current_schemas(false)::text[]").Scan(&out)
		return out, err
	}
	rows, err := c.Query(ctx, `SELECT s FROM unnest($1::text[]) AS s
		WHERE NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = s) OR NOT has_schema_privilege(s, 'USAGE')`, named)
	if err != nil {
		return nil, err
	}
	bad, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("no schema %s that the role may use (--schema / Options.Schemas)", strings.Join(bad, ", "))
	}
	return named, nil
}

// sessionLimits puts the limits of every read-only session in cfg's
// startup message, where they are the session's own values: what every
// rollback returns to, and what DISCARD ALL resets to. Output formats the
// encoder reads (pgread.go) are fixed too.
func (p postgresDialect) sessionLimits(cfg *pgx.ConnConfig) {
	ms := max(p.timeout.Milliseconds(), 1)
	lock := min(ms, max(p.lockTimeout.Milliseconds(), 1))
	workMem := p.workMem
	cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(ms, 10)
	cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(lock, 10)
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(ms+1000, 10)
	cfg.RuntimeParams["work_mem"] = strconv.FormatInt(max(workMem/1024, 64), 10) + "kB"
	cfg.RuntimeParams["DateStyle"] = "ISO"
	cfg.RuntimeParams["bytea_output"] = "hex"
	cfg.RuntimeParams["standard_conforming_strings"] = "on"
}

// causeError is a failed connection told by its cause.
type causeError struct {
	msg string
	err error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }

// connectCause returns the most telling of the errors of a failed
// connection: with sslmode=prefer (libpq's default) pgx tries TLS first,
// and the first error it reports is often the TLS one, not the cause.
func connectCause(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	u := errors.Unwrap(ce)
	if u == nil {
		return err
	}
	var multi interface{ Unwrap() []error }
	if errors.As(u, &multi) {
		errs := multi.Unwrap()
		// The last attempt (without TLS) names the cause; a TLS refusal
		// says only that the server does not speak TLS.
		for i := len(errs) - 1; i >= 0; i-- {
			if !strings.Contains(errs[i].Error(), "tls") && !strings.Contains(errs[i].Error(), "SSL") {
				return &causeError{msg: fmt.Sprintf("%v (user %s, database %s)", errs[i], ce.Config.User, ce.Config.Database), err: err}
			}
		}
	}
	return err
}

// limits returns the statements that open a transaction with the call's
// limits: statement_timeout is what is left of ctx's deadline.
func (p postgresDialect) limits(ctx context.Context, begin string) string {
	ms := int64(30_000)
	if dl, ok := ctx.Deadline(); ok {
		ms = max(time.Until(dl).Milliseconds(), 1)
	}
	lock := min(ms, max(p.lockTimeout.Milliseconds(), 1))
	if id, ok := identityFrom(ctx); ok {
		begin = strings.Join(append([]string{begin}, id.statements()...), "; ")
	}
	return fmt.Sprintf("%s; SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; "+
		"SET LOCAL idle_in_transaction_session_timeout = %d; SET LOCAL work_mem = '%dkB'",
		begin, ms, lock, ms+1000, max(p.workMem/1024, 64))
}

// session takes a connection of db's and opens a transaction on it with
// the call's limits; end rolls it back and resets the session, or discards
// the connection when that fails.
func (p postgresDialect) session(ctx context.Context, db *sql.DB, begin string) (*sql.Conn, func(), error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.ExecContext(ctx, p.limits(ctx, begin)); err != nil {
		discard(c)
		return nil, nil, err
	}
	return c, func() { endPostgres(c) }, nil
}

// endPostgres leaves c as it was opened: the transaction rolled back, and
// DISCARD ALL for what outlives a transaction (advisory locks, prepared
// statements, LISTEN, session settings of a committed statement).
func endPostgres(c *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.ExecContext(ctx, "ROLLBACK")
	if err == nil {
		_, err = c.ExecContext(ctx, "DISCARD ALL")
	}
	if err != nil {
		discard(c)
		return
	}
	c.Close()
}

// discard closes c and keeps it out of the pool.
func discard(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	c.Close()
}

// begin opens a read-only transaction on a read-only session, whose
// limits are the session's own (sessionLimits); end rolls it back and
// releases what a rollback leaves (see pgread.go), or resets the session.
func (p postgresDialect) begin(ctx context.Context, db *sql.DB) (querier, func(), error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	begin := "BEGIN READ ONLY"
	if id, ok := identityFrom(ctx); ok {
		begin = strings.Join(append([]string{begin}, id.statements()...), "; ")
	}
	if _, err := c.ExecContext(ctx, begin); err != nil {
		discard(c)
		return nil, nil, err
	}
	return c, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := c.ExecContext(ctx, strings.Join(pgReadTail, "; ")); err != nil {
			endPostgres(c)
			return
		}
		c.Close()
	}, nil
}

func (postgresDialect) oneStatement(sql string) error {
	if strings.IndexByte(sql, 0) >= 0 {
		return errNUL
	}
	// The extended protocol refuses several statements itself.
	return nil
}

// inspectWrite parses the statement (a statement that cannot run is
// refused) and lists its triggers, in a read-only transaction: planning a
// write is not running it.
func (p postgresDialect) inspectWrite(ctx context.Context, ro, _ *sql.DB, query string, args []any) (triggerSet, error) {
	c, end, err := p.session(ctx, ro, "BEGIN READ ONLY")
	if err != nil {
		return triggerSet{}, err
	}
	defer end()
	if err := prepare(ctx, c, query); err != nil {
		return triggerSet{}, err
	}
	return postgresTriggers(ctx, c, query, args)
}

// prepare has the server parse and analyse one statement without running
// it.
func prepare(ctx context.Context, c *sql.Conn, query string) error {
	return c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("sqlserver: unexpected PostgreSQL connection %T", dc)
		}
		_, err := sc.Conn().PgConn().Prepare(ctx, "", query, nil)
		return err
	})
}

// exec runs a write through the extended protocol even without
// parameters (pgx would send a parameterless Exec as a simple query,
// which runs a whole script), and commits it. In the same transaction it
// first lists the statement's triggers for confirm (which locks the tables
// it writes against new triggers), and counts the rows the transaction
// changed in all (pg_stat_xact_user_tables) around it.
func (p postgresDialect) exec(ctx context.Context, db *sql.DB, query string, args []any, confirm func(triggerSet) error) (writeResult, error) {
	c, end, err := p.session(ctx, db, "BEGIN")
	if err != nil {
		return writeResult{}, err
	}
	defer end()
	set, err := postgresTriggers(ctx, c, query, args)
	if err != nil {
		return writeResult{}, err
	}
	if err := confirm(set); err != nil {
		return writeResult{}, err
	}
	var before, after int64
	if err := scanOne(ctx, c, pgChanges, nil, &before); err != nil {
		return writeResult{}, err
	}
	var n int64
	err = c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("sqlserver: unexpected PostgreSQL connection %T", dc)
		}
		rows, err := sc.Conn().Query(ctx, query, args...)
		if err != nil {
			return err
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		n = rows.CommandTag().RowsAffected()
		return nil
	})
	if err != nil {
		return writeResult{}, err
	}
	if err := scanOne(ctx, c, pgChanges, nil, &after); err != nil {
		return writeResult{}, err
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return writeResult{}, err
	}
	total := after - before
	if total < n {
		total = -1 // statistics are not collected (track_counts off)
	}
	return writeResult{rows: n, total: total}, nil
}

// limitError names the limit behind a message too large to read.
func (p postgresDialect) limitError(err error) error {
	var big *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &big) {
		return &limitError{tooBigMessage(p.maxBodyLen)}
	}
	return nil
}

// isStatementTimeout reports PostgreSQL's statement_timeout cancellation.
func isStatementTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "57014" && strings.Contains(pe.Message, "statement timeout")
}

// pgRelations are the relations served: those of the served schemas the
// role may read.
func (p postgresDialect) pgRelations() string {
	return `FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname IN (` + p.schemaList() + `) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
	AND has_table_privilege(c.oid, 'SELECT')`
}

// schemaList is the served schemas as a list of SQL string literals.
func (p postgresDialect) schemaList() string {
	if len(p.schemas) == 0 {
		return "current_schema()"
	}
	out := make([]string, len(p.schemas))
	for i, s := range p.schemas {
		out[i] = quoteLiteral(s)
	}
	return strings.Join(out, ", ")
}

// quoteLiteral quotes s as an SQL string literal (standard_conforming_strings
// is on in every session, sessionLimits).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (p postgresDialect) listTables(ctx context.Context, q querier) ([]tableRef, error) {
	rows, err := q.QueryContext(ctx, `SELECT n.nspname, c.relname, CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END, c.oid::bigint `+
		p.pgRelations()+` ORDER BY array_position(ARRAY[`+p.schemaList()+`]::text[], n.nspname::text), c.relname`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tableRef
	for rows.Next() {
		var t tableRef
		var oid int64
		if err := rows.Scan(&t.schema, &t.rel, &t.Kind, &oid); err != nil {
			return nil, err
		}
		t.oid = uint32(oid)
		t.Name = t.rel
		if len(p.schemas) > 1 {
			t.Name = t.schema + "." + t.rel
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (p postgresDialect) describe(ctx context.Context, q querier, t tableRef) (*tableInfo, error) {
	info := newTableInfo(t)
	oid := int64(t.oid)
	var comment sql.NullString
	if err := scanOne(ctx, q, `SELECT obj_description($1::bigint::oid, 'pg_class')`, []any{oid}, &comment); err != nil {
		return nil, err
	}
	info.Comment = comment.String
	rows, err := q.QueryContext(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
			pg_get_expr(d.adbin, d.adrelid), col_description(a.attrelid, a.attnum),
			COALESCE((SELECT k.ord FROM pg_index i, unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
				WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.attnum = a.attnum), 0)
		FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1::bigint::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, err
	}
	pkAt := map[int]string{}
	for rows.Next() {
		var c columnInfo
		var dflt, comment sql.NullString
		var pk int
		if err := rows.Scan(&c.Name, &c.Type, &c.Nullable, &dflt, &comment, &pk); err != nil {
			rows.Close()
			return nil, err
		}
		if dflt.Valid {
			c.Default = &dflt.String
		}
		c.Comment = comment.String
		if pk > 0 {
			c.PrimaryKey = true
			pkAt[pk] = c.Name
		}
		info.Columns = append(info.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := 1; i <= len(pkAt); i++ {
		info.PrimaryKey = append(info.PrimaryKey, pkAt[i])
	}
	rows, err = q.QueryContext(ctx, `SELECT con.conname, fa.attname,
			CASE WHEN $2 THEN rc.relnamespace::regnamespace::text || '.' ELSE '' END || rc.relname, ra.attname
		FROM pg_constraint con
		CROSS JOIN LATERAL unnest(con.conkey, con.confkey) WITH ORDINALITY AS k(src, dst, ord)
		JOIN pg_attribute fa ON fa.attrelid = con.conrelid AND fa.attnum = k.src
		JOIN pg_class rc ON rc.oid = con.confrelid
		JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = k.dst
		WHERE con.conrelid = $1::bigint::oid AND con.contype = 'f'
		ORDER BY con.conname, k.ord`, oid, len(p.schemas) > 1)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name, from, ref, to string
		if err := rows.Scan(&name, &from, &ref, &to); err != nil {
			rows.Close()
			return nil, err
		}
		if n := len(info.ForeignKeys); n == 0 || info.ForeignKeys[n-1].Name != name {
			info.ForeignKeys = append(info.ForeignKeys, foreignKey{Name: name, RefTable: ref, Columns: []string{}, RefColumns: []string{}})
		}
		fk := &info.ForeignKeys[len(info.ForeignKeys)-1]
		fk.Columns = append(fk.Columns, from)
		fk.RefColumns = append(fk.RefColumns, to)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT ic.relname, i.indisunique, i.indisprimary, pg_get_indexdef(i.indexrelid),
			COALESCE((SELECT string_agg(a.attname, chr(31) ORDER BY k.ord)
				FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
				JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum), '')
		FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
		WHERE i.indrelid = $1::bigint::oid ORDER BY ic.relname`, oid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var ix indexInfo
		var cols string
		if err := rows.Scan(&ix.Name, &ix.Unique, &ix.Primary, &ix.Definition, &cols); err != nil {
			return nil, err
		}
		ix.Columns = []string{}
		if cols != "" {
			ix.Columns = strings.Split(cols, "\x1f")
		}
		info.Indexes = append(info.Indexes, ix)
	}
	return info, rows.Err()
}

// exactCountBelow is the planner estimate under which tables are counted
// exactly; larger ones report the estimate.
const exactCountBelow = 100_000

func (postgresDialect) countRows(ctx context.Context, q querier, t tableRef) (int64, bool, error) {
	var est float64
	if err := scanOne(ctx, q, `SELECT reltuples::float8 FROM pg_class WHERE oid = $1::bigint::oid`, []any{int64(t.oid)}, &est); err != nil {
		return 0, false, err
	}
	if est >= exactCountBelow {
		return int64(est), true, nil
	}
	var n int64
	err := scanOne(ctx, q, "SELECT count(*) FROM "+t.ident(), nil, &n)
	return n, false, err
}

// estimateRows returns pg_class.reltuples, which VACUUM and ANALYZE keep;
// -1 (PostgreSQL 14 and later) until they first run.
func (postgresDialect) estimateRows(ctx context.Context, q querier, t tableRef) (float64, bool, error) {
	var est float64
	if err := scanOne(ctx, q, `SELECT reltuples::float8 FROM pg_class WHERE oid = $1::bigint::oid`, []any{int64(t.oid)}, &est); err != nil {
		return 0, false, err
	}
	return est, est >= 0, nil
}

func (postgresDialect) explain(ctx context.Context, q querier, query string, args []any) (string, error) {
	// With an option list, "ANALYZE SELECT ..." is not EXPLAIN ANALYZE:
	// the statement is planned, never run.
	rows, err := q.QueryContext(ctx, "EXPLAIN (FORMAT TEXT) "+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		b.WriteString(line + "\n")
	}
	return b.String(), rows.Err()
}
