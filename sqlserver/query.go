package sqlserver

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// resultColumn is a column of a query result.
type resultColumn struct {
	Name string `json:"name"`
	Type string `json:"type" description:"The database's type name; empty when it has none (SQLite expressions)"`
}

// queryResult is the structuredContent of the query tool.
type queryResult struct {
	Columns   []resultColumn `json:"columns"`
	Rows      [][]any        `json:"rows" description:"Rows as arrays of values, in column order"`
	RowCount  int            `json:"row_count" description:"Number of rows returned"`
	Truncated bool           `json:"truncated" description:"More rows were available than returned"`
	Notice    string         `json:"notice,omitempty" description:"Which limit truncated the result and how to raise it"`
}

type scanLimits struct {
	maxRows   int
	requested bool // maxRows came from the caller's max_rows
	serverMax int
	maxBytes  int
}

// Progress is reported every progressRows rows or progressEvery, whichever
// comes first.
const (
	progressRows  = 500
	progressEvery = 250 * time.Millisecond
)

// scanRows runs query and reads at most lim.maxRows rows of at most
// lim.maxBytes encoded bytes, reporting the rows read so far to progress
// (which may be nil). When a limit stops the scan, the rest of the
// statement is cancelled in the database rather than read to its end.
func scanRows(ctx context.Context, q querier, query string, args []any, lim scanLimits, progress func(rows int)) (*queryResult, error) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := q.QueryContext(qctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &queryResult{Columns: make([]resultColumn, len(types)), Rows: [][]any{}}
	for i, t := range types {
		res.Columns[i] = resultColumn{Name: t.Name(), Type: strings.ToUpper(t.DatabaseTypeName())}
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	size := 0
	last := time.Now()
	for rows.Next() {
		if len(res.Rows) >= lim.maxRows {
			res.Truncated = true
			res.Notice = rowLimitNote(len(res.Rows), lim.requested, lim.serverMax)
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = jsonValue(v)
		}
		b, err := json.Marshal(row)
		if err != nil {
			return nil, err
		}
		if size+len(b)+1 > lim.maxBytes {
			res.Truncated = true
			res.Notice = byteLimitNote(len(res.Rows), lim.maxBytes)
			break
		}
		size += len(b) + 1
		res.Rows = append(res.Rows, row)
		if n := len(res.Rows); progress != nil && (n%progressRows == 0 || time.Since(last) >= progressEvery) {
			progress(n)
			last = time.Now()
		}
	}
	if res.Truncated {
		cancel()
		rows.Close()
	} else if err := rows.Err(); err != nil {
		return nil, err
	}
	res.RowCount = len(res.Rows)
	return res, nil
}

// jsonValue turns a database value into one JSON encodes faithfully.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil, bool, int64, string:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return `\x` + hex.EncodeToString(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// decodeParams turns JSON parameters into driver values: integers stay
// integers, objects and arrays are passed as their JSON text.
func decodeParams(raw []json.RawMessage) ([]any, error) {
	out := make([]any, len(raw))
	for i, r := range raw {
		var v any
		dec := json.NewDecoder(strings.NewReader(string(r)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("params[%d]: %v", i, err)
		}
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				out[i] = n
			} else if f, err := x.Float64(); err == nil {
				out[i] = f
			} else {
				out[i] = x.String()
			}
		case map[string]any, []any:
			out[i] = string(r)
		default:
			out[i] = x
		}
	}
	return out, nil
}

const maxCell = 60

// textTable renders rows as an aligned plain-text table.
func textTable(cols []resultColumn, rows [][]any) string {
	cells := make([][]string, 0, len(rows)+1)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.Name
	}
	cells = append(cells, head)
	for _, r := range rows {
		line := make([]string, len(r))
		for i, v := range r {
			line[i] = cellText(v)
		}
		cells = append(cells, line)
	}
	width := make([]int, len(cols))
	for _, line := range cells {
		for i, c := range line {
			if i < len(width) {
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
	}
	var b strings.Builder
	for n, line := range cells {
		for i, c := range line {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(line)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)))
			}
		}
		b.WriteString("\n")
		if n == 0 {
			for i, w := range width {
				if i > 0 {
					b.WriteString("-+-")
				}
				b.WriteString(strings.Repeat("-", w))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func cellText(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		s = "NULL"
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		s = fmt.Sprint(x)
	}
	s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", " ").Replace(s)
	if utf8.RuneCountInString(s) > maxCell {
		r := []rune(s)
		s = string(r[:maxCell-1]) + "…"
	}
	return s
}
