package main

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Renderings of a tabular result (--format).
const (
	formatTable    = "table"
	formatCSV      = "csv"
	formatMarkdown = "markdown"
	formatJSONL    = "jsonl"
)

// formats lists the renderings of a tabular result, as help names them.
var formats = []string{formatTable, formatCSV, formatMarkdown, formatJSONL}

// tabular is structured content that reads as a table: a query result
// (columns and rows arrays, as the query tool of mcpkit serve sql returns
// it), or a list of flat objects (alone, or the only member of an object).
type tabular struct {
	columns []string
	rows    [][]json.RawMessage // each row's values in column order; nil where a row has none
	// objects are the rows of a list of flat objects as they came, for
	// JSON lines; nil for a query result.
	objects []json.RawMessage
	// query tells a query result: its rows are counted and its notice
	// and next_cursor reported.
	query      bool
	notice     string
	nextCursor string
}

// parseTabular returns raw as a table, or ok false when it is not one.
func parseTabular(raw json.RawMessage) (t *tabular, ok bool) {
	if t, ok := queryRows(raw); ok {
		return t, true
	}
	list := raw
	var obj map[string]json.RawMessage
	if jsonrpc.Unmarshal(raw, &obj) == nil && len(obj) == 1 {
		for _, v := range obj {
			list = v
		}
	}
	return flatRows(list)
}

// queryRows reads a query result: an object with a "columns" array (of
// names, or of objects with a "name") and a "rows" array of arrays as long
// as it, and optionally a "notice" and a "next_cursor".
func queryRows(raw json.RawMessage) (*tabular, bool) {
	var q struct {
		Columns    []json.RawMessage   `json:"columns"`
		Rows       [][]json.RawMessage `json:"rows"`
		Notice     json.RawMessage     `json:"notice"`
		NextCursor json.RawMessage     `json:"next_cursor"`
	}
	if jsonrpc.Unmarshal(raw, &q) != nil || len(q.Columns) == 0 || q.Rows == nil {
		return nil, false
	}
	t := &tabular{query: true, columns: make([]string, len(q.Columns)), rows: q.Rows}
	for i, c := range q.Columns {
		var name string
		if jsonrpc.Unmarshal(c, &name) != nil {
			var col struct {
				Name *string `json:"name"`
			}
			if jsonrpc.Unmarshal(c, &col) != nil || col.Name == nil {
				return nil, false
			}
			name = *col.Name
		}
		t.columns[i] = name
	}
	for _, r := range q.Rows {
		if len(r) != len(t.columns) {
			return nil, false
		}
	}
	_ = jsonrpc.Unmarshal(q.Notice, &t.notice)
	_ = jsonrpc.Unmarshal(q.NextCursor, &t.nextCursor)
	return t, true
}

// errNotFlat stops reading an object that has a nested value.
var errNotFlat = errors.New("not flat")

// flatRows reads a JSON array of objects whose members are all scalars.
// The columns are the union of the objects' keys, in the order they first
// appear.
func flatRows(raw json.RawMessage) (*tabular, bool) {
	var items []json.RawMessage
	if jsonrpc.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, false
	}
	t := &tabular{objects: items}
	index := map[string]int{}
	var members []map[string]json.RawMessage
	for _, item := range items {
		row := map[string]json.RawMessage{}
		flat := true
		err := jsonrpc.EachMember(item, func(name []byte, v jsontext.Value) error {
			if k := v.Kind(); k == '{' || k == '[' {
				flat = false
				return errNotFlat
			}
			k := string(name)
			if _, seen := index[k]; !seen {
				index[k] = len(t.columns)
				t.columns = append(t.columns, k)
			}
			row[k] = json.RawMessage(v)
			return nil
		})
		if err != nil || !flat {
			return nil, false
		}
		members = append(members, row)
	}
	if len(t.columns) == 0 {
		return nil, false
	}
	for _, m := range members {
		cells := make([]json.RawMessage, len(t.columns))
		for k, v := range m {
			cells[index[k]] = v
		}
		t.rows = append(t.rows, cells)
	}
	return t, true
}

// cellText renders a value for a cell: strings as they are, other scalars
// as their JSON text, null as empty, objects and arrays as compact JSON. A
// binary value ({"base64": ...}) is its size when sizes is set.
func cellText(v json.RawMessage, sizes bool) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		if jsonrpc.Unmarshal(v, &s) == nil {
			return s
		}
	case '{', '[':
		if sizes {
			if n, ok := binarySize(v); ok {
				return "<" + size(n) + ">"
			}
		}
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			return buf.String()
		}
	}
	return string(v)
}

// binarySize returns the length of a binary value, an object whose only
// member "base64" holds the bytes in standard base64.
func binarySize(v json.RawMessage) (int, bool) {
	var obj map[string]json.RawMessage
	if jsonrpc.Unmarshal(v, &obj) != nil || len(obj) != 1 {
		return 0, false
	}
	var b64 string
	if jsonrpc.Unmarshal(obj["base64"], &b64) != nil {
		return 0, false
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return 0, false
	}
	return len(b), true
}

// write renders the table in format (one of formats); tty shortens the
// table format's long cells. The table format heads a list's columns with
// its keys in capitals, a query result's with the column names as they
// are. A query result's rows are counted after a table or Markdown table.
func (t *tabular) write(w io.Writer, format string, tty bool) error {
	switch format {
	case formatCSV:
		return t.writeCSV(w)
	case formatMarkdown:
		if err := t.writeMarkdown(w); err != nil {
			return err
		}
		if t.query {
			_, err := fmt.Fprintf(w, "\n%s\n", rowCount(len(t.rows)))
			return err
		}
		return nil
	case formatJSONL:
		return t.writeJSONL(w)
	}
	tab := &table{header: t.columns}
	if t.objects != nil {
		tab.header = make([]string, len(t.columns))
		for i, k := range t.columns {
			tab.header[i] = strings.ToUpper(k)
		}
	}
	for _, r := range t.rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = cellText(v, true)
		}
		tab.add(cells...)
	}
	if err := tab.write(w, tty); err != nil {
		return err
	}
	if t.query {
		_, err := fmt.Fprintln(w, rowCount(len(t.rows)))
		return err
	}
	return nil
}

// rowCount is the line under a query result: "(1 row)", "(N rows)".
func rowCount(n int) string {
	if n == 1 {
		return "(1 row)"
	}
	return fmt.Sprintf("(%d rows)", n)
}

// writeCSV writes a header row and the rows as CSV, quoted as RFC 4180
// says (lines end in "\n").
func (t *tabular) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.columns); err != nil {
		return err
	}
	for _, r := range t.rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = cellText(v, false)
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeMarkdown writes a GitHub pipe table: the header, its separator and
// the rows, with pipes and line breaks in cells escaped.
func (t *tabular) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + markdownCell(c) + " |")
		}
		b.WriteString("\n")
	}
	line(t.columns)
	b.WriteString("|")
	for range t.columns {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = cellText(v, true)
		}
		line(cells)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownEscaper escapes what would end a Markdown table cell or row.
var markdownEscaper = strings.NewReplacer("|", `\|`, "\r\n", "<br>", "\n", "<br>", "\r", "<br>")

// markdownCell escapes s for a Markdown table cell.
func markdownCell(s string) string { return markdownEscaper.Replace(s) }

// writeJSONL writes one compact JSON object per row: a list's objects as
// they are; a query result's rows keyed by column name, in column order
// (a repeated name gets a suffix, "_2", "_3", ..., to stay a key of its
// own).
func (t *tabular) writeJSONL(w io.Writer) error {
	var buf bytes.Buffer
	if t.objects != nil {
		for _, o := range t.objects {
			if err := json.Compact(&buf, o); err != nil {
				return err
			}
			buf.WriteByte('\n')
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	keys := make([][]byte, len(t.columns))
	for i, name := range uniqueNames(t.columns) {
		keys[i], _ = json.Marshal(name)
	}
	for _, r := range t.rows {
		buf.WriteByte('{')
		for i, v := range r {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(keys[i])
			buf.WriteByte(':')
			if len(bytes.TrimSpace(v)) == 0 {
				buf.WriteString("null")
			} else if err := json.Compact(&buf, v); err != nil {
				return err
			}
		}
		buf.WriteString("}\n")
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// uniqueNames returns names with each repeat suffixed "_2", "_3", ...
// (skipping suffixed names already taken).
func uniqueNames(names []string) []string {
	taken := map[string]bool{}
	for _, n := range names {
		taken[n] = true
	}
	seen := map[string]bool{}
	out := make([]string, len(names))
	for i, n := range names {
		name := n
		for k := 2; seen[name]; k++ {
			if c := fmt.Sprintf("%s_%d", n, k); !taken[c] {
				name = c
			}
		}
		seen[name] = true
		out[i] = name
	}
	return out
}
