package sqlserver

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Options configure a DB. The zero value opens the embedded demo database
// read-only with safe limits.
type Options struct {
	// Path is an SQLite database file. With neither Path nor DSN set, Open
	// uses the demo database in the user cache directory
	// (os.UserCacheDir()/mcpkit/demo.db), creating it when missing.
	Path string
	// DSN is a PostgreSQL connection string (postgres://...).
	DSN string
	// Name names the database where a server serves several
	// (RegisterAll): the tools' database argument, and its resources'
	// URIs, sql://{name}/schema and sql://{name}/table/{table}.
	Name string
	// Schemas are the PostgreSQL schemas served, in the order unqualified
	// names resolve in (they become the sessions' search_path unless the
	// DSN sets one); empty means those on the role's search_path. With
	// more than one, tables are named schema.table everywhere (resources,
	// describe_table, completion, the ask prompt); a name alone still
	// finds the table of the first schema that has it.
	Schemas []string

	// AllowWrites adds the execute tool, which runs a statement only after
	// the user confirms it through an elicitation.
	AllowWrites bool
	// WriteScope, when set, is an OAuth scope the caller must be granted
	// to see and call the execute tool (server.RequireScopes). It takes
	// effect where authorization is in force, that is where middleware
	// such as auth/resource.Protect puts the caller's scopes on the
	// request context; elsewhere execute is served to everyone as before.
	// It must be an OAuth scope token (no spaces or quotes).
	WriteScope string

	// AllowPrivilegedRole serves a PostgreSQL database even when the role
	// has privileges a window to the database must not have: superuser,
	// membership in pg_execute_server_program, pg_read_server_files,
	// pg_write_server_files or pg_signal_backend, BYPASSRLS, membership in
	// a superuser or BYPASSRLS role, ownership of the served tables, or
	// EXECUTE (its own, a group role's or PUBLIC's) on a SECURITY DEFINER
	// function owned by a role with any of those privileges. Without it
	// Open refuses such a role with a *PrivilegeError; with it Open logs a
	// warning per privilege.
	AllowPrivilegedRole bool

	// CallerClaims (PostgreSQL, under OAuth) runs every call with the
	// verified claims of the caller's access token (auth/resource's
	// Principal.Claims, as JSON) in the transaction-local setting
	// request.jwt.claims, as PostgREST does, so that row-level security
	// policies can read them:
	//
	//	USING (owner = nullif(current_setting('request.jwt.claims', true), '')::json->>'sub')
	//
	// A call without a token (stdio) runs with {}. Open refuses it unless
	// the role can execute neither set_config() nor DO blocks, with which
	// a statement could change the setting it is checked against.
	CallerClaims bool
	// RoleClaim (PostgreSQL, under OAuth) names a claim of the caller's
	// access token whose value picks, through Roles, the role each call
	// runs as (SET LOCAL ROLE); a call whose claim maps to no role (Roles
	// key "*" is the default) or that has no token is refused. The login
	// role must be granted the mapped roles, and is checked as
	// CallerClaims's is.
	RoleClaim string
	// Roles maps RoleClaim's values to PostgreSQL roles.
	Roles map[string]string

	// MaxRows caps the rows one query returns; 0 means 1000.
	MaxRows int
	// MaxResultBytes caps the JSON size of the rows one query returns; 0
	// means 4 MiB.
	MaxResultBytes int
	// StatementTimeout bounds every statement; 0 means 30s.
	StatementTimeout time.Duration
	// SampleRows is how many rows a table resource shows; 0 means 5, a
	// negative value shows none.
	SampleRows int
	// PollInterval is how often change detection looks at the database; 0
	// means 2s, a negative value turns change detection off.
	PollInterval time.Duration

	// MaxMemory bounds the memory statements may use; 0 means 256 MiB.
	// SQLite: a third of it is the library's heap limit
	// (sqlite3_hard_heap_limit64; its allocator can take up to about twice
	// what it counts, and the rest is for the rows read), with temporary
	// results kept in memory, so that a statement that needs more fails
	// rather than spilling to disk. The heap limit is process-wide: the
	// largest of the SQLite databases open in the process applies.
	// PostgreSQL: each statement's work_mem is at most a quarter of
	// MaxMemory divided by MaxConcurrent, and a message read from the
	// server at most half of that share (or MaxResultBytes, if larger).
	MaxMemory int64
	// MaxConcurrent caps the statements running at once, every tool call
	// and resource read included; 0 means 4. A call waits up to
	// QueueTimeout for its turn, then fails with a busy error. A statement
	// that outlives its call's deadline keeps its place until it ends. The
	// ask prompt's data profile is computed outside these places, one
	// statement at a time, so that it never holds queries up.
	MaxConcurrent int
	// QueueTimeout is how long a call waits for one of MaxConcurrent
	// places; 0 means 10s.
	QueueTimeout time.Duration

	// RequestLog, when set, receives one line per tool call, at Info:
	// the caller (its principal, server.PrincipalFrom), the database (for
	// several), the tool, a digest of the statement (never its text, nor
	// parameter values, nor tokens), the rows returned, the duration and
	// the outcome (ok, truncated, refused by a limit, or error with the
	// SQLSTATE).
	RequestLog *slog.Logger

	// Status, when set, is given the progress of a query that runs long,
	// every second, whether or not the client asked for progress
	// notifications: the time it has run and the rows read so far
	// ("running for 4s, 120000 rows read"), with the call's context. It is
	// how a query that became a task tells its status message
	// (ext/tasks.SetStatus); mcpkit serve sql sets it.
	Status func(ctx context.Context, message string)

	// FlagNames has messages that name a limit name only the flag of
	// `mcpkit serve sql` that raises it (--max-rows), not also the Options
	// field (Options.MaxRows); serve sql sets it.
	FlagNames bool

	// Logger receives warnings (a privileged role served anyway, a
	// statement outliving its deadline); nil means slog.Default().
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxRows          = 1000
	DefaultMaxResultBytes   = 4 << 20
	DefaultStatementTimeout = 30 * time.Second
	DefaultSampleRows       = 5
	DefaultPollInterval     = 2 * time.Second
	DefaultMaxMemory        = 256 << 20
	DefaultMaxConcurrent    = 4
	DefaultQueueTimeout     = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = DefaultStatementTimeout
	}
	if o.SampleRows == 0 {
		o.SampleRows = DefaultSampleRows
	}
	if o.SampleRows < 0 {
		o.SampleRows = 0
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.QueueTimeout <= 0 {
		o.QueueTimeout = DefaultQueueTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Messages naming a limit say which option sets it and which flag of
// `mcpkit serve sql` raises it, so a model can relay the remedy.

func rowLimitNote(n int, requested bool, max int) string {
	if requested && n < max {
		return fmt.Sprintf("result truncated at %d rows (max_rows argument; pass a larger max_rows, up to the server's limit of %d)", n, max)
	}
	return fmt.Sprintf("result truncated at %d rows (max_rows; the server's limit is %d, raise it with --max-rows / Options.MaxRows)", n, max)
}

func byteLimitNote(rows, max int) string {
	return fmt.Sprintf("result truncated at %d rows because it reached %d bytes (max_result_bytes; raise it with --max-result-bytes / Options.MaxResultBytes, or select fewer columns)", rows, max)
}

func timeoutMessage(d time.Duration) string {
	return fmt.Sprintf("statement timed out after %s (statement_timeout; raise it with --statement-timeout / Options.StatementTimeout, or make the query cheaper)", d)
}

func busyMessage(n int, waited time.Duration) string {
	return fmt.Sprintf("the database server is busy: %d statements are running, its limit (--max-concurrent / Options.MaxConcurrent), and none ended within %s; try again shortly", n, waited)
}

func tooBigMessage(max int) string {
	return fmt.Sprintf("a value or row is larger than %d bytes (max_result_bytes; raise it with --max-result-bytes / Options.MaxResultBytes, or select less: substr(), length(), an aggregate)", max)
}

func outOfMemoryMessage(max int64) string {
	return fmt.Sprintf("the statement needs more than %d MiB of memory (max_memory; raise it with --max-memory / Options.MaxMemory, or make the query cheaper: fewer rows to sort or group, a LIMIT)", max>>20)
}
