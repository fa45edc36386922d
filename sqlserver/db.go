package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/server"
)

// DB is an open database served over MCP. Register adds its resources,
// tools and prompts to a server core; Close stops change detection and
// closes the connections. It is safe for concurrent use.
type DB struct {
	opts    Options
	dialect dialect
	ro      *sql.DB // read-only connections: every read runs here
	rw      *sql.DB // writable connections, only with AllowWrites

	served string // the name it is served by beside other databases (RegisterAll), or ""

	mu      sync.Mutex
	servers []*server.Server
	tables  []tableRef // as last seen by Open or the poller

	slots   chan struct{}  // one per running statement, MaxConcurrent
	runMu   sync.Mutex     // guards closed and running.Add
	closed  bool           // set by Close: no new statements
	running sync.WaitGroup // statements, including any past their call
	closing chan struct{}  // closed by Close, ending waits for a place

	// progressEvery is how often long statements report progress.
	progressEvery time.Duration

	ask  *askCache       // the ask prompt's descriptions of tables
	kept readCache       // the schema overview and table descriptions
	life context.Context // cancelled by Close

	stop      context.CancelFunc
	watchDone chan struct{}
	closeOnce sync.Once
	heapLimit bool // this DB holds a share of SQLite's heap limit
}

// querier is what reads need of a connection or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// dialect holds what differs between SQLite and PostgreSQL.
type dialect interface {
	// name is the dialect's name as a prompt states it.
	name() string
	// endsOnCancel reports that a statement whose context ends returns
	// within interruptGrace, whatever it was doing: statement then runs it
	// on the caller's goroutine.
	endsOnCancel() bool
	// begin opens a read-only scope on a connection of db's for one call
	// within ctx's deadline; end releases it and leaves the connection as
	// it found it.
	begin(ctx context.Context, db *sql.DB) (q querier, end func(), err error)
	// exec runs one write statement on rw within ctx's deadline, once
	// confirm has accepted the triggers it finds the statement fires, and
	// reports the rows it affected and the rows changed in all.
	exec(ctx context.Context, rw *sql.DB, query string, args []any, confirm func(triggerSet) error) (writeResult, error)
	// oneStatement refuses SQL that is not exactly one statement, where
	// the database would run more.
	oneStatement(sql string) error
	// inspectWrite has the database compile one write statement without
	// running it, so a statement that cannot run is refused before the
	// user is asked to confirm it, and lists the triggers it would fire.
	inspectWrite(ctx context.Context, ro, rw *sql.DB, sql string, args []any) (triggerSet, error)
	// limitError names the limit err hit, or returns nil.
	limitError(err error) error
	listTables(ctx context.Context, q querier) ([]tableRef, error)
	describe(ctx context.Context, q querier, t tableRef) (*tableInfo, error)
	countRows(ctx context.Context, q querier, t tableRef) (n int64, estimated bool, err error)
	// estimateRows returns the database's estimate of t's rows, without
	// reading them, where it keeps one.
	estimateRows(ctx context.Context, q querier, t tableRef) (n float64, ok bool, err error)
	explain(ctx context.Context, q querier, query string, args []any) (string, error)
	// query runs one statement of the query tool in a read-only scope on
	// a connection of db's, skipping lim.skip rows and reading within
	// lim, and encodes its rows for the answer.
	query(ctx context.Context, db *sql.DB, query string, args []any, lim scanLimits, read *atomic.Int64) (*queryResult, error)
	// newWatcher returns the change detector polling db.
	newWatcher(db *sql.DB) watcher
}

// Open opens the database opts names (see Options) and loads its table list.
// A nil opts means the demo database.
func Open(ctx context.Context, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	if o.Path != "" && o.DSN != "" {
		return nil, errors.New("sqlserver: set Path or DSN, not both")
	}
	ctx = internalContext(ctx)
	if o.WriteScope != "" && !server.ValidScope(o.WriteScope) {
		return nil, fmt.Errorf("sqlserver: WriteScope %q is not an OAuth scope token", o.WriteScope)
	}
	d := &DB{opts: o, slots: make(chan struct{}, o.MaxConcurrent), closing: make(chan struct{}), progressEvery: progressEvery,
		ask: newAskCache()}
	// Connections: MaxConcurrent statements, the ask prompt's computation
	// (askCache), change detection, and one to spare.
	conns := o.MaxConcurrent + 3
	var err error
	if o.DSN != "" {
		pg := newPostgresDialect(o)
		d.ro, d.rw, err = openPostgres(o.DSN, o.AllowWrites, &pg, o.Schemas, conns)
		d.dialect = pg
		if err == nil {
			err = d.checkRole(ctx)
			if err == nil {
				err = d.checkIdentity(ctx)
			}
			if err != nil {
				d.closeConns()
			}
		}
	} else {
		if o.CallerClaims || o.RoleClaim != "" {
			return nil, errors.New("sqlserver: CallerClaims and RoleClaim need PostgreSQL")
		}
		if !enableMemstatus() {
			o.Logger.Warn("sqlserver: SQLite was in use in this process before the first Open, so its heap limit (MaxMemory, --max-memory) is not enforced")
		}
		path := o.Path
		if path == "" {
			if path, err = demoPath(); err != nil {
				return nil, err
			}
			if err := EnsureDemo(path); err != nil {
				return nil, err
			}
		}
		d.dialect = sqliteDialect{maxLength: o.MaxResultBytes, maxMemory: o.MaxMemory}
		d.ro, d.rw, err = openSQLite(path, o.AllowWrites, conns)
		if err == nil {
			holdHeapLimit(d, o.MaxMemory/3)
			d.heapLimit = true
		}
	}
	if err != nil {
		return nil, err
	}
	tables, err := d.listTables(ctx)
	if err != nil {
		d.closeConns()
		return nil, fmt.Errorf("sqlserver: listing tables: %w", err)
	}
	d.tables = tables
	wctx, cancel := context.WithCancel(internalContext(context.Background()))
	d.stop, d.life = cancel, wctx
	d.watchDone = make(chan struct{})
	// Kept reads would show one caller what another may see.
	d.kept.on = o.PollInterval >= 0 && !o.CallerClaims && o.RoleClaim == ""
	if o.PollInterval < 0 {
		close(d.watchDone)
		return d, nil
	}
	// The baseline is taken before Open returns, so every change made
	// after it is seen.
	w := d.dialect.newWatcher(d.ro)
	pctx, pcancel := context.WithTimeout(ctx, o.StatementTimeout)
	base, err := w.poll(pctx)
	pcancel()
	if err != nil {
		w.close()
		cancel()
		d.closeConns()
		return nil, fmt.Errorf("sqlserver: reading change state: %w", err)
	}
	go d.watch(wctx, w, base)
	return d, nil
}

func demoPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("sqlserver: no cache directory for the demo database: %w", err)
	}
	return filepath.Join(dir, "mcpkit", "demo.db"), nil
}

// Close stops change detection, refuses new statements, waits for those
// running to end (they are interrupted when their calls end) and closes
// the database connections. It is idempotent.
func (d *DB) Close() error {
	var err error
	d.closeOnce.Do(func() {
		d.stop()
		<-d.watchDone
		d.drain()
		err = d.closeConns()
	})
	return err
}

func (d *DB) closeConns() error {
	err := d.ro.Close()
	if d.rw != nil {
		err = errors.Join(err, d.rw.Close())
	}
	if d.heapLimit {
		releaseHeapLimit(d)
		d.heapLimit = false
	}
	return err
}

// Dialect returns "SQLite" or "PostgreSQL".
func (d *DB) Dialect() string { return d.dialect.name() }

// read runs fn in a read-only scope under the server's limits (see
// statement).
func (d *DB) read(ctx context.Context, fn func(ctx context.Context, q querier) error) error {
	return d.statement(ctx, func(ctx context.Context) error {
		q, end, err := d.dialect.begin(ctx, d.ro)
		if err != nil {
			return err
		}
		defer end()
		return fn(ctx, q)
	})
}

// dbError turns a failure into what a tool or resource reports: a limit
// by name, the database's own message otherwise.
func (d *DB) dbError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || isStatementTimeout(err) {
		return &limitError{timeoutMessage(d.opts.StatementTimeout)}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var le *limitError
	if errors.As(err, &le) || errors.Is(err, errClosed) {
		return err
	}
	if le := d.dialect.limitError(err); le != nil {
		return le
	}
	return fmt.Errorf("database error: %w", err)
}

// limitError is a refusal that already names its limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

func (d *DB) listTables(ctx context.Context) ([]tableRef, error) {
	var tables []tableRef
	err := d.read(ctx, func(ctx context.Context, q querier) error {
		var err error
		tables, err = d.dialect.listTables(ctx, q)
		return err
	})
	return tables, err
}

// lookup returns the known table called name, refreshing the list once
// when it is not known.
func (d *DB) lookup(ctx context.Context, name string) (tableRef, bool, error) {
	d.mu.Lock()
	tables := d.tables
	d.mu.Unlock()
	if t, ok := resolveTable(tables, name); ok {
		return t, true, nil
	}
	tables, err := d.listTables(ctx)
	if err != nil {
		return tableRef{}, false, err
	}
	t, ok := resolveTable(tables, name)
	return t, ok, nil
}

// knownTables returns the table list as last seen.
func (d *DB) knownTables() []tableRef {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tables
}

// Register adds the database's resources, tools and prompts to s, with the
// query view (QueryViewURI) and the extension that advertises it. It may
// be called for several servers; change notifications reach all of them.
func (d *DB) Register(s *server.Server) {
	d.mu.Lock()
	d.servers = append(d.servers, s)
	tables := d.tables
	d.mu.Unlock()
	d.addResources(s, tables)
	d.addView(s)
	d.addTools(s)
	d.addPrompts(s)
}

func (d *DB) eachServer(fn func(s *server.Server)) {
	d.mu.Lock()
	servers := append([]*server.Server(nil), d.servers...)
	d.mu.Unlock()
	for _, s := range servers {
		fn(s)
	}
}
