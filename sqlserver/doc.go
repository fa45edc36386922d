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
// Every database resource answers with two contents for the same URI: the
// JSON document (application/json) and a text rendering (text/plain).
//
//   - sql://schema: every table and view with its columns, keys, comments
//     and the row counts of tables (cached 30 s, public); past 100 tables,
//     their names and kinds only (search_schema finds the rest).
//   - sql://table/{table}: one per table and view, also as a template:
//     columns, types, nullability, primary key, foreign keys, indexes,
//     comments, row count and Options.SampleRows sample rows (cached 5 s,
//     public).
//   - sql://table/{table}/column/{column} (template): a column and its most
//     frequent values.
//
// Both templates complete table and column names. Comments are
// PostgreSQL's COMMENT ON (SQLite has none). Only the tables the role may
// read are served: on PostgreSQL, those of the schemas on its search_path
// or Options.Schemas, named schema.table when there are several (a name
// alone, or in upper case, finds a table as SQL would). The overview and
// table resources are kept until change detection sees a change. Row
// counts are exact below 100,000 rows, the planner's estimate above.
//
// # Several databases
//
// RegisterAll serves several databases, each under its Options.Name: the
// tools and the ask prompt take a database argument (an enum of the
// names), and each database's resources are under sql://{name}/
// (sql://{name}/schema, sql://{name}/table/{table}); each keeps its own
// limits, role checks and change detection, and a cursor belongs to its
// database.
//
// # Tools
//
//   - query {sql, params?, max_rows?, cursor?}: one read-only statement;
//     its structuredContent is {columns: [{name, type}], rows: [[...]],
//     row_count, offset?, truncated, next_cursor?, notice?} and its text a
//     table. Values keep their kind: JSON columns hold their JSON value,
//     PostgreSQL arrays are arrays, numeric values exact numbers, dates and
//     timestamps strings, binary values {"base64": "..."}. A result cut by
//     a limit carries next_cursor, sealed by the server (server.Request.Seal),
//     which the tool takes back with the same sql and params to read the
//     rows after it (on PostgreSQL the database skips the rows already
//     read). The text says all the structuredContent does, for hosts that
//     show a model only text: the row count and place, the column types
//     (PostgreSQL's as the schema names them), the notice, and next_cursor
//     with how to pass it. Rows are encoded once, from the database's text
//     format, into the JSON and the text the answer holds.
//   - describe_table {table} (its text an outline, its structuredContent
//     the table resource's JSON) and explain {sql, params?}.
//   - search_schema {pattern?, kind?, detail?, limit?, cursor?}: tables or
//     columns by name pattern, with names, a summary (columns) or full
//     detail, a page at a time.
//   - execute {sql, params?}, only with Options.AllowWrites: it asks the
//     user (an MRTR elicitation showing the statement and parameters,
//     with a confirmation that is off by default) and runs the statement
//     only when the answer is accept with confirm true. The confirmation
//     counts only as the answer to the question this server asked, on this
//     exact call (server.Request.SingleUse): a replayed confirmed call is
//     refused rather than run again. The question lists the triggers the
//     statement fires (SQLite: all those compiled into its program;
//     PostgreSQL: those on the tables an INSERT, UPDATE, DELETE or MERGE
//     writes, their partitions and the tables cascading foreign keys
//     change), the confirmation holds for those only (the write is refused
//     when they changed), and the result counts the rows changed in all,
//     triggers and foreign-key actions included, beside those the
//     statement affected.
//
// A failing statement is a tool error carrying the database's message, as
// psql shows it on PostgreSQL (the line and a caret under the spot,
// DETAIL, HINT); a limit reached is a tool error naming the limit and the
// option (and flag of `mcpkit serve sql`; only the flag with
// Options.FlagNames) that raises it. Options.RequestLog logs one line per
// call: principal, tool, statement digest, rows, duration, outcome. Statements that run long report
// progress every second when the client asked for it: the time they have
// run and the rows read.
//
// # The query view
//
// Register also serves QueryViewURI, an MCP App (the
// io.modelcontextprotocol/ui extension, which the server's capabilities
// advertise in server/discover): one self-contained HTML page
// (text/html;profile=mcp-app) whose _meta.ui content security policy
// allows no origin. The query tool names it in _meta.ui.resourceUri, and a
// host that supports the extension shows it with the tool's result: the
// SQL, a table sortable by column, the row count and whether the result
// was truncated, Previous and Next buttons that read on through
// next_cursor with tools/call through the host, and a bar chart when the
// result has two columns, at least one of them numeric, and 1 to 50 rows.
// Results do not change: other clients get the same text and
// structuredContent.
//
// # Read-only and without lasting effects, enforced by the database
//
// Every call runs exactly one statement (more is refused, not run) and
// leaves nothing behind on its connection.
//
// SQLite reads use connections opened with mode=ro and query_only, with an
// authorizer that refuses ATTACH, DETACH, temporary objects, pragma
// assignments and transaction control (BEGIN, COMMIT, SAVEPOINT; a
// connection still in a transaction after a call is rolled back before
// reuse). PostgreSQL reads run in BEGIN READ ONLY transactions that are
// always rolled back, on sessions whose default_transaction_read_only and
// limits are set in their startup message; a query call sends BEGIN READ
// ONLY, its statement, ROLLBACK, SELECT pg_advisory_unlock_all() and
// DEALLOCATE ALL as one pipeline, one round trip. A rollback undoes every
// setting the statement made, the rest releases what a rollback keeps,
// and when any of it fails ROLLBACK and DISCARD ALL reset the session (or
// the connection is closed) before it is reused. Statements go through the
// extended protocol, which refuses several statements at once, as the
// session's unnamed statement: SQL cannot see, list or drop it, and a call
// whose SQL is the previous call's on the same connection, with nothing
// else written on it since, binds it again instead of parsing and planning
// it anew — on sessions whose backend is their own, never behind a
// transaction pooler. No SQL text is inspected beyond counting SQLite's
// statements.
//
// # The caller's identity
//
// Options.CallerClaims (PostgreSQL, under OAuth) sets the caller's verified
// token claims, as JSON, in the transaction-local request.jwt.claims of
// every call, and Options.RoleClaim with Options.Roles runs each call as
// the role its token's claim maps to (SET LOCAL ROLE), so that row-level
// security applies per caller. Open refuses both unless the role can
// execute neither set_config() nor a procedural language's inline
// handler (DO), with which a statement could undo them; the README has
// the REVOKEs and a policy. Cached schema reads are then off.
//
// Open inspects a PostgreSQL role and refuses one that can do more than
// read — a superuser, a member of pg_execute_server_program,
// pg_read_server_files, pg_write_server_files or pg_signal_backend, a
// BYPASSRLS role, a member of a superuser or BYPASSRLS role, an owner of
// the served tables, a role that can execute a SECURITY DEFINER function
// owned by a role with one of those privileges (EXECUTE granted to it, to a
// role it belongs to, or to PUBLIC, as every function is by default) — with
// a *PrivilegeError naming each privilege and function, unless
// Options.AllowPrivilegedRole (then it logs a warning per privilege). The
// README's Security section has the SQL for a reader role and a writer
// role.
//
// # Limits
//
// A statement gets Options.StatementTimeout (a context deadline, and on
// PostgreSQL the session's statement_timeout, with lock_timeout and
// idle_in_transaction_session_timeout), and a result at most
// Options.MaxRows rows and Options.MaxResultBytes bytes. Cancelling a call
// interrupts the statement in the database (sqlite3_interrupt, a
// PostgreSQL cancel request, and half a second later the end of the
// connection, which the pool discards); a call is answered by its deadline
// even when SQLite cannot interrupt the step it is in, and such a
// statement keeps its place until it ends. At most Options.MaxConcurrent
// statements run at once; a call waits Options.QueueTimeout for its turn,
// then fails as busy.
// Memory: on SQLite a value is at most MaxResultBytes (SQLITE_LIMIT_LENGTH)
// and the library's heap at most a third of Options.MaxMemory, temporary
// results staying in memory; on PostgreSQL work_mem is capped and no
// message larger than a share of MaxMemory is read.
//
// # Prompts
//
// ask {question, tables?} carries the schema of the named (or all) tables
// with their row counts and comments, a profile of their data (the values
// of columns that have few, ranges, the format of dates kept as text,
// units column names imply), the dialect, and instructions to answer with
// one read-only query; both arguments complete table and column names.
//
// The descriptions are cached per table until change detection sees the
// table's data or the schema change, or for five minutes, and computed at
// most once at a time: concurrent calls share one computation, which runs
// one statement at a time in a place of its own, outside MaxConcurrent,
// so queries never wait for it. Its cost is bounded: row counts stop at
// 100,000 ("at least 100000 rows"; on PostgreSQL a table the planner
// estimates larger gets the estimate, "~N rows"), only tables within that
// count are profiled, and profiling ends after twice StatementTimeout,
// leaving the tables not reached described without a profile.
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
