package legacy

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// TestLegacyResultFastPath checks that the shortcut for the core's usual
// results gives what the member-by-member rewrite gives.
func TestLegacyResultFastPath(t *testing.T) {
	a := New(server.New(protocol.Implementation{Name: "x", Version: "1"}, nil), nil)
	defer a.Close()
	si := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}`
	for _, res := range []string{
		`{"resultType":"complete",` + si + `,"content":[{"type":"text","text":"hi"}]}`,
		`{"resultType":"complete","content":[]}`,
		`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"},"k":1},"content":[]}`,
		`{"resultType":"complete",` + si + `,"tools":[],"ttlMs":60000,"cacheScope":"public"}`,
		`{"resultType":"complete",` + si + `,"contents":[],"cacheScope":"private"}`,
		`{"resultType":"input_required",` + si + `,"inputRequests":{}}`,
		`{"content":[],"resultType":"complete",` + si + `}`,
	} {
		gotB, gotIR := a.legacyResult([]byte(res))
		wantB, wantIR := legacyResultSlow([]byte(res))
		var got, want any
		if err := json.Unmarshal(gotB, &got); err != nil {
			t.Fatalf("%s: result %s: %v", res, gotB, err)
		}
		_ = json.Unmarshal(wantB, &want)
		if !reflect.DeepEqual(got, want) || gotIR != wantIR {
			t.Errorf("%s:\n got %s %v\nwant %s %v", res, gotB, gotIR, wantB, wantIR)
		}
	}
}
