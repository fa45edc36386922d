package sqlserver

import (
	"encoding/json"
	"testing"
)

// TestAppendJSONString: strings are written as JSON that reads back as
// the same string, control characters, quotes, U+2028 and non-ASCII text
// included.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\\back`, "line\nbreak\ttab\r\x00\x1f", "caf\u00e9 \u65e5\u672c", "sep\u2028par\u2029end", "<&>", "\xe2\x80"} {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("%q: %s is not JSON: %v", s, b, err)
			continue
		}
		if back != s && json.Valid(b) && s != "\xe2\x80" {
			t.Errorf("%q came back as %q", s, back)
		}
	}
}

// TestQueryResultJSON: the hand-written encoding of a result is what
// encoding/json writes of the same value.
func TestQueryResultJSON(t *testing.T) {
	r := &queryResult{
		Columns:  []resultColumn{{Name: "id", Type: "bigint"}, {Name: "na\"me", Type: "text"}},
		Rows:     []json.RawMessage{json.RawMessage(`[1,"a"]`), json.RawMessage(`[2,null]`)},
		RowCount: 2, Offset: 4, Truncated: true, NextCursor: "abc", Notice: "cut\nhere",
	}
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.appendJSON(nil); string(got) != string(want) {
		t.Errorf("appendJSON:\n got %s\nwant %s", got, want)
	}
	empty := &queryResult{Columns: []resultColumn{}, Rows: []json.RawMessage{}}
	want, _ = json.Marshal(empty)
	if got := empty.appendJSON(nil); string(got) != string(want) {
		t.Errorf("appendJSON:\n got %s\nwant %s", got, want)
	}
}

// TestJSONNumbers: PostgreSQL's number text is passed through only when
// it is a JSON number.
func TestJSONNumbers(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "-1.5": true, "1e+20": true, "12.50": true, "NaN": false, "Infinity": false,
		"-Infinity": false, "1.": false, ".5": false, "01": false, "": false, "-": false, "1e": false} {
		if got := isJSONNumber([]byte(s)); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
