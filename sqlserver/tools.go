package sqlserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/schema"
	"github.com/mcpkit/mcpkit/server"
)

type queryArgs struct {
	SQL     string            `json:"sql" description:"One read-only SQL statement" jsonschema:"minLength=1"`
	Params  []json.RawMessage `json:"params,omitempty" description:"Positional parameters: ? or ?1 in SQLite, $1, $2 in PostgreSQL"`
	MaxRows int               `json:"max_rows,omitempty" description:"Most rows to return; capped by the server's limit" jsonschema:"minimum=1"`
	Cursor  string            `json:"cursor,omitempty" description:"The next_cursor of an earlier truncated result of the same sql and params, to read the rows after it"`
}

type tableArgs struct {
	Table string `json:"table" description:"Table or view name" jsonschema:"minLength=1"`
}

type explainArgs struct {
	SQL    string            `json:"sql" description:"The statement to explain (it is planned, not run)" jsonschema:"minLength=1"`
	Params []json.RawMessage `json:"params,omitempty" description:"Positional parameters, as for query"`
}

type executeArgs struct {
	SQL    string            `json:"sql" description:"The statement to run after the user confirms it" jsonschema:"minLength=1"`
	Params []json.RawMessage `json:"params,omitempty" description:"Positional parameters, as for query"`
}

func mustSchema[T any]() json.RawMessage {
	s, err := schema.ForType(reflect.TypeFor[T]())
	if err != nil {
		panic("sqlserver: " + err.Error())
	}
	return s
}

// queryOutputSchema is queryResult's schema, its rows arrays.
func queryOutputSchema() json.RawMessage {
	s := mustSchema[queryResult]()
	return json.RawMessage(strings.Replace(string(s), `"rows":{"type":"array","items":{}`, `"rows":{"type":"array","items":{"type":"array"}`, 1))
}

func boolp(b bool) *bool { return &b }

// Tool names, in the order Register adds them.
const (
	toolQuery    = "query"
	toolDescribe = "describe_table"
	toolExplain  = "explain"
	toolExecute  = "execute"
)

func (d *DB) addTools(s *server.Server) {
	dialect := d.dialect.name()
	server.AddTool(s, &protocol.Tool{
		Name: toolQuery,
		Description: fmt.Sprintf("Runs one read-only %s statement and returns its rows (values keep their JSON kind; binary is {\"base64\": ...}). "+
			"At most %d rows and %d bytes; a truncated result carries next_cursor to read on. Statements time out after %s.",
			dialect, d.opts.MaxRows, d.opts.MaxResultBytes, d.opts.StatementTimeout),
		OutputSchema: queryOutputSchema(),
		Annotations:  &protocol.ToolAnnotations{ReadOnlyHint: boolp(true), OpenWorldHint: boolp(false)},
		Meta:         queryToolMeta(),
	}, d.callQuery)
	server.AddTool(s, &protocol.Tool{
		Name:        toolDescribe,
		Description: "Describes a table or view: columns, types, nullability, primary key, foreign keys, indexes, row count and sample rows.",
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: boolp(true), OpenWorldHint: boolp(false)},
	}, d.callDescribe)
	server.AddTool(s, &protocol.Tool{
		Name:        toolSearch,
		Description: "Finds tables (or columns) by name pattern, a page at a time, with names only, a summary (columns) or full detail: for schemas too large to read at once.",
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: boolp(true), OpenWorldHint: boolp(false)},
	}, d.callSearch)
	server.AddTool(s, &protocol.Tool{
		Name:        toolExplain,
		Description: fmt.Sprintf("Shows the %s query plan of a statement without running it.", dialect),
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: boolp(true), OpenWorldHint: boolp(false)},
	}, d.callExplain)
	if d.rw != nil {
		var opts []server.FeatureOption
		if d.opts.WriteScope != "" {
			opts = append(opts, server.RequireScopes(d.opts.WriteScope))
		}
		server.AddTool(s, &protocol.Tool{
			Name: toolExecute,
			Description: fmt.Sprintf("Runs a statement that changes the %s database (INSERT, UPDATE, DELETE, DDL). "+
				"The user is shown the exact statement, its parameters and the triggers it fires, and must confirm; nothing runs otherwise. "+
				"The result gives the rows the statement affected and the rows changed in all, triggers included.", dialect),
			Annotations: &protocol.ToolAnnotations{ReadOnlyHint: boolp(false), DestructiveHint: boolp(true), OpenWorldHint: boolp(false)},
		}, d.callExecute, opts...)
	}
}

func (d *DB) callQuery(ctx context.Context, req *server.CallRequest, in queryArgs) (_ *protocol.CallToolResult, err error) {
	lc := &callLog{tool: toolQuery, stmt: in.SQL, start: time.Now()}
	defer func() { d.logCall(ctx, lc, err); err = d.present(err, in.SQL) }()
	if err := d.dialect.oneStatement(in.SQL); err != nil {
		return nil, err
	}
	args, err := decodeParams(in.Params)
	if err != nil {
		return nil, err
	}
	lim := scanLimits{maxRows: d.opts.MaxRows, serverMax: d.opts.MaxRows, maxBytes: d.opts.MaxResultBytes}
	if in.MaxRows > 0 && in.MaxRows < d.opts.MaxRows {
		lim.maxRows, lim.requested = in.MaxRows, true
	}
	// The statement's digest binds a cursor to it: needed only to open
	// one or to issue one (a truncated result), not on every call; made
	// once for a page that does both.
	var dg string
	digest := func() string {
		if dg == "" {
			dg = queryDigest(d.served+"\x00"+in.SQL, in.Params)
		}
		return dg
	}
	if in.Cursor != "" {
		if lim.skip, err = openCursor(req.Request, in.Cursor, digest()); err != nil {
			return nil, err
		}
	}
	var read atomic.Int64
	stop := d.reportProgress(ctx, req.Request, &read)
	var res *queryResult
	err = d.statement(ctx, func(ctx context.Context) error {
		var err error
		res, err = d.dialect.query(ctx, d.ro, in.SQL, args, lim, &read)
		return err
	})
	stop()
	if err != nil {
		return nil, err
	}
	lc.rows, lc.cut = res.RowCount, res.Truncated
	if d.opts.FlagNames {
		res.Notice = optionNames.ReplaceAllString(res.Notice, "")
	}
	if in.MaxRows > d.opts.MaxRows && res.Truncated {
		res.Notice += fmt.Sprintf("; max_rows %d was capped to the server's limit", in.MaxRows)
	}
	if res.Truncated {
		if res.NextCursor, err = sealCursor(req.Request, digest(), res.Offset+res.RowCount); err != nil {
			return nil, protocol.InternalError("sealing a cursor: " + err.Error())
		}
		res.Notice += "; pass next_cursor as cursor with the same sql and params to read on (the statement runs again " +
			"and the rows already returned are skipped, so give it an ORDER BY for a stable order)"
	}
	return &protocol.CallToolResult{
		Content:           []protocol.Content{&protocol.TextContent{Text: resultText(res)}},
		StructuredContent: res.appendJSON(nil),
	}, nil
}

// reportProgress sends progress every progressEvery while a statement
// runs, when the client asked for it: the seconds it has run (the progress
// value) and the rows read so far; the same message goes to
// Options.Status when set. stop ends it, once a report being sent is.
// Most statements end before the first report: a timer, not a goroutine,
// waits for it.
func (d *DB) reportProgress(ctx context.Context, req *server.Request, read *atomic.Int64) (stop func()) {
	asked := req.Meta.ProgressToken != nil
	if !asked && d.opts.Status == nil {
		return func() {}
	}
	start := time.Now()
	var (
		mu      sync.Mutex // held while a report is sent
		stopped bool
		t       *time.Timer
	)
	report := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		took := time.Since(start)
		msg := "running for " + took.Round(100*time.Millisecond).String()
		if n := read.Load(); n > 0 {
			msg += fmt.Sprintf(", %d %s read", n, plural(n, "row", "rows"))
		}
		if d.opts.Status != nil {
			d.opts.Status(ctx, msg)
		}
		if asked {
			_ = req.Progress(math.Round(took.Seconds()*10)/10, 0, msg)
		}
		t.Reset(d.progressEvery)
	}
	mu.Lock()
	t = time.AfterFunc(d.progressEvery, report)
	mu.Unlock()
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// resultText is the query result as text, which says all that its
// structuredContent does, for hosts that show a model only the text: the
// rows, their count and place in the statement's result, the columns'
// types, the notice, and the cursor with how to use it.
func resultText(res *queryResult) string {
	var b strings.Builder
	b.WriteString(textTable(res.Columns, res.cells))
	fmt.Fprintf(&b, "(%d %s", res.RowCount, plural(int64(res.RowCount), "row", "rows"))
	if res.Offset > 0 && res.RowCount > 0 {
		fmt.Fprintf(&b, ": rows %d to %d of the result", res.Offset+1, res.Offset+res.RowCount)
	}
	if res.Truncated {
		b.WriteString("; truncated, more rows follow")
	}
	b.WriteString(")\ncolumn types: ")
	for i, c := range res.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Type)
		if c.Type == "" {
			b.WriteString("?")
		}
	}
	b.WriteString("\n")
	if res.Notice != "" {
		b.WriteString(res.Notice + "\n")
	}
	if res.NextCursor != "" {
		fmt.Fprintf(&b, "next_cursor: %s\nTo read on, call query again with the same sql and params and cursor set to that next_cursor.\n", res.NextCursor)
	}
	return b.String()
}

// structured returns v as structuredContent with text as its readable form.
func structured(v any, text string) (*protocol.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, protocol.InternalError("encoding result: " + err.Error())
	}
	return &protocol.CallToolResult{
		Content:           []protocol.Content{&protocol.TextContent{Text: text}},
		StructuredContent: b,
	}, nil
}

func (d *DB) callDescribe(ctx context.Context, req *server.CallRequest, in tableArgs) (_ *protocol.CallToolResult, err error) {
	lc := &callLog{tool: toolDescribe, start: time.Now()}
	defer func() { d.logCall(ctx, lc, err); err = d.present(err, "") }()
	t, ok, err := d.lookup(ctx, in.Table)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("unknown table %q (known tables: %s)", in.Table, strings.Join(tableNames(d.knownTables()), ", "))
	}
	info, err := d.describeTable(ctx, t, true)
	if err != nil {
		return nil, err
	}
	return structured(info, info.text())
}

func (d *DB) callExplain(ctx context.Context, req *server.CallRequest, in explainArgs) (_ string, err error) {
	lc := &callLog{tool: toolExplain, stmt: in.SQL, start: time.Now()}
	defer func() { d.logCall(ctx, lc, err); err = d.present(err, in.SQL) }()
	if err := d.dialect.oneStatement(in.SQL); err != nil {
		return "", err
	}
	args, err := decodeParams(in.Params)
	if err != nil {
		return "", err
	}
	var plan string
	err = d.read(ctx, func(ctx context.Context, q querier) error {
		var err error
		plan, err = d.dialect.explain(ctx, q, in.SQL, args)
		return err
	})
	return plan, err
}

// confirmSchema asks for a confirmation that is off unless the user turns
// it on: a client filling in defaults does not approve the write.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Run this statement","description":"Check to run the statement exactly as shown","default":false}},"required":["confirm"]}`)

// callExecute runs a write the user confirmed. The confirmation is bound
// to this exact call (requestState is sealed to the tool, its arguments
// and the principal), only an answer to the question this server asked is
// taken, and the state that carries it is single-use: replaying the
// confirmed call is refused rather than run again. The question lists the
// triggers the statement fires, and the confirmation holds for those only
// (their digest is the sealed state): the write is refused when the
// triggers found as it runs differ. The result gives the rows changed in
// all beside those the statement affected.
func (d *DB) callExecute(ctx context.Context, req *server.CallRequest, in executeArgs) (_ *protocol.CallToolResult, err error) {
	lc := &callLog{tool: toolExecute, stmt: in.SQL, start: time.Now()}
	defer func() { d.logCall(ctx, lc, err); err = d.present(err, in.SQL) }()
	if err := d.dialect.oneStatement(in.SQL); err != nil {
		return nil, err
	}
	args, err := decodeParams(in.Params)
	if err != nil {
		return nil, err
	}
	ask := &protocol.ElicitParams{RequestedSchema: confirmSchema}
	if _, ok := req.Input("confirm_execute"); !ok {
		// Before the user is asked: refuse what cannot run, and find what
		// it sets off.
		var set triggerSet
		err := d.statement(ctx, func(ctx context.Context) error {
			var err error
			set, err = d.dialect.inspectWrite(ctx, d.ro, d.rw, in.SQL, args)
			return err
		})
		if err != nil {
			return nil, err
		}
		req.SetState([]byte(set.digest()))
		shown := "none"
		if len(in.Params) > 0 {
			b, _ := json.Marshal(in.Params)
			shown = string(b)
		}
		ask.Message = fmt.Sprintf("The assistant wants to change the %s database with this statement:\n\n%s\n\nParameters: %s\n\n%s\n\nRun it?",
			d.dialect.name(), in.SQL, shown, set.describe())
	}
	req.SingleUse()
	ans, err := req.Elicit("confirm_execute", ask)
	if err != nil {
		return nil, err
	}
	if ans.Action != protocol.ElicitAccept {
		return server.ErrorResult(fmt.Sprintf("Not executed: the user chose to %s; the database was not changed.", ans.Action)), nil
	}
	if ans.Content["confirm"] != true {
		return server.ErrorResult("Not executed: the user did not confirm; the database was not changed."), nil
	}
	confirmed := string(req.State())
	var res writeResult
	err = d.statement(ctx, func(ctx context.Context) error {
		var err error
		res, err = d.dialect.exec(ctx, d.rw, in.SQL, args, func(now triggerSet) error {
			if now.digest() != confirmed {
				return &errTriggersChanged{now}
			}
			return nil
		})
		return err
	})
	var changed *errTriggersChanged
	if errors.As(err, &changed) {
		return server.ErrorResult(changed.Error()), nil
	}
	if err != nil {
		return nil, err
	}
	return server.TextResult(res.text()), nil
}
