package sqlserver

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// TestSeveralDatabasesAndSchemas: one server serves a PostgreSQL database
// with two schemas on its search path and an SQLite database, by name.
// Every tool takes the database; tables of both schemas are served by
// their qualified names and found by their names alone (the search path's
// order) or upper case (as SQL folds them); each database has its
// resources under its name; a cursor of one database is refused by the
// other.
func TestSeveralDatabasesAndSchemas(t *testing.T) {
	pg := postgresEnv(t)
	lite := sqliteEnv(t)
	schema := searchPath(t, pg.opts.DSN)
	sales := schema + "_sales"
	mustExec(t, pg.write, "CREATE SCHEMA "+sales)
	t.Cleanup(func() { mustExec(t, pg.write, "DROP SCHEMA "+sales+" CASCADE") })
	for _, stmt := range []string{
		"CREATE TABLE " + sales + ".orders (id integer PRIMARY KEY, t_id integer REFERENCES " + schema + ".t (id), total numeric(10,2) NOT NULL)",
		"INSERT INTO " + sales + ".orders SELECT i, 1 + i % 3, i * 1.5 FROM generate_series(1, 12) AS i",
		"GRANT USAGE ON SCHEMA " + sales + " TO " + readerOf(t, pg.opts.DSN),
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + sales + " TO " + readerOf(t, pg.opts.DSN),
	} {
		mustExec(t, pg.write, stmt)
	}
	pgOpts := pg.opts
	pgOpts.Name = "shop"
	pgOpts.DSN = withSearchPath(t, pg.opts.DSN, sales+","+schema)
	shop, err := Open(context.Background(), &pgOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shop.Close() })
	liteOpts := lite.opts
	liteOpts.Name = "notes"
	notes, err := Open(context.Background(), &liteOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { notes.Close() })
	s := server.New(protocol.Implementation{Name: "multi", Version: "1"}, nil)
	RegisterAll(s, shop, notes)

	tools := mustHandle(t, s, "tools/list", nil).Tools
	for _, tool := range tools {
		b, _ := json.Marshal(tool["inputSchema"])
		if !strings.Contains(string(b), `"enum":["notes","shop"]`) {
			t.Errorf("tool %v: no database enum in %s", tool["name"], b)
		}
	}
	query := func(db, sql string, extra map[string]any) *wireResult {
		args := map[string]any{"database": db, "sql": sql}
		for k, v := range extra {
			args[k] = v
		}
		return callTool(t, s, "query", args)
	}
	if q := decodeQuery(t, query("shop", "SELECT count(*) AS n FROM orders JOIN t ON t.id = orders.t_id", nil)); q.Rows[0][0] != float64(12) {
		t.Errorf("shop: %v", q.Rows)
	}
	if q := decodeQuery(t, query("notes", "SELECT name FROM t ORDER BY id", nil)); q.RowCount != 3 {
		t.Errorf("notes: %v", q.Rows)
	}
	for _, name := range []string{sales + ".orders", "orders", "ORDERS", strings.ToUpper(schema) + ".T", "t"} {
		r := callTool(t, s, "describe_table", map[string]any{"database": "shop", "table": name})
		if r.IsError {
			t.Errorf("describe_table %s: %s", name, r.text())
		}
	}
	if r := callTool(t, s, "describe_table", map[string]any{"database": "shop", "table": "orders"}); !strings.Contains(r.text(), "TABLE "+sales+".orders") ||
		!strings.Contains(r.text(), "REFERENCES "+schema+".t (id)") {
		t.Errorf("describe_table orders:\n%s", r.text())
	}
	list := mustHandle(t, s, "resources/list", nil).Resources
	var uris []string
	for _, r := range list {
		uris = append(uris, r["uri"].(string))
	}
	for _, want := range []string{"sql://shop/schema", "sql://shop/table/" + sales + ".orders", "sql://shop/table/" + schema + ".t", "sql://notes/schema", "sql://notes/table/t"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources: no %s in %v", want, uris)
		}
	}
	overview := mustHandle(t, s, "resources/read", map[string]any{"uri": "sql://shop/schema"}).Contents
	if text, _ := overview[1]["text"].(string); !strings.Contains(text, "TABLE "+sales+".orders") || !strings.Contains(text, "TABLE "+schema+".u") {
		t.Errorf("shop's schema overview:\n%s", text)
	}
	c := mustHandle(t, s, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "sql://shop/table/{table}"},
		"argument": map[string]any{"name": "table", "value": sales[:len(sales)-2]}}).Completion
	if c == nil || !slices.Contains(c.Values, sales+".orders") {
		t.Errorf("completion: %+v", c)
	}
	cut := decodeQuery(t, query("shop", "SELECT id FROM orders ORDER BY id", map[string]any{"max_rows": 5}))
	if cut.NextCursor == "" {
		t.Fatal("no cursor")
	}
	next := decodeQuery(t, query("shop", "SELECT id FROM orders ORDER BY id", map[string]any{"max_rows": 5, "cursor": cut.NextCursor}))
	if next.Offset != 5 || next.Rows[0][0] != float64(6) {
		t.Errorf("next page: offset %d, rows %v", next.Offset, next.Rows)
	}
	if r := query("notes", "SELECT id FROM orders ORDER BY id", map[string]any{"max_rows": 5, "cursor": cut.NextCursor}); !r.IsError ||
		!strings.Contains(r.text(), "another statement") {
		t.Errorf("shop's cursor on notes: %s", r.text())
	}
	if r := callTool(t, s, "search_schema", map[string]any{"database": "shop", "pattern": "ord*"}); r.IsError || !strings.Contains(r.text(), sales+".orders (table)") {
		t.Errorf("search_schema in shop: %s", r.text())
	}
	if r := query("nowhere", "SELECT 1", nil); !r.IsError {
		t.Errorf("an unknown database: %s", r.text())
	}
}

// searchPath returns the search_path a test DSN sets.
func searchPath(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}

func readerOf(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.User.Username()
}

func withSearchPath(t *testing.T, dsn, path string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", path)
	u.RawQuery = q.Encode()
	return u.String()
}
