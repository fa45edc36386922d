package sqlserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// runShared runs the tests both dialects must pass.
func runShared(t *testing.T, e *env) {
	t.Run("ReadOnly", func(t *testing.T) { testReadOnly(t, e) })
	t.Run("BadStatement", func(t *testing.T) { testBadStatement(t, e) })
	t.Run("Timeout", func(t *testing.T) { testTimeout(t, e) })
	t.Run("Caps", func(t *testing.T) { testCaps(t, e) })
	t.Run("Progress", func(t *testing.T) { testProgress(t, e) })
	t.Run("Execute", func(t *testing.T) { testExecute(t, e) })
	t.Run("ForgedConfirmations", func(t *testing.T) { testForgedConfirmations(t, e) })
	t.Run("Triggers", func(t *testing.T) { testTriggers(t, e) })
	t.Run("OneStatement", func(t *testing.T) { testOneStatement(t, e) })
	t.Run("ConcurrencyCap", func(t *testing.T) { testConcurrencyCap(t, e) })
	t.Run("Cursor", func(t *testing.T) { testCursor(t, e) })
	t.Run("TextOnlyPaging", func(t *testing.T) { testTextOnlyPaging(t, e) })
	t.Run("ReadCache", func(t *testing.T) { testReadCache(t, e) })
	t.Run("Subscriptions", func(t *testing.T) { testSubscriptions(t, e) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, e) })
	t.Run("Resources", func(t *testing.T) { testResources(t, e) })
	t.Run("Completion", func(t *testing.T) { testCompletion(t, e) })
	t.Run("Prompt", func(t *testing.T) { testPrompt(t, e) })
	t.Run("AskCache", func(t *testing.T) { testAskCache(t, e) })
	t.Run("AskCountBounded", func(t *testing.T) { testAskCountBounded(t, e) })
	t.Run("DescribeExplain", func(t *testing.T) { testDescribeExplain(t, e) })
}

func testReadOnly(t *testing.T, e *env, extra ...string) {
	_, s := e.open(t, nil)
	// Each write must fail with the database's own refusal.
	stmts := [][2]string{
		{"INSERT INTO t (id, name) VALUES (100, 'x')", e.refusal},
		{"UPDATE t SET name = 'changed'", e.refusal},
		{"DELETE FROM t", e.refusal},
		{"DROP TABLE u", e.refusal},
		{"CREATE TABLE z (a integer)", e.refusal},
		{"DELETE FROM t; SELECT 1", e.multi},
		{"SELECT 1; DELETE FROM t", e.multi},
	}
	stmts = append(stmts, e.readOnlyTricks()...)
	for _, st := range stmts {
		r := callTool(t, s, "query", map[string]any{"sql": st[0]})
		if !r.IsError || !strings.Contains(r.text(), st[1]) {
			t.Errorf("%q: want a tool error carrying %q, got %q", st[0], st[1], r.text())
		}
	}
	if n := e.count(t, "t"); n != 3 {
		t.Errorf("t has %d rows after the refused writes, want 3", n)
	}
	var name string
	if err := e.write.QueryRow("SELECT name FROM t WHERE id = 1").Scan(&name); err != nil || name != "one" {
		t.Errorf("t row 1 = %q, %v", name, err)
	}
	if n := e.count(t, "u"); n != 1 {
		t.Errorf("u has %d rows, want 1", n)
	}
	// A refused statement leaves the server serving reads.
	q := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": "SELECT name FROM t ORDER BY id"}))
	if q.RowCount != 3 || q.Rows[0][0] != "one" {
		t.Errorf("after refusals: %+v", q)
	}
}

// readOnlyTricks are dialect-specific ways to attempt a write.
func (e *env) readOnlyTricks() [][2]string {
	if e.name == "postgres" {
		return [][2]string{
			{"WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", e.refusal},
			{"WITH x AS (INSERT INTO t (id, name) VALUES (101, 'y') RETURNING *) SELECT * FROM x", e.refusal},
			{"SELECT nextval('t_id_seq')", "permission denied"},
			{"COPY t FROM PROGRAM 'true'", "pg_execute_server_program"},
			{"COPY (SELECT 1) TO PROGRAM 'true'", "pg_execute_server_program"},
			{"SELECT pg_read_file('/etc/passwd')", "permission denied"},
			{"COMMIT; DELETE FROM t", e.multi},
		}
	}
	denied := "not authorized"
	return [][2]string{
		{"ATTACH DATABASE '" + strings.TrimSuffix(e.opts.Path, ".db") + "-evil.db' AS evil", denied},
		{"PRAGMA writable_schema = ON", denied},
		{"PRAGMA query_only = 0", denied},
		{"CREATE TEMP TABLE z (a)", denied},
		{"REPLACE INTO t (id, name) VALUES (1, 'x')", e.refusal},
		{"WITH x AS (SELECT 1) DELETE FROM t", e.refusal},
	}
}

func testBadStatement(t *testing.T, e *env) {
	_, s := e.open(t, nil)
	for _, q := range []string{"SELECT * FROM no_such_table", "SELEKT 1", "SELECT nosuchcolumn FROM t"} {
		r := callTool(t, s, "query", map[string]any{"sql": q})
		if !r.IsError || !strings.Contains(strings.ToLower(r.text()), "database error") {
			t.Errorf("%q: want a tool error with the database's message, got %+v", q, r)
		}
	}
	// Parameters are bound, not spliced.
	q := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": e.param("SELECT name FROM t WHERE id = ", 1), "params": []any{2}}))
	if q.RowCount != 1 || q.Rows[0][0] != "two" {
		t.Errorf("parameterised query: %+v", q)
	}
}

func (e *env) param(prefix string, n int) string {
	if e.name == "postgres" {
		return prefix + "$1"
	}
	return prefix + "?"
}

func testTimeout(t *testing.T, e *env) {
	_, s := e.open(t, func(o *Options) { o.StatementTimeout = 300 * time.Millisecond })
	start := time.Now()
	r := callTool(t, s, "query", map[string]any{"sql": e.slow})
	took := time.Since(start)
	if !r.IsError || !strings.Contains(r.text(), "statement timed out after 300ms") || !strings.Contains(r.text(), "--statement-timeout") {
		t.Fatalf("slow query: want the timeout refusal, got %q", r.text())
	}
	if took > 3*time.Second {
		t.Errorf("timeout took %s", took)
	}
}

func testCaps(t *testing.T, e *env) {
	_, s := e.open(t, func(o *Options) { o.MaxRows = 10; o.MaxResultBytes = 300 })
	tests := []struct {
		name      string
		args      map[string]any
		rows      int
		truncated bool
		notice    string
	}{
		{"under the caps", map[string]any{"sql": e.series(5)}, 5, false, ""},
		{"server row cap", map[string]any{"sql": e.series(50)}, 10, true, "--max-rows"},
		{"caller row cap", map[string]any{"sql": e.series(50), "max_rows": 3}, 3, true, "max_rows argument"},
		{"caller asks above the cap", map[string]any{"sql": e.series(50), "max_rows": 500}, 10, true, "capped"},
		{"exactly the cap", map[string]any{"sql": e.series(10)}, 10, false, ""},
		{"size cap", map[string]any{"sql": e.wide(8)}, 2, true, "--max-result-bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := decodeQuery(t, callTool(t, s, "query", tt.args))
			if q.RowCount != tt.rows || len(q.Rows) != tt.rows || q.Truncated != tt.truncated {
				t.Errorf("rows %d (len %d), truncated %v; want %d, %v", q.RowCount, len(q.Rows), q.Truncated, tt.rows, tt.truncated)
			}
			if !strings.Contains(q.Notice, tt.notice) || (tt.notice == "") != (q.Notice == "") {
				t.Errorf("notice %q, want it to mention %q", q.Notice, tt.notice)
			}
		})
	}
}

// wide returns n rows of about 110 bytes each.
func (e *env) wide(n int) string {
	return "SELECT x, '" + strings.Repeat("w", 100) + "' AS pad FROM (" + e.series(n) + ") AS s"
}

func testProgress(t *testing.T, e *env) {
	d, s := e.open(t, nil)
	d.progressEvery = 10 * time.Millisecond
	// A statement that returns its one row only at the end (an
	// aggregate) still reports progress while it runs.
	n := &collector{}
	r, rpcErr := handle(t, context.Background(), s, n, "tools/call", map[string]any{
		"name": "query", "arguments": map[string]any{"sql": e.slowAggregate()}, "progressToken": "p1"})
	if rpcErr != nil {
		t.Fatal(rpcErr.Message)
	}
	if q := decodeQuery(t, r); q.RowCount != 1 {
		t.Errorf("rows %d", q.RowCount)
	}
	var got []string
	for _, m := range n.all() {
		if strings.Contains(m, "notifications/progress") {
			got = append(got, m)
		}
	}
	if len(got) < 1 || !strings.Contains(got[0], "running for") {
		t.Errorf("progress notifications: %q", got)
	}
	// Without a progressToken, nothing is sent.
	n = &collector{}
	if _, rpcErr := handle(t, context.Background(), s, n, "tools/call", map[string]any{
		"name": "query", "arguments": map[string]any{"sql": e.series(3000)}}); rpcErr != nil || len(n.all()) != 0 {
		t.Errorf("unasked progress: %v %q", rpcErr, n.all())
	}
}

// slowAggregate returns one row after a few hundred milliseconds.
func (e *env) slowAggregate() string {
	if e.name == "postgres" {
		return "SELECT count(*) FROM (SELECT pg_sleep(0.3)) AS s"
	}
	return "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 150000) SELECT count(*) FROM c"
}

func testExecute(t *testing.T, e *env) {
	_, ro := e.open(t, nil)
	if r := mustHandle(t, ro, "tools/list", nil); len(r.Tools) != 4 {
		t.Errorf("read-only server lists %d tools, want 4 (no execute)", len(r.Tools))
	}
	_, s := e.open(t, func(o *Options) { o.AllowWrites = true })
	stmt := e.param("INSERT INTO t (id, name) VALUES (10, ", 1) + ")"
	args := map[string]any{"sql": stmt, "params": []any{"ten"}}
	first := callTool(t, s, "execute", args)
	if first.ResultType != "input_required" || first.InputRequests["confirm_execute"] == nil {
		t.Fatalf("first round: %+v", first)
	}
	var ask struct {
		Method string `json:"method"`
		Params struct {
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	json.Unmarshal(first.InputRequests["confirm_execute"], &ask)
	if ask.Method != "elicitation/create" || !strings.Contains(ask.Params.Message, stmt) || !strings.Contains(ask.Params.Message, `["ten"]`) {
		t.Errorf("elicitation does not show the statement and parameters: %+v", ask)
	}
	if n := e.count(t, "t"); n != 3 {
		t.Fatalf("unanswered: t has %d rows, want 3", n)
	}
	// Each answer goes with a fresh first round: a requestState is
	// accepted once.
	answer := func(a string) *wireResult {
		first := callTool(t, s, "execute", args)
		return mustHandle(t, s, "tools/call", map[string]any{"name": "execute", "arguments": args,
			"inputResponses": map[string]json.RawMessage{"confirm_execute": json.RawMessage(a)},
			"requestState":   first.RequestState})
	}
	defaults, _ := json.Marshal(map[string]any{"action": "accept", "content": client.FormDefaults(ask.Params.RequestedSchema)})
	answers := []struct {
		name   string
		answer string
		ran    bool
	}{
		{"declined", `{"action":"decline"}`, false},
		{"cancelled", `{"action":"cancel"}`, false},
		{"accepted unchecked", `{"action":"accept","content":{"confirm":false}}`, false},
		{"accepted with the form's defaults", string(defaults), false},
		{"accepted", `{"action":"accept","content":{"confirm":true}}`, true},
	}
	for _, a := range answers {
		r := answer(a.answer)
		want := 3
		if a.ran {
			want = 4
			if r.IsError || !strings.Contains(r.text(), "1 row affected") {
				t.Errorf("%s: %s", a.name, r.text())
			}
		} else if !r.IsError || !strings.Contains(r.text(), "Not executed") {
			t.Errorf("%s: %s", a.name, r.text())
		}
		if n := e.count(t, "t"); n != want {
			t.Errorf("%s: t has %d rows, want %d", a.name, n, want)
		}
	}
	mustExec(t, e.write, "DELETE FROM t WHERE id = 10")
}

// testForgedConfirmations: a confirmation counts only as the answer to the
// question this server asked, on the call it asked it for, once.
func testForgedConfirmations(t *testing.T, e *env) {
	_, s := e.open(t, func(o *Options) { o.AllowWrites = true })
	del := map[string]any{"sql": "DELETE FROM u"}
	yes := map[string]json.RawMessage{"confirm_execute": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)}

	// A first call that brings its own confirmation is asked anyway.
	r := mustHandle(t, s, "tools/call", map[string]any{"name": "execute", "arguments": del, "inputResponses": yes})
	if r.ResultType != "input_required" || e.count(t, "u") != 1 {
		t.Fatalf("unasked confirmation: %+v, u has %d rows", r, e.count(t, "u"))
	}
	// An answer under a key the server did not ask is ignored.
	other := map[string]json.RawMessage{"confirm": yes["confirm_execute"]}
	r = mustHandle(t, s, "tools/call", map[string]any{"name": "execute", "arguments": del, "inputResponses": other, "requestState": r.RequestState})
	if r.ResultType != "input_required" || e.count(t, "u") != 1 {
		t.Fatalf("answer to another question: %+v, u has %d rows", r, e.count(t, "u"))
	}
	// The confirmation of one statement does not run another.
	ins := map[string]any{"sql": e.param("INSERT INTO u (id, t_id) VALUES (7, ", 1) + ")", "params": []any{1}}
	first := callTool(t, s, "execute", ins)
	if _, rpcErr := handle(t, context.Background(), s, nil, "tools/call", map[string]any{"name": "execute", "arguments": del,
		"inputResponses": yes, "requestState": first.RequestState}); rpcErr == nil || e.count(t, "u") != 1 {
		t.Fatalf("state moved to another statement: %v, u has %d rows", rpcErr, e.count(t, "u"))
	}
	// Confirmed: it runs once; the same retry again is refused.
	retry := map[string]any{"name": "execute", "arguments": ins, "inputResponses": yes, "requestState": first.RequestState}
	if r := mustHandle(t, s, "tools/call", retry); r.IsError || e.count(t, "u") != 2 {
		t.Fatalf("confirmed insert: %s, u has %d rows", r.text(), e.count(t, "u"))
	}
	mustExec(t, e.write, "DELETE FROM u WHERE id = 7")
	_, rpcErr := handle(t, context.Background(), s, nil, "tools/call", retry)
	if rpcErr == nil || rpcErr.Code != protocol.CodeInvalidParams || !strings.Contains(rpcErr.Message, "already used") {
		t.Fatalf("replayed confirmation: %+v", rpcErr)
	}
	if n := e.count(t, "u"); n != 1 {
		t.Errorf("the replay ran the statement again: u has %d rows", n)
	}
}

func testSubscriptions(t *testing.T, e *env) {
	_, s := e.open(t, func(o *Options) { o.PollInterval = 50 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := server.FeedEvents(ctx, s.Feed(), 64)
	if err != nil {
		t.Fatal(err)
	}
	updated := func(uri string) func(server.Event) bool {
		return func(ev server.Event) bool { return ev.Kind == server.ResourceUpdated && ev.URI == uri }
	}
	changes := []struct{ name, stmt string }{
		{"insert", "INSERT INTO t (id, name) VALUES (20, 'twenty')"},
		{"update", "UPDATE t SET name = 'TWENTY' WHERE id = 20"},
		{"delete", "DELETE FROM t WHERE id = 20"},
	}
	for _, c := range changes {
		if _, err := e.write.Exec(c.stmt); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, ch, 10*time.Second, updated(TableURI("t")))
	}
	if _, err := e.write.Exec("CREATE TABLE fresh (id integer primary key)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.write.Exec("DROP TABLE fresh") })
	waitEvent(t, ch, 10*time.Second, func(ev server.Event) bool { return ev.Kind == server.ResourcesListChanged })
	waitEvent(t, ch, 10*time.Second, updated(SchemaURI))
	if !listsResource(t, s, TableURI("fresh")) {
		t.Error("the new table is not listed")
	}
	if _, err := e.write.Exec("DROP TABLE fresh"); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, 10*time.Second, func(ev server.Event) bool { return ev.Kind == server.ResourcesListChanged })
	if listsResource(t, s, TableURI("fresh")) {
		t.Error("the dropped table is still listed")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func listsResource(t *testing.T, s *server.Server, uri string) bool {
	for _, r := range mustHandle(t, s, "resources/list", nil).Resources {
		if r["uri"] == uri {
			return true
		}
	}
	return false
}

func testCancel(t *testing.T, e *env) {
	_, s := e.open(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		// A cancelled request gets no response; the transport has gone.
		msg := &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: "tools/call",
			Params: json.RawMessage(`{"name":"query","arguments":{"sql":` + jsonString(e.slow) + `},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)}
		if resp := serveOne(s, ctx, msg, &collector{}); resp != nil && resp.Error == nil && !strings.Contains(string(resp.Result), "isError") {
			t.Errorf("cancelled query answered %s", resp.Result)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled query did not return")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("cancelled query took %s", took)
	}
	e.assertIdle(t)
}

func testResources(t *testing.T, e *env) {
	_, s := e.open(t, nil)
	for _, uri := range []string{SchemaURI, TableURI("t"), TableURI("u")} {
		if !listsResource(t, s, uri) {
			t.Errorf("%s not listed", uri)
		}
	}
	for _, uri := range []string{TableURI("t"), "sql://table/t"} {
		r := mustHandle(t, s, "resources/read", map[string]any{"uri": uri})
		if len(r.Contents) != 2 || r.Contents[0]["mimeType"] != "application/json" || r.Contents[1]["mimeType"] != "text/plain" {
			t.Fatalf("%s contents: %+v", uri, r.Contents)
		}
		var info tableInfo
		if err := json.Unmarshal([]byte(r.Contents[0]["text"].(string)), &info); err != nil {
			t.Fatal(err)
		}
		if info.RowCount == nil || *info.RowCount != 3 || len(info.Columns) != 2 || len(info.PrimaryKey) != 1 ||
			info.PrimaryKey[0] != "id" || info.Columns[1].Nullable || info.Sample == nil || len(info.Sample.Rows) != 3 {
			t.Errorf("table t: %+v", info)
		}
		if r.TTLMs != 5000 || r.CacheScope != "public" {
			t.Errorf("cache hints %d %s", r.TTLMs, r.CacheScope)
		}
	}
	r := mustHandle(t, s, "resources/read", map[string]any{"uri": TableURI("u")})
	var u tableInfo
	json.Unmarshal([]byte(r.Contents[0]["text"].(string)), &u)
	if len(u.ForeignKeys) != 1 || u.ForeignKeys[0].RefTable != "t" || u.ForeignKeys[0].Columns[0] != "t_id" || len(u.Indexes) == 0 {
		t.Errorf("table u: %+v", u)
	}
	if text := r.Contents[1]["text"].(string); !strings.Contains(text, "FOREIGN KEY (t_id) REFERENCES t (id)") {
		t.Errorf("text form: %s", text)
	}
	r = mustHandle(t, s, "resources/read", map[string]any{"uri": SchemaURI})
	if r.TTLMs != 30000 || !strings.Contains(r.Contents[1]["text"].(string), "TABLE u (1 row)") ||
		!strings.Contains(r.Contents[1]["text"].(string), "TABLE t (3 rows)") {
		t.Errorf("schema: %d %v", r.TTLMs, r.Contents)
	}
	if e.name == "postgres" {
		var overview schemaOverview
		json.Unmarshal([]byte(r.Contents[0]["text"].(string)), &overview)
		for _, tb := range overview.Tables {
			if tb.Name == "t" && (tb.Comment != "Things with names" || tb.Columns[1].Comment != "The display name") {
				t.Errorf("comments of t: %q, %q", tb.Comment, tb.Columns[1].Comment)
			}
		}
		if text := r.Contents[1]["text"].(string); !strings.Contains(text, "-- Things with names") || !strings.Contains(text, "name text NOT NULL  -- The display name") {
			t.Errorf("comments in the text form:\n%s", text)
		}
	}
	r = mustHandle(t, s, "resources/read", map[string]any{"uri": "sql://table/t/column/name"})
	if !strings.Contains(r.Contents[0]["text"].(string), `"top_values"`) {
		t.Errorf("column: %v", r.Contents)
	}
	if _, rpcErr := handle(t, context.Background(), s, nil, "resources/read", map[string]any{"uri": "sql://table/nope"}); rpcErr == nil {
		t.Error("unknown table: no error")
	}
}

func testCompletion(t *testing.T, e *env) {
	_, s := e.open(t, nil)
	tests := []struct {
		ref     map[string]any
		arg     string
		value   string
		context map[string]string
		want    []string
	}{
		{map[string]any{"type": "ref/resource", "uri": "sql://table/{table}"}, "table", "", nil, []string{"t", "u"}},
		{map[string]any{"type": "ref/resource", "uri": "sql://table/{table}"}, "table", "U", nil, []string{"u"}},
		{map[string]any{"type": "ref/resource", "uri": "sql://table/{table}/column/{column}"}, "column", "", map[string]string{"table": "u"}, []string{"id", "t_id"}},
		{map[string]any{"type": "ref/prompt", "name": "ask"}, "tables", "t, ", nil, []string{"t, u"}},
		{map[string]any{"type": "ref/prompt", "name": "ask"}, "question", "how many na", nil, []string{"how many name"}},
		{map[string]any{"type": "ref/prompt", "name": "ask"}, "question", "rows in t", map[string]string{"tables": "u"}, []string{"rows in t", "rows in t_id"}},
	}
	for _, tt := range tests {
		p := map[string]any{"ref": tt.ref, "argument": map[string]any{"name": tt.arg, "value": tt.value}}
		if tt.context != nil {
			p["context"] = map[string]any{"arguments": tt.context}
		}
		r := mustHandle(t, s, "completion/complete", p)
		if strings.Join(r.Completion.Values, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%v %s=%q: %q, want %q", tt.ref, tt.arg, tt.value, r.Completion.Values, tt.want)
		}
	}
}

func testPrompt(t *testing.T, e *env) {
	d, s := e.open(t, nil)
	r := mustHandle(t, s, "prompts/get", map[string]any{"name": "ask", "arguments": map[string]string{"question": "How many rows?", "tables": "u"}})
	text := r.Messages[0]["content"].(map[string]any)["text"].(string)
	for _, want := range []string{"How many rows?", d.Dialect(), "TABLE u", "read-only"} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "TABLE t\n") {
		t.Errorf("prompt includes an unnamed table:\n%s", text)
	}
	if _, rpcErr := handle(t, context.Background(), s, nil, "prompts/get", map[string]any{"name": "ask", "arguments": map[string]string{"question": "q", "tables": "nope"}}); rpcErr == nil {
		t.Error("unknown table: no error")
	}
	// The data, not only the schema: row counts, the values of a column
	// with few of them, ranges, comments.
	r = mustHandle(t, s, "prompts/get", map[string]any{"name": "ask", "arguments": map[string]string{"question": "Which names?", "tables": "t"}})
	text = r.Messages[0]["content"].(map[string]any)["text"].(string)
	wants := []string{"TABLE t (3 rows)", "values: 'one' (1), 'three' (1), 'two' (1)", "  -- from 1 to 3\n"}
	if e.name == "postgres" {
		wants = append(wants, "The display name; values:")
	}
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, text)
		}
	}
}

func testDescribeExplain(t *testing.T, e *env) {
	_, s := e.open(t, nil)
	r := callTool(t, s, "describe_table", map[string]any{"table": "u"})
	var info tableInfo
	if err := json.Unmarshal(r.StructuredContent, &info); err != nil || info.Name != "u" || len(info.ForeignKeys) != 1 {
		t.Errorf("describe_table: %s %v", r.StructuredContent, err)
	}
	if r := callTool(t, s, "describe_table", map[string]any{"table": "nope"}); !r.IsError || !strings.Contains(r.text(), "known tables: t, u") {
		t.Errorf("unknown table: %s", r.text())
	}
	r = callTool(t, s, "explain", map[string]any{"sql": "SELECT * FROM u JOIN t ON t.id = u.t_id"})
	if r.IsError || r.text() == "" {
		t.Errorf("explain: %s", r.text())
	}
	if r := callTool(t, s, "explain", map[string]any{"sql": "DELETE FROM t"}); e.count(t, "t") != 3 {
		t.Errorf("explain ran a write: %s", r.text())
	}
}
