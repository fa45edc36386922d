package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestTabular renders structured content in each format, or finds that it
// is not a table.
func TestTabular(t *testing.T) {
	tests := []struct {
		name, raw, format string
		tty               bool
		want              string // "" when raw is not a table
	}{
		{"query, names", `{"columns":["a","b"],"rows":[[1,"x"],[2,null]]}`, formatTable, false, "a  b\n1  x\n2  -\n(2 rows)\n"},
		{"query, column objects", `{"columns":[{"name":"a","type":"INT"}],"rows":[[1.50]]}`, formatCSV, false, "a\n1.50\n"},
		{"query, no rows", `{"columns":["a"],"rows":[]}`, formatMarkdown, false, "| a |\n| --- |\n\n(0 rows)\n"},
		{"query, jsonl keeps numbers", `{"columns":["n","big"],"rows":[[1e3,12345678901234567890]]}`, formatJSONL, false, `{"n":1e3,"big":12345678901234567890}` + "\n"},
		{"query, indented cells", "{\"columns\":[\"o\"],\"rows\":[[{ \"k\" : [ 1, 2 ] }]]}", formatJSONL, false, `{"o":{"k":[1,2]}}` + "\n"},
		{"query, markdown escapes", `{"columns":["a|b"],"rows":[["x|y\r\nz"]]}`, formatMarkdown, false, "| a\\|b |\n| --- |\n| x\\|y<br>z |\n\n(1 row)\n"},
		{"query, not base64", `{"columns":["b"],"rows":[[{"base64":"%%"}],[{"base64":"AA==","x":1}]]}`, formatTable, false,
			"b\n{\"base64\":\"%%\"}\n{\"base64\":\"AA==\",\"x\":1}\n(2 rows)\n"},
		{"query, long cell on a terminal", `{"columns":["s"],"rows":[["` + strings.Repeat("x", 70) + `"]]}`, formatTable, true,
			"s\n" + strings.Repeat("x", 59) + "…\n(1 row)\n"},
		{"query, long cell off a terminal", `{"columns":["s"],"rows":[["` + strings.Repeat("x", 70) + `"]]}`, formatTable, false,
			"s\n" + strings.Repeat("x", 70) + "\n(1 row)\n"},
		{"list", `[{"a":1,"b":true},{"b":false,"c":"z"}]`, formatTable, false, "A  B      C\n1  true   -\n-  false  z\n"},
		{"list, csv", `[{"a":1,"b":true},{"b":false,"c":"z"}]`, formatCSV, false, "a,b,c\n1,true,\n,false,z\n"},
		{"list, jsonl keeps the objects", `[{"b":1, "a":2},{"c":null}]`, formatJSONL, false, `{"b":1,"a":2}` + "\n" + `{"c":null}` + "\n"},
		{"list, markdown", `{"items":[{"a":"1"}]}`, formatMarkdown, false, "| a |\n| --- |\n| 1 |\n"},
		{"nested list", `[{"a":{"b":1}}]`, formatTable, false, ""},
		{"empty list", `[]`, formatTable, false, ""},
		{"list of empty objects", `[{}]`, formatTable, false, ""},
		{"list of scalars", `[1,2]`, formatTable, false, ""},
		{"object of two lists", `{"a":[{"x":1}],"b":[{"x":2}]}`, formatTable, false, ""},
		{"object", `{"ok":true}`, formatTable, false, ""},
		{"rows of another length", `{"columns":["a","b"],"rows":[[1]]}`, formatTable, false, ""},
		{"rows not arrays", `{"columns":["a"],"rows":[{"a":1}]}`, formatTable, false, ""},
		{"no columns", `{"columns":[],"rows":[]}`, formatTable, false, ""},
		{"columns without names", `{"columns":[{"type":"INT"}],"rows":[[1]]}`, formatTable, false, ""},
		{"no rows member", `{"columns":["a"]}`, formatTable, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ok := parseTabular(json.RawMessage(tt.raw))
			if ok != (tt.want != "") {
				t.Fatalf("tabular %v, want %v", ok, tt.want != "")
			}
			if !ok {
				return
			}
			var b bytes.Buffer
			if err := tab.write(&b, tt.format, tt.tty); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestQueryNotice(t *testing.T) {
	tab, ok := parseTabular(json.RawMessage(`{"columns":["a"],"rows":[[1]],"notice":"cut","next_cursor":"c1","truncated":true}`))
	if !ok || tab.notice != "cut" || tab.nextCursor != "c1" || !tab.query {
		t.Errorf("got %+v, %v", tab, ok)
	}
	tab, ok = parseTabular(json.RawMessage(`{"columns":["a"],"rows":[[1]],"notice":7}`))
	if !ok || tab.notice != "" {
		t.Errorf("a notice that is not text: got %+v, %v", tab, ok)
	}
}

func TestCellText(t *testing.T) {
	tests := []struct {
		raw         string
		table, data string // with sizes, without
	}{
		{`null`, "", ""},
		{``, "", ""},
		{`"text"`, "text", "text"},
		{`""`, "", ""},
		{`-1.5e2`, "-1.5e2", "-1.5e2"},
		{`false`, "false", "false"},
		{`{ "a" : [1, 2] }`, `{"a":[1,2]}`, `{"a":[1,2]}`},
		{`[ ]`, `[]`, `[]`},
		{`{"base64":"AQID"}`, "<3 bytes>", `{"base64":"AQID"}`},
		{`{"base64":"AQ=="}`, "<1 byte>", `{"base64":"AQ=="}`},
		{`{"base64":""}`, "<0 bytes>", `{"base64":""}`},
		{`{"base64":1}`, `{"base64":1}`, `{"base64":1}`},
	}
	for _, tt := range tests {
		if got := cellText(json.RawMessage(tt.raw), true); got != tt.table {
			t.Errorf("cellText(%s, sizes) = %q, want %q", tt.raw, got, tt.table)
		}
		if got := cellText(json.RawMessage(tt.raw), false); got != tt.data {
			t.Errorf("cellText(%s) = %q, want %q", tt.raw, got, tt.data)
		}
	}
}

func TestUniqueNames(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"a", "a", "a"}, []string{"a", "a_2", "a_3"}},
		{[]string{"a", "a", "a_2"}, []string{"a", "a_3", "a_2"}},
		{[]string{"", ""}, []string{"", "_2"}},
	}
	for _, tt := range tests {
		if got := uniqueNames(tt.in); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("uniqueNames(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
