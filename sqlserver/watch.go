package sqlserver

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/server"
)

// snapshot is what change detection knows of the database at one poll.
type snapshot struct {
	schema string            // changes with any table definition
	tables []tableRef        // tables and views
	prints map[string]string // per-table data fingerprint
	// dataChanged reports that the database saw a commit since the last
	// poll, whether or not a fingerprint shows where (SQLite data_version).
	dataChanged bool
	// printsUnique reports that no later change of a table repeats a pair
	// of its fingerprints (before, after): PostgreSQL's row versions and
	// statistics counters only grow, while SQLite's count and max(rowid)
	// come back after a delete and a new insert.
	printsUnique bool
}

// watcher polls one database for changes.
type watcher interface {
	// poll returns the current snapshot, or nil when the database reports
	// nothing changed since the previous poll.
	poll(ctx context.Context) (*snapshot, error)
	close()
}

// watch is the change-detection loop, owned by DB: Open starts it and Close
// stops it. It publishes resources/updated for changed tables and keeps
// each server's table resources in step with the database.
func (d *DB) watch(ctx context.Context, w watcher, last *snapshot) {
	defer close(d.watchDone)
	defer w.close()
	t := time.NewTicker(d.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, d.opts.StatementTimeout)
		snap, err := w.poll(pctx)
		cancel()
		if err != nil {
			d.kept.forget() // what changed is not known
		}
		if err != nil || snap == nil {
			continue
		}
		if last != nil {
			d.apply(last, snap)
		}
		last = snap
	}
}

func sameTables(a, b []tableRef) bool {
	return slices.EqualFunc(a, b, func(x, y tableRef) bool { return x.Name == y.Name && x.Kind == y.Kind })
}

// apply announces the differences between two snapshots.
func (d *DB) apply(old, now *snapshot) {
	listChanged := !sameTables(old.tables, now.tables)
	if listChanged {
		d.mu.Lock()
		d.tables = now.tables
		d.mu.Unlock()
		d.eachServer(func(s *server.Server) { d.syncResources(s, old.tables, now.tables) })
	}
	var updated []string
	if listChanged || old.schema != now.schema {
		updated = append(updated, d.uri("schema"))
	}
	dataChanged := false
	var changed []string
	// A table whose fingerprints say which change it saw is announced
	// with that change as its Key, so that replicas that poll the same
	// database and share a feed announce it once; other changes, which
	// only this poll's timing pins down, are announced by every replica
	// that sees them.
	keys := map[string]string{}
	for _, t := range now.tables {
		if p, ok := old.prints[t.Name]; ok && p != now.prints[t.Name] {
			uri := d.tableURI(t.Name)
			updated = append(updated, uri)
			changed = append(changed, t.Name)
			dataChanged = true
			if now.printsUnique {
				keys[uri] = changeKey(uri, p, now.prints[t.Name])
			}
		}
	}
	// A commit no fingerprint pins down (an UPDATE in SQLite, a view's
	// base tables) may have touched any table: announce them all. Views
	// follow their tables.
	everything := (now.dataChanged && !dataChanged && !listChanged) || old.schema != now.schema
	d.ask.forget(everything || listChanged, changed)
	existed := map[string]bool{}
	for _, t := range old.tables {
		existed[t.Name] = true
	}
	for _, t := range now.tables {
		if existed[t.Name] && (everything || t.Kind == "view" && dataChanged) {
			updated = append(updated, d.tableURI(t.Name))
		}
	}
	slices.Sort(updated)
	updated = slices.Compact(updated)
	if len(updated) > 0 || now.dataChanged {
		d.kept.forget()
	}
	d.eachServer(func(s *server.Server) {
		for _, u := range updated {
			s.Publish(server.Event{Kind: server.ResourceUpdated, URI: u, Key: keys[u]})
		}
	})
}

// changeKey names the change of the resource uri from one fingerprint to
// another, in a bounded size.
func changeKey(uri, before, after string) string {
	h := sha256.Sum256([]byte(uri + "\x00" + before + "\x00" + after))
	return "sql-change:" + hex.EncodeToString(h[:16])
}

// sqliteWatcher polls PRAGMA data_version on a connection of its own (the
// value changes when another connection commits), and on a change reads
// the table list and each table's count(*) and max(rowid).
type sqliteWatcher struct {
	db      *sql.DB
	conn    *sql.Conn
	version int64
	started bool
}

func (sqliteDialect) newWatcher(db *sql.DB) watcher { return &sqliteWatcher{db: db} }

func (w *sqliteWatcher) close() {
	if w.conn != nil {
		w.conn.Close()
	}
}

func (w *sqliteWatcher) poll(ctx context.Context) (*snapshot, error) {
	if w.conn == nil {
		c, err := w.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		w.conn = c
	}
	var v int64
	if err := scanOne(ctx, w.conn, "PRAGMA data_version", nil, &v); err != nil {
		return nil, err
	}
	if w.started && v == w.version {
		return nil, nil
	}
	snap := &snapshot{prints: map[string]string{}, dataChanged: w.started}
	var sv int64
	if err := scanOne(ctx, w.conn, "PRAGMA schema_version", nil, &sv); err != nil {
		return nil, err
	}
	snap.schema = fmt.Sprint(sv)
	tables, err := sqliteDialect{}.listTables(ctx, w.conn)
	if err != nil {
		return nil, err
	}
	snap.tables = tables
	for _, t := range tables {
		if t.Kind != "table" {
			continue
		}
		var n int64
		var top sql.NullInt64
		q := quoteIdent(t.Name)
		if err := scanOne(ctx, w.conn, "SELECT count(*), max(rowid) FROM "+q, nil, &n, &top); err != nil {
			// WITHOUT ROWID tables have no rowid.
			if err := scanOne(ctx, w.conn, "SELECT count(*) FROM "+q, nil, &n); err != nil {
				return nil, err
			}
		}
		snap.prints[t.Name] = fmt.Sprintf("%d/%d", n, top.Int64)
	}
	w.version, w.started = v, true
	return snap, nil
}

// postgresWatcher first compares the current snapshot (xmin, xmax and the
// transactions in progress): it stays the same until some transaction that
// writes starts or ends, so an idle database costs one cheap query per
// poll. When it moves, each table is fingerprinted: count(*) and max(xmin)
// for tables under fingerprintScanBelow rows (an insert, update or delete
// changes one of them), and for larger tables the row-change counters of
// pg_stat_user_tables, which are O(1) but appear only once the writing
// session flushes its statistics (up to about ten seconds later).
type postgresWatcher struct {
	p        postgresDialect
	db       *sql.DB
	snapshot string
	started  bool
}

const fingerprintScanBelow = 100_000

func (p postgresDialect) newWatcher(db *sql.DB) watcher { return &postgresWatcher{p: p, db: db} }

func (*postgresWatcher) close() {}

func (w *postgresWatcher) poll(ctx context.Context) (*snapshot, error) {
	p := w.p
	q, end, err := p.begin(ctx, w.db)
	if err != nil {
		return nil, err
	}
	defer end()
	var current string
	if err := scanOne(ctx, q, "SELECT txid_current_snapshot()::text", nil, &current); err != nil {
		return nil, err
	}
	if w.started && current == w.snapshot {
		return nil, nil
	}
	snap := &snapshot{prints: map[string]string{}, printsUnique: true}
	if snap.tables, err = p.listTables(ctx, q); err != nil {
		return nil, err
	}
	if err := scanOne(ctx, q, `SELECT md5(COALESCE(string_agg(c.relname || '.' || a.attname || ':' ||
			format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull::text, ',' ORDER BY c.relname, a.attnum), ''))
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname IN (`+p.schemaList()+`) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`, nil, &snap.schema); err != nil {
		return nil, err
	}
	stats, err := w.stats(ctx, q)
	if err != nil {
		return nil, err
	}
	for _, t := range snap.tables {
		if t.Kind != "table" {
			continue
		}
		var est float64
		if err := scanOne(ctx, q, `SELECT reltuples::float8 FROM pg_class WHERE oid = $1::bigint::oid`, []any{int64(t.oid)}, &est); err != nil {
			return nil, err
		}
		if est >= fingerprintScanBelow {
			snap.prints[t.Name] = "stats:" + stats[t.schema+"."+t.rel]
			continue
		}
		var print string
		if err := scanOne(ctx, q, "SELECT count(*) || '/' || COALESCE(max(xmin::text::bigint), 0) FROM "+t.ident(), nil, &print); err != nil {
			return nil, err
		}
		snap.prints[t.Name] = print
	}
	w.snapshot, w.started = current, true
	return snap, nil
}

func (w *postgresWatcher) stats(ctx context.Context, q querier) (map[string]string, error) {
	if _, err := q.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT schemaname || '.' || relname, n_tup_ins || '/' || n_tup_upd || '/' || n_tup_del || '/' || n_live_tup
		FROM pg_stat_user_tables WHERE schemaname IN (`+w.p.schemaList()+`)`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, print string
		if err := rows.Scan(&name, &print); err != nil {
			return nil, err
		}
		out[name] = print
	}
	return out, rows.Err()
}
