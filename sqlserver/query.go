package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// resultColumn is a column of a query result.
type resultColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// queryResult is the structuredContent of the query tool.
type queryResult struct {
	Columns    []resultColumn    `json:"columns"`
	Rows       []json.RawMessage `json:"rows"`
	RowCount   int               `json:"row_count"`
	Offset     int               `json:"offset,omitempty" description:"Rows before the first one returned"`
	Truncated  bool              `json:"truncated"`
	NextCursor string            `json:"next_cursor,omitempty" description:"Pass as cursor, with the same sql and params, to read on"`
	Notice     string            `json:"notice,omitempty"`

	cells    [][]string // the rows' text-table cells
	values   [][]any    // the rows as Go values (scanRows only)
	oids     []uint32   // PostgreSQL: the columns' type OIDs
	typeMods []int32    // and type modifiers
}

type scanLimits struct {
	maxRows   int
	requested bool // maxRows came from the caller's max_rows
	serverMax int
	maxBytes  int
	skip      int // rows to read past first (a cursor's offset)
}

// rowBudget applies scanLimits to the rows of one result as they are read:
// it counts them into read (which may be nil), skips the cursor's offset,
// and marks res truncated, with its notice, when a limit stops the scan.
type rowBudget struct {
	lim     scanLimits
	read    *atomic.Int64
	res     *queryResult
	size    int // encoded bytes taken
	skipped int
}

// admit accounts for one row read: keep is false for a row of the offset,
// stop is true once the rows taken reach the limit.
func (b *rowBudget) admit() (keep, stop bool) {
	if b.read != nil {
		b.read.Add(1)
	}
	if b.skipped < b.lim.skip {
		b.skipped++
		return false, false
	}
	if len(b.res.Rows) >= b.lim.maxRows {
		b.res.Truncated = true
		b.res.Notice = rowLimitNote(len(b.res.Rows), b.lim.requested, b.lim.serverMax)
		return false, true
	}
	return true, false
}

// fits reports whether n more bytes stay within the byte limit, marking
// the result truncated when they do not.
func (b *rowBudget) fits(n int) bool {
	if b.size+n > b.lim.maxBytes {
		b.res.Truncated = true
		b.res.Notice = byteLimitNote(len(b.res.Rows), b.lim.maxBytes)
		return false
	}
	return true
}

// take counts n bytes of a row that is kept, if they fit.
func (b *rowBudget) take(n int) bool {
	if !b.fits(n) {
		return false
	}
	b.size += n
	return true
}

// progressEvery is how often a statement that runs long reports progress:
// the time it has run and the rows read so far.
const progressEvery = time.Second

// scanRows runs query, skips lim.skip rows, and reads at most lim.maxRows
// rows of at most lim.maxBytes encoded bytes, counting the rows read into
// read (which may be nil). When a limit stops the scan, the rest of the
// statement is cancelled in the database rather than read to its end.
func scanRows(ctx context.Context, q querier, query string, args []any, lim scanLimits, read *atomic.Int64) (*queryResult, error) {
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
	res := &queryResult{Columns: make([]resultColumn, len(types)), Rows: []json.RawMessage{}, Offset: lim.skip}
	convert := make([]converter, len(types))
	var arrays pgArrays
	for i, t := range types {
		typ := strings.ToUpper(t.DatabaseTypeName())
		res.Columns[i] = resultColumn{Name: t.Name(), Type: t.DatabaseTypeName()}
		convert[i] = converterFor(typ, &arrays)
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rb := rowBudget{lim: lim, read: read, res: res}
	for rows.Next() {
		keep, stop := rb.admit()
		if stop {
			break
		}
		if !keep {
			continue
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		// The raw size bounds the encoded one from below: a row already
		// over the cap is not encoded at all.
		if !rb.fits(rawSize(vals)) {
			break
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = convert[i](v)
		}
		b, err := json.Marshal(row)
		if err != nil {
			return nil, err
		}
		if !rb.take(len(b) + 1) {
			break
		}
		res.Rows = append(res.Rows, b)
		res.values = append(res.values, row)
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = cellText(v)
		}
		res.cells = append(res.cells, cells)
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

// rawSize is the size of a row's text and binary values.
func rawSize(vals []any) int {
	n := 0
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			n += len(x)
		case []byte:
			n += len(x)
		}
	}
	return n
}

// decodeParams turns JSON parameters into driver values: integers stay
// integers, objects and arrays are passed as their JSON text.
func decodeParams(raw []json.RawMessage) ([]any, error) {
	out := make([]any, len(raw))
	for i, r := range raw {
		var v jsonrpc.Any
		if err := jsonrpc.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("params[%d]: %v", i, err)
		}
		switch x := v.Value.(type) {
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

// textTable renders rows (their cells, cellText's) as an aligned
// plain-text table.
func textTable(cols []resultColumn, rows [][]string) string {
	cells := make([][]string, 0, len(rows)+1)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.Name
	}
	cells = append(cells, head)
	cells = append(cells, rows...)
	width := make([]int, len(cols))
	for _, line := range cells {
		for i, c := range line {
			if i < len(width) {
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
	}
	var b strings.Builder
	total := 0
	for _, w := range width {
		total += w + 3
	}
	b.Grow(total * len(cells))
	for n, line := range cells {
		for i, c := range line {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(line)-1 {
				pad(&b, width[i]-utf8.RuneCountInString(c))
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

const spaces = "                                                                "

// pad writes n spaces.
func pad(b *strings.Builder, n int) {
	for n > len(spaces) {
		b.WriteString(spaces)
		n -= len(spaces)
	}
	b.WriteString(spaces[:n])
}

// appendJSON appends the result's JSON (what json.Marshal writes, the
// rows as they were encoded) to dst.
func (r *queryResult) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"columns":[`...)
	for i, c := range r.Columns {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = appendJSONString(dst, c.Name)
		dst = append(dst, `,"type":`...)
		dst = appendJSONString(dst, c.Type)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"rows":[`...)
	for i, row := range r.Rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, row...)
	}
	dst = append(dst, `],"row_count":`...)
	dst = strconv.AppendInt(dst, int64(r.RowCount), 10)
	if r.Offset != 0 {
		dst = append(dst, `,"offset":`...)
		dst = strconv.AppendInt(dst, int64(r.Offset), 10)
	}
	dst = append(dst, `,"truncated":`...)
	dst = strconv.AppendBool(dst, r.Truncated)
	if r.NextCursor != "" {
		dst = append(dst, `,"next_cursor":`...)
		dst = appendJSONString(dst, r.NextCursor)
	}
	if r.Notice != "" {
		dst = append(dst, `,"notice":`...)
		dst = appendJSONString(dst, r.Notice)
	}
	return append(dst, '}')
}
