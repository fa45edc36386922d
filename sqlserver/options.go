package sqlserver

import (
	"fmt"
	"time"
)

// Options configure a DB. The zero value opens the embedded demo database
// read-only with safe limits.
type Options struct {
	// Path is an SQLite database file. With neither Path nor DSN set, Open
	// uses the demo database in the user cache directory
	// (os.UserCacheDir()/mcpkit/demo.db), creating it when missing.
	Path string
	// DSN is a PostgreSQL connection string (postgres://...). Only the tables
	// of the connection's current schema (the first of search_path) are
	// described; set search_path in the DSN to choose another schema.
	DSN string

	// AllowWrites adds the execute tool, which runs a statement only after
	// the user confirms it through an elicitation.
	AllowWrites bool

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
}

// Defaults of Options.
const (
	DefaultMaxRows          = 1000
	DefaultMaxResultBytes   = 4 << 20
	DefaultStatementTimeout = 30 * time.Second
	DefaultSampleRows       = 5
	DefaultPollInterval     = 2 * time.Second
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
