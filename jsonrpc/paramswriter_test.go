package jsonrpc

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestParamsWriter: a message given params with SetParams goes through the
// members EachParam reads from the text, in order, without reading it
// again; beyond the spans kept, it reads the text.
func TestParamsWriter(t *testing.T) {
	for _, n := range []int{0, 1, 3, maxSpans, maxSpans + 2} {
		var w ParamsWriter
		w.Reset(nil)
		names := [][]byte{[]byte("name"), []byte(`we"ird`), []byte("é"), []byte("_meta"), []byte("a"), []byte("b"), []byte("c"), []byte("d")}
		values := [][]byte{[]byte(`"echo"`), []byte(`{"x":[1,2]}`), []byte(`null`), []byte(`{"k":"v"}`), []byte(`1`), []byte(`true`), []byte(`"s"`), []byte(`[]`)}
		for i := range n {
			w.Add(names[i], values[i])
		}
		var m Message
		m.SetParams(&w)
		if n > 0 && n <= maxSpans && m.nspans != uint8(n) {
			t.Errorf("%d members: %d spans kept", n, m.nspans)
		}
		type member struct{ name, value string }
		var fromSpans, fromText []member
		if err := m.EachParam(func(k []byte, v jsontext.Value) error {
			fromSpans = append(fromSpans, member{string(k), string(v)})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := EachMember(m.Params, func(k []byte, v jsontext.Value) error {
			fromText = append(fromText, member{string(k), string(v)})
			return nil
		}); err != nil {
			t.Fatalf("%d members: %s is not a valid object: %v", n, m.Params, err)
		}
		if len(fromSpans) != n || len(fromText) != n {
			t.Fatalf("%d members: %d from the spans, %d from the text", n, len(fromSpans), len(fromText))
		}
		for i := range fromText {
			if fromSpans[i] != fromText[i] || fromText[i].name != string(names[i]) || !bytes.Equal([]byte(fromText[i].value), values[i]) {
				t.Errorf("member %d: spans %q, text %q, want %q: %s", i, fromSpans[i], fromText[i], names[i], values[i])
			}
		}
	}
}
