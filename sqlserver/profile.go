package sqlserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// The ask prompt describes the data as well as the schema, so that a model
// writes the right literals and units: each column's few values when it
// has few (a status), its range, the format of dates kept as text, and the
// unit its name implies. Profiles are computed for tables of up to
// profileMaxRows rows, one scan per table plus one query per column with
// few values, each within the statement timeout; a table whose profile
// fails is described without one. askCache keeps them.
const (
	profileMaxRows    = 100_000
	profileMaxColumns = 40
	profileMaxValues  = 10 // all values are listed up to this many
	profileTopValues  = 5  // the most frequent, up to profileManyValues
	profileManyValues = 50
	profileValueLen   = 40
)

// columnProfile is what the ask prompt says about a column's data.
type columnProfile struct {
	distinct int64
	min, max any
	values   []valueCount // every value, when there are few; else the most frequent
	format   string
	unit     string
	text     bool // the column's values are text (textType), not dates or numbers shown as strings
}

func (p *columnProfile) notes() []string {
	var out []string
	if len(p.values) > 0 {
		vs := make([]string, len(p.values))
		for i, v := range p.values {
			vs[i] = fmt.Sprintf("%s (%d)", literal(v.Value), v.Count)
		}
		label := "values: "
		if p.distinct > int64(len(p.values)) {
			label = fmt.Sprintf("%d values, the most frequent: ", p.distinct)
		}
		out = append(out, label+strings.Join(vs, ", "))
	} else if p.min != nil && p.max != nil && (!p.text || p.format != "") {
		// The ends of free text (names, emails) say nothing useful.
		out = append(out, fmt.Sprintf("from %s to %s", literal(p.min), literal(p.max)))
	}
	if p.format != "" {
		out = append(out, "format: "+p.format)
	}
	if p.unit != "" {
		out = append(out, "unit: "+p.unit)
	}
	return out
}

// literal renders a value as SQL would spell it.
func literal(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		if r := []rune(x); len(r) > profileValueLen {
			x = string(r[:profileValueLen-1]) + "…"
		}
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	}
	return cellText(v)
}

var (
	dateText     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	dateTimeText = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$`)
	instantText  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$`)
	timeText     = regexp.MustCompile(`^\d{2}:\d{2}(:\d{2}(\.\d+)?)?$`)
)

// textFormat names the format both ends of a text column share.
func textFormat(min, max any) string {
	a, ok1 := min.(string)
	b, ok2 := max.(string)
	if !ok1 || !ok2 {
		return ""
	}
	for _, f := range []struct {
		re   *regexp.Regexp
		name string
	}{
		{dateText, "date as text, YYYY-MM-DD (compare and sort as strings; date() and strftime() parse it)"},
		{dateTimeText, "date and time as text, YYYY-MM-DD HH:MM:SS"},
		{instantText, "timestamp as text, ISO 8601 with a time zone offset"},
		{timeText, "time of day as text, HH:MM:SS"},
	} {
		if f.re.MatchString(a) && f.re.MatchString(b) {
			return f.name
		}
	}
	return ""
}

// unitSuffixes are units column names commonly carry.
var unitSuffixes = []struct{ suffix, unit string }{
	{"_cents", "cents (hundredths of the currency unit)"},
	{"_ms", "milliseconds"},
	{"_millis", "milliseconds"},
	{"_secs", "seconds"},
	{"_seconds", "seconds"},
	{"_pct", "percent"},
	{"_percent", "percent"},
	{"_bytes", "bytes"},
	{"_kb", "kilobytes"},
	{"_mb", "megabytes"},
	{"_kg", "kilograms"},
	{"_km", "kilometres"},
}

func unitOf(column string) string {
	c := strings.ToLower(column)
	for _, u := range unitSuffixes {
		if strings.HasSuffix(c, u.suffix) {
			return u.unit
		}
	}
	return ""
}

// textType reports whether a column of type typ holds its values as
// text, so that a date in it is "date as text": on PostgreSQL the text
// types (a timestamptz is a timestamp, whatever its JSON form), on SQLite
// every column (it has no date types).
func (d *DB) textType(typ string) bool {
	if d.dialect.name() != "PostgreSQL" {
		return true
	}
	t := strings.ToLower(typ)
	for _, p := range []string{"text", "character", "varchar", "bpchar", "citext"} {
		if strings.HasPrefix(t, p) && !strings.HasSuffix(t, "[]") {
			return true
		}
	}
	return false
}

// orderedType reports whether count(DISTINCT), min and max apply to
// values of the column type typ: PostgreSQL has them only for some types;
// SQLite for every value but blobs, which say nothing to a model.
func (d *DB) orderedType(typ string) bool {
	t := strings.ToLower(typ)
	if d.dialect.name() != "PostgreSQL" {
		return !strings.Contains(t, "blob")
	}
	for _, p := range []string{"smallint", "integer", "bigint", "numeric", "real", "double precision",
		"text", "character", "date", "timestamp", "time", "uuid", "citext"} {
		if strings.HasPrefix(t, p) && !strings.HasSuffix(t, "[]") {
			return true
		}
	}
	return false
}

// profile computes the profiles of info's columns, which must carry a row
// count; a table too large (or with an estimated count) gets units only.
func (d *DB) profile(ctx context.Context, q querier, info *tableInfo) error {
	for i := range info.Columns {
		c := &info.Columns[i]
		c.profile = &columnProfile{unit: unitOf(c.Name)}
	}
	if info.RowCount == nil || info.RowCountEstimated || info.rowCountAtLeast || *info.RowCount == 0 || *info.RowCount > profileMaxRows {
		return nil
	}
	var cols []*columnInfo
	for i := range info.Columns {
		if c := &info.Columns[i]; d.orderedType(c.Type) && len(cols) < profileMaxColumns {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	var parts []string
	for _, c := range cols {
		q := quoteIdent(c.Name)
		parts = append(parts, fmt.Sprintf("count(DISTINCT %s), min(%s), max(%s)", q, q, q))
	}
	t := info.ref
	res, err := scanRows(ctx, q, "SELECT "+strings.Join(parts, ", ")+" FROM "+t.ident(), nil,
		scanLimits{maxRows: 1, maxBytes: d.opts.MaxResultBytes}, nil)
	if err != nil || len(res.values) != 1 {
		return err
	}
	row := res.values[0]
	for i, c := range cols {
		p := c.profile
		n, _ := row[3*i].(int64)
		p.distinct, p.min, p.max = n, row[3*i+1], row[3*i+2]
		_, isString := p.min.(string)
		p.text = isString && d.textType(c.Type)
		if p.text {
			p.format = textFormat(p.min, p.max)
		}
	}
	for _, c := range cols {
		p := c.profile
		text := p.text
		if c.PrimaryKey || p.distinct == 0 || p.format != "" ||
			p.distinct > profileMaxValues && (!text || p.distinct > profileManyValues) {
			continue
		}
		limit := profileMaxValues
		if p.distinct > profileMaxValues {
			limit = profileTopValues
		}
		if p.values, err = d.topValues(ctx, q, t, c.Name, limit, false); err != nil {
			return err
		}
	}
	return nil
}

// topValues returns the limit most frequent values of a column with their
// counts, most frequent first; withNull counts NULL as a value.
func (d *DB) topValues(ctx context.Context, q querier, t tableRef, column string, limit int, withNull bool) ([]valueCount, error) {
	c := quoteIdent(column)
	where := ""
	if !withNull {
		where = " WHERE " + c + " IS NOT NULL"
	}
	res, err := scanRows(ctx, q, fmt.Sprintf("SELECT %s, count(*) FROM %s%s GROUP BY %s ORDER BY count(*) DESC, %s LIMIT %d",
		c, t.ident(), where, c, c, limit), nil, scanLimits{maxRows: limit, maxBytes: d.opts.MaxResultBytes}, nil)
	if err != nil {
		return nil, err
	}
	out := []valueCount{}
	for _, r := range res.values {
		n, _ := r[1].(int64)
		out = append(out, valueCount{Value: r[0], Count: n})
	}
	return out, nil
}
