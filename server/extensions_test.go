package server

import (
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
)

// TestAddExtension: an extension added after New joins those of Options in
// server/discover, replacing an earlier entry, without touching the map
// Options passed in.
func TestAddExtension(t *testing.T) {
	given := map[string]protocol.Object{"com.example/x": {}}
	s := newTestServer(&Options{Extensions: given})
	s.AddExtension("com.example/y", protocol.Object{"v": json.RawMessage(`1`)})
	s.AddExtension("com.example/z", nil)
	s.AddExtension("com.example/y", protocol.Object{"v": json.RawMessage(`2`)})
	r := do(t, s, protocol.MethodDiscover, params(t, nil, `{}`))
	var got struct {
		Capabilities struct {
			Extensions json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(r.Result, &got); err != nil {
		t.Fatal(err)
	}
	if want := `{"com.example/x":{},"com.example/y":{"v":2},"com.example/z":{}}`; string(got.Capabilities.Extensions) != want {
		t.Errorf("extensions = %s, want %s", got.Capabilities.Extensions, want)
	}
	if len(given) != 1 {
		t.Errorf("Options.Extensions changed: %v", given)
	}
}
