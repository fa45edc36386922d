package legacy_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
)

func TestProbe(t *testing.T) {
	core := server.New(protocol.Implementation{Name: "tiny", Version: "1.2.3"}, &server.Options{Instructions: "Use echo."})
	type in struct {
		Text string `json:"text"`
	}
	server.AddTool(core, &protocol.Tool{Name: "echo", Description: "Echoes"}, func(ctx context.Context, req *server.CallRequest, a in) (string, error) { return a.Text, nil })
	core.AddResource(&protocol.Resource{URI: "tiny://a", Name: "a"}, server.TextResource("text/plain", "A"))
	a := legacy.New(core, nil)
	defer a.Close()
	m, _ := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`))
	s, r := a.Initialize(context.Background(), m)
	t.Logf("%s", r.Append(nil))
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"tiny://nope"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"tiny://a"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"server/discover"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`,
	} {
		m, _ := jsonrpc.Decode([]byte(l))
		t.Logf("%s", s.Handle(context.Background(), m, transport.NotifierFunc(func(b []byte) error { t.Logf("note %s", b); return nil })).Append(nil))
		t.Logf("core %s", core.Handle(context.Background(), m, nil).Append(nil))
	}
}
