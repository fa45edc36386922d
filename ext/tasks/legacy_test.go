package tasks_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// TestLegacyClientsGetNoTasks: the 2025-11-25 form of tasks is not
// served, so a legacy-era client, even one that declares the extension,
// is never sent a task: a May tool answers synchronously, a Must tool is
// refused (-32021, which the legacy era reports as -32600).
func TestLegacyClientsGetNoTasks(t *testing.T) {
	s, _ := testServer(t, nil, nil)
	both := legacy.New(s, nil)
	t.Cleanup(func() { both.Close() })
	for _, declare := range []bool{false, true} {
		sess := connect(t, both, declare, &client.Options{Era: client.EraLegacy})
		if sess.Era() != client.EraLegacy {
			t.Fatalf("era %v", sess.Era())
		}
		ctx := testCtx(t)
		res, err := sess.CallTool(ctx, "slow", map[string]any{"ms": 200}, nil)
		if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*protocol.TextContent).Text != "slept 200 ms" {
			t.Errorf("declared %v: slow: %+v %v", declare, res, err)
		}
		_, err = sess.CallTool(ctx, "held", map[string]any{"text": "x"}, nil)
		if c := code(err); c != protocol.CodeMissingRequiredClientCapability && c != -32600 {
			t.Errorf("declared %v: held: %v, want the missing capability", declare, err)
		}
	}
}
