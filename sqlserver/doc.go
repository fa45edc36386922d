// Package sqlserver serves an SQLite or PostgreSQL database over MCP: the
// database MCP server behind `mcpkit serve sql`.
//
// Open connects (Options.Path for an SQLite file, Options.DSN for
// PostgreSQL, neither for a demo database made by EnsureDemo), Register
// adds everything to a server core, and Close stops change detection:
//
//	db, err := sqlserver.Open(ctx, &sqlserver.Options{Path: "shop.db"})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer db.Close()
//	s := server.New(info, nil)
//	db.Register(s)
//
// # Resources
//
// Every resource answers with two contents for the same URI: the JSON
// document (application/json) and a text rendering (text/plain).
//
//   - sql://schema: every table and view with its columns and keys (cached
//     30 s, public).
//   - sql://table/{table}: one per table and view, also as a template:
//     columns, types, nullability, primary key, foreign keys, indexes, row
//     count and Options.SampleRows sample rows (cached 5 s, public).
//   - sql://table/{table}/column/{column} (template): a column and its most
//     frequent values.
//
// Both templates complete table and column names.
//
// # Tools
//
//   - query {sql, params?, max_rows?}: one read-only statement; its
//     structuredContent is {columns: [{name, type}], rows: [[...]],
//     row_count, truncated, notice?} and its text a table.
//   - describe_table {table} and explain {sql, params?}.
//   - execute {sql, params?}, only with Options.AllowWrites: it asks the
//     user (an MRTR elicitation showing the statement and parameters) and
//     runs the statement only when the answer is accept with confirm true.
//
// A failing statement is a tool error carrying the database's message.
//
// # Read-only, enforced by the database
//
// SQLite reads use connections opened with mode=ro and query_only, with an
// authorizer that refuses ATTACH, DETACH, temporary objects and pragma
// assignments. PostgreSQL reads run in BEGIN READ ONLY transactions (on
// sessions with default_transaction_read_only) that are always rolled back,
// through the extended protocol, which refuses several statements at once.
// No SQL text is inspected. A statement gets Options.StatementTimeout (a
// context deadline, and statement_timeout on PostgreSQL), and a result at
// most Options.MaxRows rows and Options.MaxResultBytes bytes; a truncated
// result says which limit cut it and how to raise it. Cancelling a call
// interrupts the statement in the database (sqlite3_interrupt, a
// PostgreSQL cancel request), and long scans report rows read as progress.
//
// # Prompts
//
// ask {question, tables?} carries the schema of the named (or all) tables,
// the dialect, and instructions to answer with one read-only query; both
// arguments complete table and column names.
//
// # Change detection
//
// A goroutine owned by the DB polls every Options.PollInterval. SQLite:
// PRAGMA data_version, then per-table count(*) and max(rowid) (a commit no
// fingerprint explains, such as an UPDATE, announces every table).
// PostgreSQL: the current transaction snapshot, then per-table count(*)
// and max(xmin), or the pg_stat_user_tables counters for large tables.
// Changed tables get notifications/resources/updated; tables that appear or
// disappear change the resource list.
//
// Servers should keep list results short-lived, for example
// server.Options{ListCache: &protocol.CacheHints{TTLMs: 10_000, CacheScope:
// protocol.CachePublic}}; clients that listen hear of list changes anyway.
package sqlserver
