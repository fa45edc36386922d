package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

func legacyInit(version string) json.RawMessage {
	return json.RawMessage(`{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
}

// TestSetLegacyTasks: the 2025-11-25 tasks capability is in the
// initialize result of that revision only, never in server/discover.
func TestSetLegacyTasks(t *testing.T) {
	s := newTestServer(nil)
	s.SetLegacyTasks(protocol.Object{"cancel": json.RawMessage(`{}`)})
	if r := do(t, s, protocol.MethodDiscover, params(t, nil, `{}`)); r.Error != nil || strings.Contains(string(r.Result), `"tasks"`) {
		t.Errorf("server/discover: %s %v", r.Result, r.Error)
	}
	for version, want := range map[string]bool{"2025-11-25": true, "2025-06-18": false, "2024-11-05": false} {
		r := do(t, s, protocol.MethodInitialize, legacyInit(version))
		if r.Error != nil {
			t.Fatalf("%s: %v", version, r.Error)
		}
		if got := strings.Contains(string(r.Result), `"tasks":{"cancel":{}}`); got != want {
			t.Errorf("%s: initialize result %s, tasks advertised %v, want %v", version, r.Result, got, want)
		}
	}
	s.SetLegacyTasks(nil)
	if r := do(t, s, protocol.MethodInitialize, legacyInit("2025-11-25")); strings.Contains(string(r.Result), `"tasks"`) {
		t.Errorf("after SetLegacyTasks(nil): %s", r.Result)
	}
}

// TestLookupMethodWrap: an extension finds a built-in method with
// LookupMethod and wraps it; the wrapper sees Request.SessionID of a
// legacy session's request, and "" for a modern one; QueueLegacy reaches
// the session's standalone stream.
func TestLookupMethodWrap(t *testing.T) {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "t"}, func(ctx context.Context, req *CallRequest, _ struct{}) (string, error) { return "", nil })
	if _, ok := s.LookupMethod("no/such"); ok {
		t.Error("LookupMethod found an unknown method")
	}
	m, ok := s.LookupMethod(protocol.MethodToolsList)
	if !ok || m.Eras != EraModern|EraLegacy || m.Offered == nil {
		t.Fatalf("tools/list: %+v %v", m, ok)
	}
	var sessions []string
	list := m.Handler
	m.Handler = func(ctx context.Context, r *Request) (protocol.Result, error) {
		sessions = append(sessions, r.SessionID())
		return list(ctx, r)
	}
	s.HandleMethod(m)
	if r := do(t, s, protocol.MethodToolsList, params(t, nil, `{}`)); r.Error != nil {
		t.Fatal(r.Error)
	}
	init := &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: protocol.MethodInitialize, Params: legacyInit("2025-11-25")}
	res, err := s.Serve(context.Background(), &transport.Request{Message: init, Kind: transport.KindInitialize})
	if err != nil {
		t.Fatal(err)
	}
	sess := res.(*transport.Opened).Session
	msg := &jsonrpc.Message{ID: jsonrpc.IntID(2), Method: protocol.MethodToolsList, Params: json.RawMessage(`{}`)}
	if _, err := s.Serve(context.Background(), &transport.Request{Message: msg, Kind: transport.KindSession, Session: sess, Notifier: &collector{}}); err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 2 || sessions[0] != "" || sessions[1] != sess.ID() {
		t.Errorf("Request.SessionID in the wrapper: %q, want [\"\" %q]", sessions, sess.ID())
	}
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{}}`)
	if err := s.QueueLegacy(context.Background(), sess.ID(), note); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if got, err := sess.Next(ctx); err != nil || string(got) != string(note) {
		t.Errorf("the standalone stream: %s %v", got, err)
	}
	sess.Close()
	if err := s.QueueLegacy(context.Background(), sess.ID(), note); err == nil {
		t.Error("QueueLegacy to a closed session: no error")
	}
}
