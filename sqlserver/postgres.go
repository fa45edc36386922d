package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
)

// postgresDialect is the PostgreSQL dialect (pgx through database/sql).
//
// Reads run in BEGIN READ ONLY transactions on sessions whose
// default_transaction_read_only is on, with a transaction-local
// statement_timeout, and are always rolled back, so even session settings
// a statement changes are undone. Statements go through the extended
// protocol, which takes exactly one statement. A cancelled context sends
// the server a cancel request, so the backend stops working too.
type postgresDialect struct{}

func (postgresDialect) name() string { return "PostgreSQL" }

func cancelBackend(c *pgconn.PgConn) ctxwatch.Handler {
	return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 3 * time.Second}
}

func pgConfig(dsn string, readOnly bool) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlserver: parsing DSN: %w", err)
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "mcpkit-sql"
	}
	cfg.BuildContextWatcherHandler = cancelBackend
	return cfg, nil
}

func openPostgres(dsn string, writes bool) (ro, rw *sql.DB, err error) {
	cfg, err := pgConfig(dsn, true)
	if err != nil {
		return nil, nil, err
	}
	ro = stdlib.OpenDB(*cfg)
	ro.SetMaxOpenConns(8)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := ro.PingContext(ctx); err != nil {
		ro.Close()
		return nil, nil, fmt.Errorf("sqlserver: connecting to PostgreSQL: %w", err)
	}
	if !writes {
		return ro, nil, nil
	}
	wcfg, err := pgConfig(dsn, false)
	if err != nil {
		ro.Close()
		return nil, nil, err
	}
	rw = stdlib.OpenDB(*wcfg)
	rw.SetMaxOpenConns(2)
	return ro, rw, nil
}

// localTimeout sets statement_timeout for the rest of tx to what is left
// of ctx's deadline.
func localTimeout(ctx context.Context, tx *sql.Tx) error {
	ms := int64(30_000)
	if dl, ok := ctx.Deadline(); ok {
		ms = max(time.Until(dl).Milliseconds(), 1)
	}
	_, err := tx.ExecContext(ctx, "SELECT set_config('statement_timeout', $1, true)", fmt.Sprint(ms))
	return err
}

func (postgresDialect) begin(ctx context.Context, db *sql.DB) (querier, func(), error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, err
	}
	if err := localTimeout(ctx, tx); err != nil {
		tx.Rollback()
		return nil, nil, err
	}
	return tx, func() { tx.Rollback() }, nil
}

func (postgresDialect) exec(ctx context.Context, db *sql.DB, query string, args []any) (int64, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := localTimeout(ctx, tx); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// isStatementTimeout reports PostgreSQL's statement_timeout cancellation.
func isStatementTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "57014" && strings.Contains(pe.Message, "statement timeout")
}

const pgRelations = `FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`

func (postgresDialect) listTables(ctx context.Context, q querier) ([]tableRef, error) {
	rows, err := q.QueryContext(ctx, `SELECT c.relname, CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END, c.oid::bigint `+
		pgRelations+` ORDER BY c.relname`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tableRef
	for rows.Next() {
		var t tableRef
		var oid int64
		if err := rows.Scan(&t.Name, &t.Kind, &oid); err != nil {
			return nil, err
		}
		t.oid = uint32(oid)
		out = append(out, t)
	}
	return out, rows.Err()
}

func (postgresDialect) describe(ctx context.Context, q querier, t tableRef) (*tableInfo, error) {
	info := newTableInfo(t)
	oid := int64(t.oid)
	rows, err := q.QueryContext(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
			pg_get_expr(d.adbin, d.adrelid),
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
		var dflt sql.NullString
		var pk int
		if err := rows.Scan(&c.Name, &c.Type, &c.Nullable, &dflt, &pk); err != nil {
			rows.Close()
			return nil, err
		}
		if dflt.Valid {
			c.Default = &dflt.String
		}
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
	rows, err = q.QueryContext(ctx, `SELECT con.conname, fa.attname, rc.relname, ra.attname
		FROM pg_constraint con
		CROSS JOIN LATERAL unnest(con.conkey, con.confkey) WITH ORDINALITY AS k(src, dst, ord)
		JOIN pg_attribute fa ON fa.attrelid = con.conrelid AND fa.attnum = k.src
		JOIN pg_class rc ON rc.oid = con.confrelid
		JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = k.dst
		WHERE con.conrelid = $1::bigint::oid AND con.contype = 'f'
		ORDER BY con.conname, k.ord`, oid)
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
const exactCountBelow = 1_000_000

func (postgresDialect) countRows(ctx context.Context, q querier, t tableRef) (int64, bool, error) {
	var est float64
	if err := scanOne(ctx, q, `SELECT reltuples::float8 FROM pg_class WHERE oid = $1::bigint::oid`, []any{int64(t.oid)}, &est); err != nil {
		return 0, false, err
	}
	if est >= exactCountBelow {
		return int64(est), true, nil
	}
	var n int64
	err := scanOne(ctx, q, "SELECT count(*) FROM "+quoteIdent(t.Name), nil, &n)
	return n, false, err
}

func (postgresDialect) explain(ctx context.Context, q querier, query string, args []any) (string, error) {
	rows, err := q.QueryContext(ctx, "EXPLAIN "+query, args...)
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
