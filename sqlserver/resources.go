package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// Resource URIs. Every database resource answers with two contents for
// the same URI: application/json first, then a text/plain rendering (the
// query view, QueryViewURI, is one HTML page).
const (
	// SchemaURI is the schema overview: every table with its columns and
	// keys, without data.
	SchemaURI = "sql://schema"
	// TablePrefix starts the URI of a table's resource, sql://table/{table}.
	TablePrefix = "sql://table/"

	tableTemplate  = "table/{table}"
	columnTemplate = "table/{table}/column/{column}"
)

// Cache hints of reads: the schema changes rarely; table resources carry
// counts and sample rows, and subscribers hear of changes anyway.
var (
	schemaCache = protocol.CacheHints{TTLMs: 30_000, CacheScope: protocol.CachePublic}
	tableCache  = protocol.CacheHints{TTLMs: 5_000, CacheScope: protocol.CachePublic}
)

// TableURI returns the URI of the named table's resource.
func TableURI(table string) string { return TablePrefix + url.PathEscape(table) }

// A database served beside others (RegisterAll) has its resources under
// sql://{database}/: sql://{database}/schema, sql://{database}/table/{table}.

// uri returns the URI of the database's resource at path ("schema",
// "table/{table}").
func (d *DB) uri(path string) string {
	if d.served == "" {
		return "sql://" + path
	}
	return "sql://" + url.PathEscape(d.served) + "/" + path
}

// tableURI returns the URI of the named table's resource.
func (d *DB) tableURI(table string) string { return d.uri("table/") + url.PathEscape(table) }

func (d *DB) tableResource(t tableRef) *protocol.Resource {
	return &protocol.Resource{
		URI:         d.tableURI(t.Name),
		Name:        t.Name,
		Title:       fmt.Sprintf("%s %s", t.Kind, t.Name),
		Description: fmt.Sprintf("The %s %s: columns, keys, indexes, row count and sample rows", t.Kind, t.Name),
		MIMEType:    "application/json",
	}
}

func (d *DB) addResources(s *server.Server, tables []tableRef) {
	s.AddResource(&protocol.Resource{
		URI: d.uri("schema"), Name: "schema", Title: d.dialect.name() + " schema",
		Description: "Every table and view with its columns, primary and foreign keys",
		MIMEType:    "application/json",
	}, d.readSchema)
	for _, t := range tables {
		s.AddResource(d.tableResource(t), d.readTable)
	}
	s.AddResourceTemplate(&protocol.ResourceTemplate{
		URITemplate: d.uri(tableTemplate), Name: "table",
		Description: "A table or view by name: columns, keys, indexes, row count and sample rows",
		MIMEType:    "application/json",
	}, d.readTable)
	s.AddResourceTemplate(&protocol.ResourceTemplate{
		URITemplate: d.uri(columnTemplate), Name: "column",
		Description: "One column of a table: its definition and its most frequent values",
		MIMEType:    "application/json",
	}, d.readColumn)
	s.AddCompletion(protocol.RefResource, d.uri(tableTemplate), d.completeTemplate)
	s.AddCompletion(protocol.RefResource, d.uri(columnTemplate), d.completeTemplate)
}

// syncResources makes s list exactly the given tables.
func (d *DB) syncResources(s *server.Server, old, now []tableRef) {
	keep := map[string]bool{}
	for _, t := range now {
		keep[t.Name] = true
	}
	var gone []string
	for _, t := range old {
		if !keep[t.Name] {
			gone = append(gone, d.tableURI(t.Name))
		}
	}
	if len(gone) > 0 {
		s.RemoveResource(gone...)
	}
	had := map[string]string{}
	for _, t := range old {
		had[t.Name] = t.Kind
	}
	for _, t := range now {
		if kind, ok := had[t.Name]; !ok || kind != t.Kind {
			s.AddResource(d.tableResource(t), d.readTable)
		}
	}
}

func contents(uri string, v any, text string) ([]*protocol.ResourceContents, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return []*protocol.ResourceContents{
		{URI: uri, MIMEType: "application/json", Text: string(b)},
		{URI: uri, MIMEType: "text/plain", Text: text},
	}, nil
}

type schemaOverview struct {
	Dialect string       `json:"dialect"`
	Tables  []*tableInfo `json:"tables"`
}

func (d *DB) readSchema(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
	v, err := d.kept.get(ctx, "schema "+req.URI, func() (any, error) { return d.schemaContents(ctx, req.URI) })
	if err != nil {
		return nil, err
	}
	return &protocol.ReadResourceResult{Contents: v.([]*protocol.ResourceContents), CacheHints: schemaCache}, nil
}

// schemaContents computes the schema overview.
func (d *DB) schemaContents(ctx context.Context, uri string) ([]*protocol.ResourceContents, error) {
	if refs := d.knownTables(); len(refs) > overviewMaxTables {
		return d.schemaNames(uri, refs)
	}
	tables, err := d.describeAll(ctx, nil, true)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s database, %d tables and views\n\n", d.dialect.name(), len(tables))
	for _, t := range tables {
		b.WriteString(t.text())
		b.WriteString("\n")
	}
	return contents(uri, schemaOverview{Dialect: d.dialect.name(), Tables: tables}, b.String())
}

// schemaNames is the overview of a schema too large to describe at once:
// the tables' names and kinds, and where to read on.
func (d *DB) schemaNames(uri string, refs []tableRef) ([]*protocol.ResourceContents, error) {
	type entry struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	}
	tables := make([]entry, len(refs))
	var b strings.Builder
	fmt.Fprintf(&b, "%s database, %d tables and views: too many to describe here. Find them with the search_schema tool "+
		"(by name pattern, with columns), or read one at %s.\n\n", d.dialect.name(), len(refs), d.uri(tableTemplate))
	for i, t := range refs {
		tables[i] = entry{t.Name, t.Kind}
		fmt.Fprintf(&b, "%s %s\n", strings.ToUpper(t.Kind), t.Name)
	}
	overview := struct {
		Dialect   string  `json:"dialect"`
		Tables    []entry `json:"tables"`
		NamesOnly bool    `json:"names_only"`
	}{d.dialect.name(), tables, true}
	return contents(uri, overview, b.String())
}

func (d *DB) tableFromURI(req *server.ReadRequest) string {
	if name, ok := req.Vars["table"]; ok {
		return name
	}
	name, _ := url.PathUnescape(strings.TrimPrefix(req.URI, d.uri("table/")))
	return name
}

func (d *DB) readTable(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
	t, ok, err := d.lookup(ctx, d.tableFromURI(req))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, server.ErrResourceNotFound
	}
	info, err := d.describeTable(ctx, t, true)
	if err != nil {
		return nil, err
	}
	c, err := contents(req.URI, info, info.text())
	if err != nil {
		return nil, err
	}
	return &protocol.ReadResourceResult{Contents: c, CacheHints: tableCache}, nil
}

type columnDetail struct {
	Table     string       `json:"table"`
	Column    columnInfo   `json:"column"`
	TopValues []valueCount `json:"top_values" description:"The most frequent values"`
}

type valueCount struct {
	Value any   `json:"value"`
	Count int64 `json:"count"`
}

func (d *DB) readColumn(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
	t, ok, err := d.lookup(ctx, req.Vars["table"])
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, server.ErrResourceNotFound
	}
	info, err := d.describeTable(ctx, t, false)
	if err != nil {
		return nil, err
	}
	var col *columnInfo
	for i := range info.Columns {
		if info.Columns[i].Name == req.Vars["column"] {
			col = &info.Columns[i]
		}
	}
	if col == nil {
		return nil, server.ErrResourceNotFound
	}
	detail := columnDetail{Table: t.Name, Column: *col, TopValues: []valueCount{}}
	top := max(d.opts.SampleRows, 1)
	err = d.read(ctx, func(ctx context.Context, q querier) error {
		var err error
		detail.TopValues, err = d.topValues(ctx, q, t, col.Name, top, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s.%s %s", t.Name, col.Name, col.Type)
	if !col.Nullable {
		text += " NOT NULL"
	}
	text += "\nMost frequent values:\n"
	for _, v := range detail.TopValues {
		text += fmt.Sprintf("  %s (%d)\n", cellText(v.Value), v.Count)
	}
	c, err := contents(req.URI, detail, text)
	if err != nil {
		return nil, err
	}
	return &protocol.ReadResourceResult{Contents: c, CacheHints: tableCache}, nil
}

// completeTemplate completes the table and column variables.
func (d *DB) completeTemplate(ctx context.Context, req *server.CompleteRequest) (*protocol.Completion, error) {
	switch req.Argument.Name {
	case "table":
		return &protocol.Completion{Values: withPrefix(tableNames(d.knownTables()), req.Argument.Value)}, nil
	case "column":
		cols, err := d.columnNames(ctx, req.Context["table"])
		if err != nil {
			return nil, err
		}
		return &protocol.Completion{Values: withPrefix(cols, req.Argument.Value)}, nil
	}
	return &protocol.Completion{}, nil
}

// columnNames returns the columns of the named table, or of every table
// when table is "" (distinct, sorted).
func (d *DB) columnNames(ctx context.Context, table string) ([]string, error) {
	var names []string
	if table != "" {
		names = []string{table}
		if _, ok, err := d.lookup(ctx, table); err != nil || !ok {
			return nil, err
		}
	}
	infos, err := d.describeAll(ctx, names, false)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range infos {
		for _, c := range t.Columns {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c.Name)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// withPrefix returns the candidates starting with prefix, ignoring case.
func withPrefix(candidates []string, prefix string) []string {
	out := []string{}
	p := strings.ToLower(prefix)
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), p) {
			out = append(out, c)
		}
	}
	return out
}
