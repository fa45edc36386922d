package sqlserver

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server"
)

// testTextOnlyPaging: a client that passes the model only the text of a
// result pages through a truncated result with what the text says: the
// cursor and how to use it. The statement ends with a semicolon and a
// comment, which paging must survive; on PostgreSQL a statement the
// database cannot skip rows of (EXPLAIN) pages too.
func testTextOnlyPaging(t *testing.T, e *env) {
	_, s := e.open(t, nil)
	sql := e.series(25) + " ORDER BY x; -- all of them"
	if e.name == "sqlite" {
		sql = e.series(25) + " ORDER BY x -- all of them"
	}
	got := readAllByText(t, s, sql, 10)
	if want := "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25"; strings.Join(got, " ") != want {
		t.Errorf("paged through the text: %v, want %s", got, want)
	}
	if e.name == "postgres" {
		plan := readAllByText(t, s, "EXPLAIN SELECT * FROM t JOIN u ON u.t_id = t.id", 1)
		if len(plan) < 3 {
			t.Errorf("EXPLAIN paged as %q, want its plan lines", plan)
		}
	}
}

var nextCursorLine = regexp.MustCompile(`(?m)^next_cursor: (\S+)$`)

// readAllByText reads every row of sql's result max rows at a time, from
// the text content alone, and returns the first column of each row.
func readAllByText(t *testing.T, s *server.Server, sql string, max int) []string {
	t.Helper()
	var out []string
	cursor := ""
	for page := 0; page < 100; page++ {
		args := map[string]any{"sql": sql, "max_rows": max}
		if cursor != "" {
			args["cursor"] = cursor
		}
		r := callTool(t, s, "query", args)
		text := r.text()
		if r.IsError {
			t.Fatalf("page %d: %s", page, text)
		}
		lines := strings.Split(text, "\n")
		for _, l := range lines[2:] {
			if strings.HasPrefix(l, "(") {
				break
			}
			out = append(out, strings.TrimSpace(strings.Split(l, "|")[0]))
		}
		m := nextCursorLine.FindStringSubmatch(text)
		if m == nil {
			if strings.Contains(text, "truncated") && strings.Contains(text, "more rows follow") {
				t.Fatalf("page %d is truncated but its text carries no cursor:\n%s", page, text)
			}
			return out
		}
		if !strings.Contains(text, "cursor set to that next_cursor") {
			t.Errorf("page %d: the text does not say how to use the cursor:\n%s", page, text)
		}
		cursor = m[1]
	}
	t.Fatal("more than 100 pages")
	return nil
}
