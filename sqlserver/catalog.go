package sqlserver

import (
	"context"
	"fmt"
	"strings"
)

// tableRef names a table or view.
type tableRef struct {
	Name   string // as served: schema-qualified when several schemas are
	Kind   string // "table" or "view"
	oid    uint32 // PostgreSQL only
	schema string // PostgreSQL only
	rel    string // the name within its schema (PostgreSQL only)
}

// ident is the table's name as SQL takes it, quoted (and qualified, on
// PostgreSQL).
func (t tableRef) ident() string {
	if t.schema != "" {
		return quoteIdent(t.schema) + "." + quoteIdent(t.rel)
	}
	return quoteIdent(t.Name)
}

// resolveTable finds the table name denotes, as SQL would: exactly as
// served, schema-qualified ("sales.orders"), or by its name alone (the
// first schema of the search path that has it); and failing that with the
// name folded to lower case, as SQL folds names not in double quotes
// ("ORDERS" is orders).
func resolveTable(tables []tableRef, name string) (tableRef, bool) {
	for _, fold := range []bool{false, true} {
		n := name
		if fold {
			n = strings.ToLower(name)
		}
		for _, t := range tables {
			if t.Name == n {
				return t, true
			}
		}
		if schema, rel, ok := strings.Cut(n, "."); ok {
			for _, t := range tables {
				if t.schema == schema && t.rel == rel {
					return t, true
				}
			}
		}
		for _, t := range tables {
			if t.schema != "" && t.rel == n {
				return t, true
			}
		}
	}
	return tableRef{}, false
}

// tableInfo describes a table: the body of its resource and of
// describe_table's structuredContent.
type tableInfo struct {
	Name              string       `json:"name" description:"Table or view name"`
	Kind              string       `json:"kind" description:"table or view" jsonschema:"enum=table|view"`
	Comment           string       `json:"comment,omitempty" description:"The database's comment on the table (PostgreSQL COMMENT ON)"`
	Columns           []columnInfo `json:"columns"`
	PrimaryKey        []string     `json:"primary_key" description:"Primary key columns, in key order"`
	ForeignKeys       []foreignKey `json:"foreign_keys"`
	Indexes           []indexInfo  `json:"indexes"`
	RowCount          *int64       `json:"row_count,omitempty" description:"Number of rows"`
	RowCountEstimated bool         `json:"row_count_estimated,omitempty" description:"row_count is the planner's estimate (large PostgreSQL tables)"`
	Sample            *sampleRows  `json:"sample,omitempty" description:"The first rows of the table"`

	rowCountAtLeast bool     // RowCount is where counting stopped (the ask prompt)
	ref             tableRef // the table described
}

type columnInfo struct {
	Name       string  `json:"name"`
	Type       string  `json:"type" description:"Declared type"`
	Nullable   bool    `json:"nullable"`
	Default    *string `json:"default,omitempty" description:"Default expression"`
	PrimaryKey bool    `json:"primary_key,omitempty"`
	Comment    string  `json:"comment,omitempty" description:"The database's comment on the column (PostgreSQL COMMENT ON)"`

	profile *columnProfile // the ask prompt's data profile; not in JSON
}

type foreignKey struct {
	Name       string   `json:"name,omitempty"`
	Columns    []string `json:"columns"`
	RefTable   string   `json:"references_table"`
	RefColumns []string `json:"references_columns"`
}

type indexInfo struct {
	Name       string   `json:"name"`
	Columns    []string `json:"columns" description:"Indexed columns; expressions are left out"`
	Unique     bool     `json:"unique"`
	Primary    bool     `json:"primary,omitempty"`
	Definition string   `json:"definition,omitempty"`
}

type sampleRows struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`

	cells [][]string
}

func newTableInfo(t tableRef) *tableInfo {
	return &tableInfo{ref: t, Name: t.Name, Kind: t.Kind, Columns: []columnInfo{}, PrimaryKey: []string{},
		ForeignKeys: []foreignKey{}, Indexes: []indexInfo{}}
}

// describeTable describes t with its row count and, when sample > 0, its
// first rows, all in one read-only scope.
func (d *DB) describeTable(ctx context.Context, t tableRef, withData bool) (*tableInfo, error) {
	v, err := d.kept.get(ctx, fmt.Sprintf("table %s %d %v", t.Name, t.oid, withData), func() (any, error) {
		return d.describeTableNow(ctx, t, withData)
	})
	if err != nil {
		return nil, err
	}
	return v.(*tableInfo), nil
}

// describeTableNow is describeTable without the cache.
func (d *DB) describeTableNow(ctx context.Context, t tableRef, withData bool) (*tableInfo, error) {
	var info *tableInfo
	err := d.read(ctx, func(ctx context.Context, q querier) error {
		var err error
		if info, err = d.dialect.describe(ctx, q, t); err != nil {
			return err
		}
		if !withData {
			return nil
		}
		n, est, err := d.dialect.countRows(ctx, q, t)
		if err != nil {
			return err
		}
		info.RowCount, info.RowCountEstimated = &n, est
		if d.opts.SampleRows > 0 {
			res, err := scanRows(ctx, q, "SELECT * FROM "+t.ident()+" LIMIT "+fmt.Sprint(d.opts.SampleRows), nil,
				scanLimits{maxRows: d.opts.SampleRows, maxBytes: d.opts.MaxResultBytes}, nil)
			if err != nil {
				return err
			}
			s := &sampleRows{Columns: []string{}, Rows: res.values, cells: res.cells}
			for _, c := range res.Columns {
				s.Columns = append(s.Columns, c.Name)
			}
			info.Sample = s
		}
		return nil
	})
	return info, err
}

// describeAll describes every known table (or only those named), without
// data; withCounts adds the row counts of tables (not views: counting one
// runs its query).
func (d *DB) describeAll(ctx context.Context, names []string, withCounts bool) ([]*tableInfo, error) {
	tables, err := d.listTables(ctx)
	if err != nil {
		return nil, err
	}
	var pick []tableRef
	if len(names) == 0 {
		pick = tables
	} else {
		for _, n := range names {
			t, found := resolveTable(tables, n)
			if found {
				pick = append(pick, t)
			}
			if !found {
				return nil, fmt.Errorf("unknown table %q (known tables: %s)", n, strings.Join(tableNames(tables), ", "))
			}
		}
	}
	out := make([]*tableInfo, 0, len(pick))
	err = d.read(ctx, func(ctx context.Context, q querier) error {
		for _, t := range pick {
			info, err := d.dialect.describe(ctx, q, t)
			if err != nil {
				return err
			}
			if withCounts && t.Kind == "table" {
				n, est, err := d.dialect.countRows(ctx, q, t)
				if err != nil {
					return err
				}
				info.RowCount, info.RowCountEstimated = &n, est
			}
			out = append(out, info)
		}
		return nil
	})
	return out, err
}

func tableNames(ts []tableRef) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// text renders the table as a model reads it best: a DDL-like outline.
func (t *tableInfo) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", strings.ToUpper(t.Kind), t.Name)
	if t.RowCount != nil {
		approx := ""
		if t.RowCountEstimated {
			approx = "~"
		} else if t.rowCountAtLeast {
			approx = "at least "
		}
		fmt.Fprintf(&b, " (%s%d %s)", approx, *t.RowCount, plural(*t.RowCount, "row", "rows"))
	}
	if t.Comment != "" {
		b.WriteString("  -- " + oneLineText(t.Comment))
	}
	b.WriteString("\n")
	for _, c := range t.Columns {
		fmt.Fprintf(&b, "  %s %s", c.Name, c.Type)
		if !c.Nullable {
			b.WriteString(" NOT NULL")
		}
		if c.Default != nil {
			fmt.Fprintf(&b, " DEFAULT %s", *c.Default)
		}
		if notes := c.notes(); len(notes) > 0 {
			b.WriteString("  -- " + strings.Join(notes, "; "))
		}
		b.WriteString("\n")
	}
	if len(t.PrimaryKey) > 0 {
		fmt.Fprintf(&b, "  PRIMARY KEY (%s)\n", strings.Join(t.PrimaryKey, ", "))
	}
	for _, fk := range t.ForeignKeys {
		fmt.Fprintf(&b, "  FOREIGN KEY (%s) REFERENCES %s (%s)\n", strings.Join(fk.Columns, ", "), fk.RefTable, strings.Join(fk.RefColumns, ", "))
	}
	for _, ix := range t.Indexes {
		kind := "INDEX"
		if ix.Unique {
			kind = "UNIQUE INDEX"
		}
		fmt.Fprintf(&b, "  %s %s (%s)\n", kind, ix.Name, strings.Join(ix.Columns, ", "))
	}
	if t.Sample != nil && len(t.Sample.Rows) > 0 {
		fmt.Fprintf(&b, "\nFirst %d rows:\n", len(t.Sample.Rows))
		cols := make([]resultColumn, len(t.Sample.Columns))
		for i, c := range t.Sample.Columns {
			cols[i] = resultColumn{Name: c}
		}
		b.WriteString(textTable(cols, t.Sample.cells))
	}
	return b.String()
}

// notes are what the text form says about a column beyond its definition:
// its comment and, in the ask prompt, its profile.
func (c *columnInfo) notes() []string {
	var out []string
	if c.Comment != "" {
		out = append(out, oneLineText(c.Comment))
	}
	if c.profile != nil {
		out = append(out, c.profile.notes()...)
	}
	return out
}

// oneLineText joins the lines of s with spaces.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
