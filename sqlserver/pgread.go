package sqlserver

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// A query tool call on PostgreSQL is one round trip: its read-only
// transaction, the statement, the rollback and the reset of what outlives
// a transaction are sent together, as one pipeline (extended protocol,
// one Sync), and read back as they arrive:
//
//	BEGIN READ ONLY
//	<the statement>                    -- results in text format
//	ROLLBACK
//	SELECT pg_advisory_unlock_all()
//	DEALLOCATE ALL
//
// The envelope's statements are named prepared statements (mcpkit_begin,
// ...), made again on every call and dropped by its DEALLOCATE ALL; the
// tool's statement is the connection's unnamed statement, which a call
// whose SQL is the same as the previous call's on that connection binds
// again instead of parsing (see pgSession).
//
// The limits (statement_timeout, lock_timeout,
// idle_in_transaction_session_timeout, work_mem) are the session's own,
// set in the startup message of every read-only connection (pgConfig):
// the statement always runs inside a transaction that is rolled back, and
// a rollback undoes every setting made in it (SET, SET LOCAL, set_config,
// RESET ALL), so no call can change them for the next. What a rollback
// does not undo is what the pipeline's tail releases: session advisory
// locks and prepared statements (LISTEN and cursors WITH HOLD take effect
// only at a commit, which the statement cannot reach with a second
// statement). When anything in that tail fails — the statement failed, so
// the rest of the pipeline was skipped, or a limit cut the result —
// endPostgres rolls back and runs DISCARD ALL, which resets the session to
// its startup values, or discards the connection.

// pgReadTail is what follows the statement in a read's pipeline. Its
// SELECT, at pgTailSelect, also names the backend that ran the pipeline
// (pgSession).
var pgReadTail = []string{"ROLLBACK", "SELECT pg_advisory_unlock_all(), pg_backend_pid()", "DEALLOCATE ALL"}

const pgTailSelect = 1

// query runs one tool statement on a connection of db (see above) and
// encodes its rows as the answer needs them.
func (p postgresDialect) query(ctx context.Context, db *sql.DB, query string, args []any, lim scanLimits, read *atomic.Int64) (*queryResult, error) {
	if lim.skip > 0 {
		// A cursor's rows are skipped by the database; a statement that
		// cannot be wrapped (SHOW, EXPLAIN) is read past them instead.
		inner := lim
		inner.skip = 0
		res, err := p.run(ctx, db, pgOffsetQuery(query, lim.skip), args, inner, read)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Position > pgOffsetPrefix {
			pe.Position -= pgOffsetPrefix // a place in the statement as given
		}
		if !isSyntaxError(err) {
			if res != nil {
				res.Offset = lim.skip
			}
			return res, err
		}
	}
	return p.run(ctx, db, query, args, lim, read)
}

// run is query on one statement as given. A statement bound again from
// the connection's unnamed statement (pgSession) that PostgreSQL refuses
// to run as cached — a table it reads changed its columns since — runs
// once more, parsed afresh.
func (p postgresDialect) run(ctx context.Context, db *sql.DB, query string, args []any, lim scanLimits, read *atomic.Int64) (*queryResult, error) {
	res, reused, err := p.runOn(ctx, db, query, args, lim, read, true)
	if reused && (isStalePlan(err) || errors.Is(err, errOtherBackend)) {
		res, _, err = p.runOn(ctx, db, query, args, lim, read, false)
	}
	return res, err
}

// runOn is run on one connection of db; reuse allows binding the
// connection's unnamed statement again, and reused reports that it was.
func (p postgresDialect) runOn(ctx context.Context, db *sql.DB, query string, args []any, lim scanLimits, read *atomic.Int64, reuse bool) (res *queryResult, reused bool, err error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, false, err
	}
	end := pgBroken
	err = c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("sqlserver: unexpected PostgreSQL connection %T", dc)
		}
		var err error
		res, end, reused, err = p.pipeline(ctx, sc.Conn(), query, args, lim, read, reuse)
		if err == nil {
			p.nameTypes(ctx, sc.Conn(), res)
		}
		return err
	})
	switch end {
	case pgClean:
		c.Close()
	case pgDirty:
		endPostgres(c)
	default:
		discard(c)
	}
	return res, reused, err
}

// isStalePlan reports PostgreSQL refusing a statement prepared before a
// change to what it reads ("cached plan must not change result type").
func isStalePlan(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "0A000" && strings.Contains(pe.Message, "cached plan")
}

// pgSession is the network connection of a read-only PostgreSQL session,
// which remembers the SQL of the session's unnamed prepared statement.
//
// Parsing and planning a short statement is most of what PostgreSQL
// spends on it, and a call whose SQL is the previous call's on the same
// connection need not do it again: PostgreSQL keeps a connection's
// unnamed statement until the next Parse of it (or a simple query), and
// revalidates it as it does any prepared statement (a changed table or
// search_path re-plans it; a changed result type is refused, and run
// parses it again). Nothing of it reaches another call: SQL cannot name,
// execute or list the unnamed statement (pg_prepared_statements shows
// named ones only, and DEALLOCATE ALL leaves it), a call with other SQL
// replaces it (PostgreSQL drops it at the Parse, before that SQL runs),
// and it is bound again only for the very same SQL. The envelope's own statements are named so
// that they do not replace it.
//
// The record is trusted only while nothing else has been written on the
// connection since the call that left it: writes counts every write to
// the network (below TLS), so any other use of the session — a ping,
// endPostgres, a schema read, a type name asked — makes the next call
// parse again. A record is left only by a pipeline that ran to its end.
//
// And only on a session that is one backend from start to end: behind a
// transaction pooler (PgBouncer, Supavisor, ...) consecutive calls may
// reach different backends, and the unnamed statement there is someone
// else's. checkBackend, run as each read-only connection opens, allows
// reuse only when the backend that answers is the one the startup named
// (BackendKeyData's PID, which poolers make up); and every pipeline's
// tail names the backend it ran on, so that a bound-again statement that
// ran anywhere else has its result dropped, the session never binds
// again, and the call runs once more parsed (errOtherBackend).
type pgSession struct {
	net.Conn
	writes  atomic.Uint64
	backend uint32 // the backend's PID, once checkBackend found it the session's; 0: never reuse
	sql     string // the SQL of the unnamed statement, while at == writes
	at      uint64
}

func (s *pgSession) Write(b []byte) (int, error) {
	s.writes.Add(1)
	return s.Conn.Write(b)
}

// holds reports whether the unnamed statement is query's.
func (s *pgSession) holds(query string) bool {
	return s.backend != 0 && s.sql != "" && s.sql == query && s.at == s.writes.Load()
}

// errOtherBackend: a pipeline ran on another backend than its session's.
var errOtherBackend = errors.New("sqlserver: the statement ran on another PostgreSQL backend than its session's")

// checkBackend is the read-only pool's AfterConnect: it lets the session
// bind statements again only if the backend answering is the one its
// startup named (see pgSession).
func checkBackend(ctx context.Context, pg *pgconn.PgConn) error {
	s := sessionOf(pg)
	if s == nil {
		return nil
	}
	var pid uint64
	rr := pg.ExecParams(ctx, "SELECT pg_backend_pid()", nil, nil, nil, nil)
	for rr.NextRow() {
		pid, _ = strconv.ParseUint(string(rr.Values()[0]), 10, 32)
	}
	if _, err := rr.Close(); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return nil // refused by the database: the session parses every call
		}
		return err
	}
	if pid != 0 && uint32(pid) == pg.PID() {
		s.backend = uint32(pid)
	}
	return nil
}

// keep records query as the unnamed statement's, as of now.
func (s *pgSession) keep(query string) { s.sql, s.at = query, s.writes.Load() }

// sessionOf returns pg's pgSession, under TLS or not; nil when it has
// none.
func sessionOf(pg *pgconn.PgConn) *pgSession {
	c := pg.Conn()
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	s, _ := c.(*pgSession)
	return s
}

// dialSessions makes dial's connections pgSessions.
func dialSessions(dial pgconn.DialFunc) pgconn.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &pgSession{Conn: c}, nil
	}
}

// pgEnd is the state a read's pipeline leaves its connection in.
type pgEnd int

const (
	pgClean  pgEnd = iota // the whole tail ran: the session is as it was opened
	pgDirty               // the tail did not run: endPostgres resets the session
	pgBroken              // the protocol's state is not known: the connection is discarded
)

// The pipeline is written with pgproto3's messages on the connection's
// own Frontend and read back with PgConn.ReceiveMessage, rather than as a
// pgconn.Batch: the envelope's statements are sent without a Describe
// (PostgreSQL then skips describing each one), one watch of the context
// covers the whole pipeline instead of one per result, and the rows are
// encoded straight from their DataRow messages. Measured per point lookup
// against pgconn.Batch: ~20 µs less CPU in mcpkit and ~8 µs less in
// PostgreSQL (docs/performance.md). What pgconn would do on a failed read
// — close the connection — the run does by discarding it (pgBroken).
// pgconn also watches its own writes for a server that stops reading
// while it sends results; this write cannot meet one: PostgreSQL reads
// every message up to the statement's Execute before it sends a row, and
// only the tail's few hundred bytes come after. A write that blocks
// anyway ends with the context, as a read does.

// pgExec is an envelope statement's messages, as the named statement
// name, without a Describe.
func pgExec(name, sql string) []pgproto3.FrontendMessage {
	return []pgproto3.FrontendMessage{&pgproto3.Parse{Name: name, Query: sql}, &pgproto3.Bind{PreparedStatement: name}, &pgproto3.Execute{}}
}

// pgExecClose is pgExec closing the statement after it ran: what comes
// before the tool's statement leaves no prepared statement for it to see.
func pgExecClose(name, sql string) []pgproto3.FrontendMessage {
	return append(pgExec(name, sql), &pgproto3.Close{ObjectType: 'S', Name: name})
}

// The envelope's messages, made once: sending only reads them.
var (
	pgBeginMsgs = pgExecClose("mcpkit_begin", "BEGIN READ ONLY")
	pgTailMsgs  = func() (m []pgproto3.FrontendMessage) {
		for i, name := range []string{"mcpkit_rollback", "mcpkit_unlock", "mcpkit_deallocate"} {
			m = append(m, pgExec(name, pgReadTail[i])...)
		}
		return m
	}()
)

// pgSend appends msgs to f's buffer.
func pgSend(f *pgproto3.Frontend, msgs []pgproto3.FrontendMessage) {
	for _, m := range msgs {
		f.Send(m)
	}
}

// errCopyOut refuses a COPY ... TO STDOUT, whose data is not rows.
var errCopyOut = errors.New("sqlserver: COPY ... TO STDOUT is not read by this tool; run the SELECT instead")

// pipeline sends the read's pipeline on pc and reads its results;
// reused reports that the statement was bound again without a Parse.
func (p postgresDialect) pipeline(ctx context.Context, pc *pgx.Conn, query string, args []any, lim scanLimits, read *atomic.Int64, reuse bool) (_ *queryResult, _ pgEnd, reused bool, _ error) {
	var eqb pgx.ExtendedQueryBuilder
	if err := eqb.Build(pc.TypeMap(), nil, args); err != nil {
		return nil, pgClean, false, err
	}
	pg := pc.PgConn()
	if pg.IsClosed() || pg.IsBusy() || pg.TxStatus() != 'I' {
		return nil, pgBroken, false, errors.New("sqlserver: a PostgreSQL connection was not idle")
	}
	// The pipeline's own write ends the session's record; a clean end
	// makes a new one.
	sess := sessionOf(pg)
	reused = reuse && sess != nil && sess.holds(query)
	id, _ := identityFrom(ctx)
	setup := id.statements()
	f := pg.Frontend()
	pgSend(f, pgBeginMsgs)
	for i, q := range setup {
		pgSend(f, pgExecClose("mcpkit_setup_"+strconv.Itoa(i), q))
	}
	if !reused {
		f.Send(&pgproto3.Parse{Query: query})
	}
	f.Send(&pgproto3.Bind{ParameterFormatCodes: eqb.ParamFormats, Parameters: eqb.ParamValues})
	f.Send(&pgproto3.Describe{ObjectType: 'P'})
	f.Send(&pgproto3.Execute{})
	pgSend(f, pgTailMsgs)
	f.Send(&pgproto3.Sync{})

	// The context's end (or a limit cutting the result) sends PostgreSQL a
	// cancel request, then ends reads and writes after interruptGrace.
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := ctxwatch.NewContextWatcher(cancelBackend(pg))
	w.Watch(qctx)
	defer w.Unwatch()
	if err := f.Flush(); err != nil {
		return nil, pgBroken, reused, err
	}

	stmt := 1 + len(setup)                // the statement's place among the results
	results := stmt + 1 + len(pgReadTail) // results the pipeline ends with
	done := 0                             // results ended
	var (
		enc     pgRowEncoder
		res     *queryResult
		cut     bool // a limit or a COPY ended the statement's rows
		failure error
		backend uint64 // the PID the tail's SELECT names
	)
	for {
		msg, err := pg.ReceiveMessage(context.Background())
		if err != nil {
			return nil, pgBroken, reused, err
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			if done == stmt && res == nil {
				res = enc.start(m.Fields, lim, read)
			}
		case *pgproto3.DataRow:
			switch {
			case done == stmt+1+pgTailSelect && len(m.Values) == 2:
				backend, _ = strconv.ParseUint(string(m.Values[1]), 10, 32)
			case done == stmt && res != nil && !cut && !enc.row(m.Values):
				cut = true
				cancel()
			}
		case *pgproto3.CommandComplete, *pgproto3.EmptyQueryResponse:
			if done == stmt && res == nil {
				res = enc.start(nil, lim, read) // a statement without rows
			}
			done++
		case *pgproto3.ErrorResponse:
			// A cut statement's own cancellation is expected; the first
			// other error is the call's.
			if failure == nil && !(cut && done == stmt) {
				failure = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.CopyOutResponse:
			if failure == nil {
				failure = errCopyOut
			}
			cut = true
			cancel()
		case *pgproto3.ParseComplete, *pgproto3.BindComplete, *pgproto3.CloseComplete, *pgproto3.NoData, *pgproto3.CopyData,
			*pgproto3.CopyDone, *pgproto3.NoticeResponse, *pgproto3.ParameterStatus, *pgproto3.NotificationResponse:
		case *pgproto3.ReadyForQuery:
			switch {
			case failure != nil && !(res != nil && res.Truncated):
				return nil, pgDirty, reused, failure
			case cut || done != results || m.TxStatus != 'I':
				return res, pgDirty, reused, nil
			}
			if sess != nil {
				if uint32(backend) != sess.backend {
					sess.backend = 0 // never again on this session
					if reused {
						return nil, pgClean, reused, errOtherBackend
					}
				}
				sess.keep(query)
			}
			return res, pgClean, reused, nil
		default:
			// A copy-in, a function call's answer: not a state this
			// reader can take back to idle.
			return nil, pgBroken, reused, fmt.Errorf("sqlserver: unexpected PostgreSQL message %T", msg)
		}
	}
}

// pgRowEncoder reads a statement's rows (text format) into their JSON and
// text forms, within the call's limits.
type pgRowEncoder struct {
	res    *queryResult
	oids   []uint32
	budget rowBudget
	arrays pgArrays
	buf    []byte
}

// start begins the result of the columns fields.
func (e *pgRowEncoder) start(fields []pgproto3.FieldDescription, lim scanLimits, read *atomic.Int64) *queryResult {
	res := &queryResult{Columns: make([]resultColumn, len(fields)), Rows: []json.RawMessage{}, Offset: lim.skip}
	e.oids = make([]uint32, len(fields))
	res.typeMods = make([]int32, len(fields))
	for i, f := range fields {
		res.Columns[i] = resultColumn{Name: string(f.Name)}
		e.oids[i] = f.DataTypeOID
		res.typeMods[i] = f.TypeModifier
	}
	res.oids = e.oids
	e.res = res
	e.budget = rowBudget{lim: lim, read: read, res: res}
	return res
}

// row takes one row's values; false when a limit ends the result.
func (e *pgRowEncoder) row(vals [][]byte) bool {
	keep, stop := e.budget.admit()
	if stop {
		return false
	}
	if !keep {
		return true
	}
	raw := 0
	for _, v := range vals {
		raw += len(v)
	}
	if !e.budget.fits(raw) {
		return false
	}
	buf := append(e.buf[:0], '[')
	cells := make([]string, len(vals))
	for i, v := range vals {
		if i > 0 {
			buf = append(buf, ',')
		}
		oid := uint32(0)
		if i < len(e.oids) {
			oid = e.oids[i]
		}
		buf, cells[i] = appendPGValue(buf, oid, v, &e.arrays)
	}
	buf = append(buf, ']')
	e.buf = buf
	if !e.budget.take(len(buf) + 1) {
		return false
	}
	e.res.Rows = append(e.res.Rows, json.RawMessage(append([]byte(nil), buf...)))
	e.res.cells = append(e.res.cells, cells)
	e.res.RowCount = len(e.res.Rows)
	return true
}

// PostgreSQL type OIDs the encoder knows.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidOID         = 26
	oidJSON        = 114
	oidFloat4      = 700
	oidFloat8      = 701
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidNumeric     = 1700
	oidJSONB       = 3802
	oidDateArray   = 1182
)

// appendPGValue appends the JSON form of a value in PostgreSQL's text
// format, of the type oid, to dst, and returns its text-table cell.
func appendPGValue(dst []byte, oid uint32, v []byte, arrays *pgArrays) ([]byte, string) {
	if v == nil {
		return append(dst, "null"...), "NULL"
	}
	switch oid {
	case oidBool:
		if len(v) == 1 && v[0] == 't' {
			return append(dst, "true"...), "true"
		}
		return append(dst, "false"...), "false"
	case oidInt2, oidInt4, oidInt8, oidOID:
		return append(dst, v...), string(v)
	case oidFloat4, oidFloat8, oidNumeric:
		s := string(v)
		if isJSONNumber(v) {
			return append(dst, v...), s
		}
		return appendJSONString(dst, s), s // NaN, Infinity
	case oidJSON, oidJSONB:
		if json.Valid(v) {
			return append(dst, v...), cellText(json.RawMessage(v))
		}
		s := string(v)
		return appendJSONString(dst, s), cellText(s)
	case oidBytea:
		if b, err := decodeBytea(v); err == nil {
			bv := binaryValue{Base64: base64.StdEncoding.EncodeToString(b)}
			dst = append(dst, `{"base64":"`...)
			dst = append(dst, bv.Base64...)
			return append(dst, `"}`...), byteaCell(b)
		}
	case oidTimestamptz, oidTimestamp:
		s := timestampText(string(v), oid == oidTimestamptz)
		return appendJSONString(dst, s), s
	case oidDate:
		s := string(v)
		return appendJSONString(dst, s), s
	}
	if arrays.isArray(oid) {
		val := arrays.decodeOID(oid, v)
		if oid == oidDateArray {
			val = dateValue(val)
		}
		if b, err := json.Marshal(val); err == nil {
			return append(dst, b...), cellText(json.RawMessage(b))
		}
	}
	s := string(v)
	return appendJSONString(dst, s), cellText(s)
}

// isJSONNumber reports whether b is a number as JSON writes one.
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

// decodeBytea decodes bytea's hex text format (bytea_output = hex, set
// for every read-only session).
func decodeBytea(v []byte) ([]byte, error) {
	if len(v) < 2 || v[0] != '\\' || v[1] != 'x' {
		return nil, errors.New("not hex bytea")
	}
	out := make([]byte, hex.DecodedLen(len(v)-2))
	_, err := hex.Decode(out, v[2:])
	return out, err
}

// timestampText turns PostgreSQL's ISO timestamp text into RFC 3339, in
// UTC for timestamptz; values it cannot read (infinity, BC) stay as they
// are.
func timestampText(s string, zoned bool) string {
	if !zoned {
		t, err := time.Parse("2006-01-02 15:04:05.999999999", s)
		if err != nil {
			return s
		}
		return t.Format(time.RFC3339Nano)
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07:00:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339Nano)
		}
	}
	return s
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			continue
		}
		if c >= 0x80 {
			// Multi-byte UTF-8 passes through, except U+2028 and U+2029,
			// which some JavaScript readers take for line ends.
			if c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, "89"[s[i+2]-0xA8])
				i += 2
				start = i + 1
			}
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Type names of results are format_type's, as the schema shows them:
// known ones from this table, others asked of the database once and kept.
var pgTypeNames = map[uint32]string{
	16: "boolean", 17: "bytea", 18: `"char"`, 19: "name", 20: "bigint", 21: "smallint", 23: "integer",
	25: "text", 26: "oid", 114: "json", 142: "xml", 650: "cidr", 700: "real", 701: "double precision",
	790: "money", 829: "macaddr", 869: "inet", 1042: "bpchar", 1043: "character varying", 1082: "date",
	1083: "time without time zone", 1114: "timestamp without time zone", 1184: "timestamp with time zone",
	1186: "interval", 1266: "time with time zone", 1700: "numeric", 2950: "uuid", 3802: "jsonb",
	1000: "boolean[]", 1005: "smallint[]", 1007: "integer[]", 1016: "bigint[]", 1009: "text[]",
	1015: "character varying[]", 1021: "real[]", 1022: "double precision[]", 1231: "numeric[]",
	1182: "date[]", 1115: "timestamp without time zone[]", 1185: "timestamp with time zone[]",
	2951: "uuid[]", 3807: "jsonb[]", 199: "json[]", 1001: "bytea[]",
}

// pgTypeCache keeps the type names asked of the database, by OID and
// type modifier. It is bounded: past pgTypeCacheMax names, types not in
// it are named by the database on every call.
type pgTypeCache struct {
	mu    sync.Mutex
	names map[[2]int64]string
}

const pgTypeCacheMax = 4096

// nameTypes fills in the type names of res's columns, asking pc for
// those not known.
func (p postgresDialect) nameTypes(ctx context.Context, pc *pgx.Conn, res *queryResult) {
	if err := p.askTypes(ctx, pc, res); err != nil {
		for i := range res.Columns {
			if res.Columns[i].Type == "" {
				res.Columns[i].Type = pgTypeNames[res.oids[i]]
			}
		}
	}
}

// askTypes is nameTypes asking the database.
func (p postgresDialect) askTypes(ctx context.Context, pc *pgx.Conn, res *queryResult) error {
	var missing []int
	p.types.mu.Lock()
	for i := range res.Columns {
		oid, mod := res.oids[i], res.typeMods[i]
		if name, ok := pgTypeNames[oid]; ok && mod < 0 {
			res.Columns[i].Type = name
		} else if name, ok := p.types.names[[2]int64{int64(oid), int64(mod)}]; ok {
			res.Columns[i].Type = name
		} else {
			missing = append(missing, i)
		}
	}
	p.types.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	pg := pc.PgConn()
	if pg.IsClosed() || pg.IsBusy() {
		// The connection is lost (a cut result): the names are left to a
		// later call.
		for _, i := range missing {
			res.Columns[i].Type = pgTypeNames[res.oids[i]]
		}
		return nil
	}
	if pg.TxStatus() != 'I' {
		if _, err := pg.Exec(ctx, "ROLLBACK").ReadAll(); err != nil {
			return err
		}
	}
	for _, i := range missing {
		oid, mod := res.oids[i], res.typeMods[i]
		var name string
		rr := pg.ExecParams(ctx, "SELECT format_type($1::oid, $2::int4)",
			[][]byte{[]byte(strconv.FormatUint(uint64(oid), 10)), []byte(strconv.FormatInt(int64(mod), 10))}, nil, nil, nil)
		for rr.NextRow() {
			name = string(rr.Values()[0])
		}
		if _, err := rr.Close(); err != nil {
			return err
		}
		res.Columns[i].Type = name
		p.types.mu.Lock()
		if p.types.names == nil {
			p.types.names = map[[2]int64]string{}
		}
		if len(p.types.names) < pgTypeCacheMax {
			p.types.names[[2]int64{int64(oid), int64(mod)}] = name
		}
		p.types.mu.Unlock()
	}
	return nil
}

// pgKnownTypes is a type map of pgx's, only read (TypeForOID), which is
// safe from several goroutines: isArray asks it, so that a call makes a
// map of its own (pgArrays.m, a dozen allocations) only to decode arrays.
var pgKnownTypes = sync.OnceValue(pgtype.NewMap)

// isArray reports whether oid is an array type pgx's type map knows.
func (a *pgArrays) isArray(oid uint32) bool {
	t, ok := pgKnownTypes().TypeForOID(oid)
	if !ok {
		return false
	}
	_, ok = t.Codec.(*pgtype.ArrayCodec)
	return ok
}

// decodeOID decodes an array of type oid from its text form.
func (a *pgArrays) decodeOID(oid uint32, v []byte) any {
	if a.m == nil {
		a.m = pgtype.NewMap()
	}
	t, _ := a.m.TypeForOID(oid)
	out, err := t.Codec.DecodeValue(a.m, oid, pgtype.TextFormatCode, v)
	if err != nil {
		return string(v)
	}
	return jsonValue(out)
}

// byteaCell is a binary value's text-table cell.
func byteaCell(b []byte) string {
	return fmt.Sprintf("<%d bytes> \\x%s", len(b), hex.EncodeToString(b[:min(len(b), 16)]))
}

// pgOffsetQuery wraps a statement so that the database skips the rows a
// cursor has read: the rows are not sent, nor read. The statement goes on
// lines of its own, so that a trailing comment cannot swallow the
// wrapping, and without its trailing semicolons.
const pgOffsetPrefix = int32(len("SELECT * FROM (\n"))

func pgOffsetQuery(query string, offset int) string {
	q := strings.TrimRight(query, " \t\r\n;")
	return "SELECT * FROM (\n" + q + "\n) AS mcpkit_page OFFSET " + strconv.Itoa(offset)
}

// isSyntaxError reports PostgreSQL's syntax_error.
func isSyntaxError(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42601"
}
