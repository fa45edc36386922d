package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestStructuredContentCompacted: structuredContent is checked and sent
// without insignificant white space, the white space inside its strings
// kept; invalid JSON is refused.
func TestStructuredContentCompacted(t *testing.T) {
	r := &CallToolResult{Content: []Content{}, StructuredContent: json.RawMessage("{ \"a b\" : [ 1 , \"c  d\\n\" ],\n\"e\":{} }")}
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `"structuredContent":{"a b":[1,"c  d\n"],"e":{}}`; !bytes.Contains(b, []byte(want)) {
		t.Errorf("got %s, want it to hold %s", b, want)
	}
	for _, bad := range []string{`{"a":`, `{"a":1}x`, `{"a":1,}`} {
		if _, err := (&CallToolResult{StructuredContent: json.RawMessage(bad)}).MarshalJSON(); err == nil {
			t.Errorf("%s was encoded", bad)
		}
	}
}
