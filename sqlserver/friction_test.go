package sqlserver

import (
	"strings"
	"testing"
	"time"
)

// TestPostgresErrorText: a failing statement reads as psql shows it, with
// the line and a caret under the spot; two statements, and a write on the
// read-only tool, say what to do instead.
func TestPostgresErrorText(t *testing.T) {
	e := postgresEnv(t)
	_, s := e.open(t, nil)
	got := callTool(t, s, "query", map[string]any{"sql": "SELECT id,\n       nope FROM t"}).text()
	want := "database error: ERROR: column \"nope\" does not exist (SQLSTATE 42703)\n" +
		"LINE 2:        nope FROM t\n" +
		"               ^\n" +
		"HINT: Perhaps you meant to reference the column \"t.name\"."
	if got != want {
		t.Errorf("error text:\n%s\nwant\n%s", got, want)
	}
	for sql, remedy := range map[string]string{
		"SELECT 1; SELECT 2": "Only one statement runs per call: send each statement in a call of its own.",
		"DELETE FROM t":      "`mcpkit serve sql --allow-writes` (Options.AllowWrites)",
	} {
		if got := callTool(t, s, "query", map[string]any{"sql": sql}).text(); !strings.Contains(got, remedy) {
			t.Errorf("%s: %q does not say %q", sql, got, remedy)
		}
	}
}

// TestSQLiteWriteRefusalNamesFlag: SQLite's refusal of a write names the
// flag that offers writes.
func TestSQLiteWriteRefusalNamesFlag(t *testing.T) {
	_, s := sqliteEnv(t).open(t, nil)
	if got := callTool(t, s, "query", map[string]any{"sql": "DELETE FROM t"}).text(); !strings.Contains(got, "readonly") || !strings.Contains(got, "--allow-writes") {
		t.Errorf("write refusal: %q", got)
	}
}

// TestFlagNames: with FlagNames, limits are named by their flags alone.
func TestFlagNames(t *testing.T) {
	e := sqliteEnv(t)
	_, s := e.open(t, func(o *Options) { o.FlagNames = true; o.MaxRows = 2 })
	r := callTool(t, s, "query", map[string]any{"sql": e.series(5)})
	if !strings.Contains(r.text(), "--max-rows") || strings.Contains(r.text(), "Options.") || strings.Contains(string(r.StructuredContent), "Options.") {
		t.Errorf("notice: %s", r.text())
	}
	_, s = e.open(t, func(o *Options) { o.FlagNames = true; o.StatementTimeout = 100 * time.Millisecond })
	r = callTool(t, s, "query", map[string]any{"sql": e.slow})
	if !r.IsError || !strings.Contains(r.text(), "--statement-timeout") || strings.Contains(r.text(), "Options.") {
		t.Errorf("timeout: %s", r.text())
	}
}

// TestPostgresTypeNames: a query names column types as the schema does
// (bigint, character varying(20), timestamp with time zone), and the ask
// prompt does not take a timestamptz column for text.
func TestPostgresTypeNames(t *testing.T) {
	e := postgresEnv(t)
	mustExec(t, e.write, "CREATE TABLE ev (id bigint PRIMARY KEY, code varchar(20) NOT NULL, at timestamptz NOT NULL, amount numeric(10,2))")
	mustExec(t, e.write, "INSERT INTO ev SELECT i, 'c' || i, timestamptz '2024-01-01 00:00:00+00' + i * interval '1 hour', i FROM generate_series(1, 30) AS i")
	mustExec(t, e.write, "GRANT SELECT ON ev TO "+readerOf(t, e.opts.DSN))
	_, s := e.open(t, nil)
	q := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": "SELECT id, code, at, amount, id + 1 AS next FROM ev"}))
	var got []string
	for _, c := range q.Columns {
		got = append(got, c.Type)
	}
	want := "bigint,character varying(20),timestamp with time zone,numeric(10,2),bigint"
	if strings.Join(got, ",") != want {
		t.Errorf("query types %v, want %s", got, want)
	}
	desc := callTool(t, s, "describe_table", map[string]any{"table": "ev"}).text()
	for _, typ := range []string{"id bigint", "code character varying(20)", "at timestamp with time zone", "amount numeric(10,2)"} {
		if !strings.Contains(desc, typ) {
			t.Errorf("describe_table has no %q:\n%s", typ, desc)
		}
	}
	p := mustHandle(t, s, "prompts/get", map[string]any{"name": "ask", "arguments": map[string]any{"question": "when?", "tables": "ev"}})
	text, _ := p.Messages[0]["content"].(map[string]any)["text"].(string)
	if strings.Contains(text, "timestamp as text") || !strings.Contains(text, "at timestamp with time zone NOT NULL  -- from '2024-01-01T01:00:00Z' to '2024-01-02T06:00:00Z'") {
		t.Errorf("ask prompt:\n%s", text)
	}
}
