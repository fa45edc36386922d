package tasks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// recorder is a listen stream's Notifier.
type recorder chan []byte

func (r recorder) Notify(msg []byte) error { r <- append([]byte(nil), msg...); return nil }

// listen serves subscriptions/listen for principal with filter, declaring
// the extension or not, until ctx ends; notifications go to the recorder.
func listen(ctx context.Context, s *server.Server, principal string, declare bool, filter map[string]any) (recorder, chan error) {
	caps := map[string]any{}
	if declare {
		caps["extensions"] = map[string]any{tasks.ID: map[string]any{}}
	}
	b, _ := json.Marshal(map[string]any{"notifications": filter,
		"_meta": map[string]any{protocol.MetaProtocolVersion: "2026-07-28", protocol.MetaClientCapabilities: caps}})
	rec := make(recorder, 64)
	done := make(chan error, 1)
	go func() {
		_, err := s.Serve(server.WithPrincipal(ctx, principal), &transport.Request{
			Message: &jsonrpc.Message{ID: jsonrpc.StringID("L"), Method: protocol.MethodSubscriptionsListen, Params: b},
			Kind:    transport.KindModern, Notifier: rec})
		done <- err
	}()
	return rec, done
}

func next(t *testing.T, ctx context.Context, rec recorder) *jsonrpc.Message {
	t.Helper()
	select {
	case b := <-rec:
		m, err := jsonrpc.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	case <-ctx.Done():
		t.Fatal("no notification")
		return nil
	}
}

// TestStatusNotifications: a listen stream that asks for taskIds gets the
// caller's own tasks acknowledged (not another principal's, nor unknown
// ones) and a notifications/tasks with the whole task, tagged with the
// subscription, at each change of status; a client that did not declare
// the extension is refused with -32021. (The suite's
// tasks-status-notifications scenario cannot exercise this yet.)
func TestStatusNotifications(t *testing.T) {
	ctx := testCtx(t)
	g := newGate()
	s, _ := testServer(t, nil, g)
	raw, err := rpc(ctx, s, "alice", true, protocol.MethodToolsCall, map[string]any{"name": "held", "arguments": map[string]any{"text": "n"}})
	if err != nil {
		t.Fatal(err)
	}
	id := decodeTask(t, raw).TaskID
	rawBob, err := rpc(ctx, s, "bob", true, protocol.MethodToolsCall, map[string]any{"name": "slow", "arguments": map[string]any{"ms": 1, "promote": true}})
	if err != nil {
		t.Fatal(err)
	}
	bobs := decodeTask(t, rawBob).TaskID

	lctx, stop := context.WithCancel(ctx)
	defer stop()
	rec, done := listen(lctx, s, "alice", true, map[string]any{"taskIds": []string{id, bobs, "unknown"}, "toolsListChanged": true})
	ack := next(t, ctx, rec)
	if ack.Method != protocol.NotificationSubscriptionsAcknowledged || !strings.Contains(string(ack.Params), `"taskIds":["`+id+`"]`) || !strings.Contains(string(ack.Params), `"toolsListChanged":true`) {
		t.Fatalf("acknowledgement %s %s", ack.Method, ack.Params)
	}
	<-g.started
	close(g.release)
	for {
		m := next(t, ctx, rec)
		if m.Method != tasks.NotificationStatus {
			t.Fatalf("unexpected %s %s", m.Method, m.Params)
		}
		var tk tasks.Task
		if err := json.Unmarshal(m.Params, &tk); err != nil || tk.TaskID != id {
			t.Fatalf("notification %s", m.Params)
		}
		if !strings.Contains(string(m.Params), `"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}`) {
			t.Errorf("notification without the subscription id: %s", m.Params)
		}
		if tk.Status == tasks.Completed {
			if !strings.Contains(string(tk.Result), "released n") {
				t.Errorf("completed notification without the result: %s", m.Params)
			}
			break
		}
	}
	stop()
	<-done

	_, refused := listen(ctx, s, "alice", false, map[string]any{"taskIds": []string{id}})
	if err := <-refused; code(err) != protocol.CodeMissingRequiredClientCapability {
		t.Errorf("listen for taskIds without the extension: %v", err)
	}
}
