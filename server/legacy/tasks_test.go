package legacy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// TestTasksShapes: the members of revision 2025-11-25's tasks reach only
// that revision: the server's tasks capability in the initialize result,
// a tool's execution in tools/list, the client's tasks capability in the
// core's request.
func TestTasksShapes(t *testing.T) {
	core := server.New(protocol.Implementation{Name: "core", Version: "1"}, &server.Options{OmitServerInfo: true})
	defer core.Close()
	core.SetLegacyTasks(protocol.Object{"cancel": json.RawMessage(`{}`)})
	server.AddTool(core, &protocol.Tool{Name: "t", Execution: &protocol.ToolExecution{TaskSupport: "optional"}},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (bool, error) {
			return req.ClientCapabilities().Tasks != nil, nil
		})
	a := legacy.New(core, nil)
	defer a.Close()
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		ts, resp := a.Initialize(context.Background(), req(t, "0", "initialize", initParams(v, `{"tasks":{"list":{}}}`)))
		if resp == nil || resp.Error != nil {
			t.Fatalf("%s: initialize: %s", v, wire(resp))
		}
		want := v == "2025-11-25"
		if got := strings.Contains(string(resp.Result), `"tasks":{"cancel":{}}`); got != want {
			t.Errorf("%s: initialize result %s", v, resp.Result)
		}
		list := ts.Handle(context.Background(), req(t, "1", "tools/list", `{}`), nil)
		if got := strings.Contains(string(list.Result), `"execution":{"taskSupport":"optional"}`); got != want {
			t.Errorf("%s: tools/list %s", v, wire(list))
		}
		res := ts.Handle(context.Background(), req(t, "2", "tools/call", `{"name":"t","arguments":{}}`), nil)
		if got := strings.Contains(string(res.Result), `"text":"true"`); got != want {
			t.Errorf("%s: the client's tasks capability reached the core: %s", v, wire(res))
		}
	}
}

// TestAdapterQueue: Queue puts a notification on the session's standalone
// stream.
func TestAdapterQueue(t *testing.T) {
	a, _ := newAdapter(t, nil)
	s := open(t, a, `{}`, true)
	msg := `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"x"}}`
	if err := a.Queue(context.Background(), s.ID(), []byte(msg)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5e9)
	defer cancel()
	got, err := s.Next(ctx)
	if err != nil || string(got) != msg {
		t.Errorf("Next: %s %v, want %s", got, err, msg)
	}
	s.Close()
	if err := a.Queue(context.Background(), s.ID(), []byte(msg)); err == nil {
		t.Error("Queue on a closed session: no error")
	}
}
