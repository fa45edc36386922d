package sqlserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPostgresLargeSchema: a schema of 130 tables is discovered a piece at
// a time: the overview names the tables without describing them, and
// search_schema finds tables and columns by pattern, at a detail level, a
// page at a time.
func TestPostgresLargeSchema(t *testing.T) {
	e := postgresEnv(t)
	var b strings.Builder
	for i := range 128 {
		fmt.Fprintf(&b, "CREATE TABLE big_%03d (id integer PRIMARY KEY, label_%d text, amount numeric);", i, i)
	}
	mustExec(t, e.write, b.String())
	mustExec(t, e.write, "GRANT SELECT ON ALL TABLES IN SCHEMA "+searchPath(t, e.opts.DSN)+" TO "+readerOf(t, e.opts.DSN))
	_, s := e.open(t, nil)

	overview := mustHandle(t, s, "resources/read", map[string]any{"uri": SchemaURI}).Contents
	jsonText, _ := overview[0]["text"].(string)
	text, _ := overview[1]["text"].(string)
	if !strings.Contains(jsonText, `"names_only": true`) || !strings.Contains(text, "search_schema") || !strings.Contains(text, "TABLE big_127") || len(jsonText) > 20_000 {
		t.Errorf("overview of 130 tables (%d bytes):\n%.400s", len(jsonText), text)
	}
	search := func(args map[string]any) searchResult {
		t.Helper()
		r := callTool(t, s, "search_schema", args)
		if r.IsError {
			t.Fatalf("%v: %s", args, r.text())
		}
		var res searchResult
		if err := json.Unmarshal(r.StructuredContent, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	if r := search(map[string]any{"pattern": "BIG_01*"}); r.Total != 10 || len(r.Matches) != 10 || r.Matches[0].Table != "big_010" || r.Matches[0].Info != nil {
		t.Errorf("pattern BIG_01*: %+v", r)
	}
	r := search(map[string]any{"pattern": "big_%", "limit": 50})
	seen := len(r.Matches)
	for r.NextCursor != "" {
		r = search(map[string]any{"pattern": "big_%", "limit": 50, "cursor": r.NextCursor})
		seen += len(r.Matches)
	}
	if seen != 128 {
		t.Errorf("paged through %d tables, want 128", seen)
	}
	if r := search(map[string]any{"pattern": "big_007", "detail": "summary"}); r.Total != 1 || r.Matches[0].Info == nil || len(r.Matches[0].Info.Columns) != 3 {
		t.Errorf("summary: %+v", r)
	}
	if r := search(map[string]any{"pattern": "label_12?", "kind": "column"}); r.Total != 8 || r.Matches[0].Column != "label_120" || r.Matches[0].Type != "text" {
		t.Errorf("columns: %+v", r)
	}
	if rr := callTool(t, s, "search_schema", map[string]any{"pattern": "big_%", "cursor": "forged"}); !rr.IsError {
		t.Errorf("a forged cursor: %s", rr.text())
	}
}
