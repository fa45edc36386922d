package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
)

func as(principal string, scopes ...string) context.Context {
	ctx := server.WithPrincipal(context.Background(), principal)
	if scopes != nil {
		ctx = server.WithScopes(ctx, scopes)
	}
	return ctx
}

// serveErr serves a request of the session and returns Serve's error.
func serveErr(ctx context.Context, a *legacy.Adapter, s transport.Session, msg *jsonrpc.Message) error {
	_, err := a.Serve(ctx, &transport.Request{Message: msg, Kind: transport.KindSession, Session: s, Cancel: func() {}})
	return err
}

func TestSessionBoundToItsPrincipal(t *testing.T) {
	store := legacy.NewMemoryStore()
	a, _ := newAdapter(t, &legacy.Options{Principal: server.PrincipalFrom, Store: store})
	ts, resp := a.Initialize(as("alice"), req(t, "0", "initialize", initParams("2025-11-25", `{}`)))
	if resp.Error != nil {
		t.Fatal(wire(resp))
	}
	s := ts.(*legacy.Session)
	s.HandleNotification(as("alice"), note(t, "notifications/initialized", ""))
	wantWire(t, s.Handle(as("alice"), req(t, "1", "ping", ""), nil), `{"jsonrpc":"2.0","id":1,"result":{}}`)
	for _, who := range []string{"bob", ""} {
		err := serveErr(as(who), a, s, req(t, "2", "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`))
		if !errors.Is(err, protocol.ErrForbidden) {
			t.Fatalf("principal %q: error %v, want ErrForbidden", who, err)
		}
		if w := protocol.WireError(err); w.Code != protocol.CodeInvalidRequest || w.Message != "session belongs to another principal" {
			t.Errorf("principal %q: %d %s", who, w.Code, w.Message)
		}
	}
	// The lookup refuses another principal, and does not count as a use.
	for _, who := range []string{"bob", ""} {
		if rs, err := a.Session(as(who), s.ID()); rs != nil || !errors.Is(err, protocol.ErrForbidden) {
			t.Errorf("Session for %q: %v, %v; want ErrForbidden", who, rs, err)
		}
	}
	if rs, err := a.Session(as("alice"), s.ID()); err != nil || rs != ts {
		t.Errorf("Session for alice: %v, %v", rs, err)
	}
	if _, err := a.Session(as("alice"), "no-such-session"); !errors.Is(err, transport.ErrNoSession) {
		t.Errorf("unknown id: %v, want ErrNoSession", err)
	}
	// Another replica restores the session with its principal.
	b := legacy.New(newTiny(t).Server, &legacy.Options{Principal: server.PrincipalFrom, Store: store})
	defer b.Close()
	if _, err := b.Session(as("bob"), s.ID()); !errors.Is(err, protocol.ErrForbidden) {
		t.Errorf("replica b's Session for bob: %v, want ErrForbidden", err)
	}
	rs, err := b.Session(as("alice"), s.ID())
	if err != nil {
		t.Fatal("session not restored")
	}
	if err := serveErr(as("bob"), b, rs, req(t, "3", "ping", "")); !errors.Is(err, protocol.ErrForbidden) {
		t.Errorf("restored session served bob: %v", err)
	}
	if err := serveErr(as("alice"), b, rs, req(t, "4", "ping", "")); err != nil {
		t.Errorf("restored session refused alice: %v", err)
	}
}

func TestSessionNotificationsOfAnotherPrincipalDropped(t *testing.T) {
	a, core := newAdapter(t, &legacy.Options{Principal: server.PrincipalFrom})
	ts, _ := a.Initialize(as("alice"), req(t, "0", "initialize", initParams("2025-11-25", `{}`)))
	s := ts.(*legacy.Session)
	s.HandleNotification(as("alice"), note(t, "notifications/initialized", ""))
	done := call(as("alice"), s, req(t, `"b-1"`, "tools/call", `{"name":"block"}`), nil)
	<-core.started
	// Bob cannot cancel alice's request; alice can.
	s.HandleNotification(as("bob"), note(t, "notifications/cancelled", `{"requestId":"b-1"}`))
	select {
	case r := <-done:
		t.Fatalf("bob's cancellation ended the request: %s", wire(r))
	case <-time.After(50 * time.Millisecond):
	}
	s.HandleNotification(as("alice"), note(t, "notifications/cancelled", `{"requestId":"b-1"}`))
	if r := await(t, done); r != nil {
		t.Errorf("cancelled request answered %s", wire(r))
	}
}

func TestLegacyScopesEnforcedThroughTheCore(t *testing.T) {
	core := server.New(tinyInfo, nil)
	defer core.Close()
	obj := json.RawMessage(`{"type":"object"}`)
	h := func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
		return server.TextResult("ok"), nil
	}
	core.AddToolHandler(&protocol.Tool{Name: "open", InputSchema: obj}, h)
	core.AddToolHandler(&protocol.Tool{Name: "admin", InputSchema: obj}, h, server.RequireScopes("admin"))
	a := legacy.New(core, &legacy.Options{Principal: server.PrincipalFrom})
	defer a.Close()
	ctx := as("alice", "read")
	ts, resp := a.Initialize(ctx, req(t, "0", "initialize", initParams("2025-11-25", `{}`)))
	if resp.Error != nil {
		t.Fatal(wire(resp))
	}
	s := ts.(*legacy.Session)
	s.HandleNotification(ctx, note(t, "notifications/initialized", ""))
	list := wire(s.Handle(ctx, req(t, "1", "tools/list", ""), nil))
	if strings.Contains(list, "admin") || !strings.Contains(list, "open") || strings.Contains(list, "cacheScope") {
		t.Errorf("tools/list = %s", list)
	}
	err := serveErr(ctx, a, s, req(t, "2", "tools/call", `{"name":"admin"}`))
	var ise *protocol.InsufficientScopeError
	if !errors.As(err, &ise) || len(ise.Scopes) != 1 || ise.Scopes[0] != "admin" {
		t.Fatalf("tools/call admin: %v", err)
	}
	wantWire(t, s.Handle(ctx, req(t, "3", "tools/call", `{"name":"admin"}`), nil),
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Insufficient scope","data":{"scopes":["admin"]}}}`)
	if r := s.Handle(as("alice", "admin"), req(t, "4", "tools/call", `{"name":"admin"}`), nil); r.Error != nil {
		t.Errorf("granted: %s", wire(r))
	}
}

// TestLegacySubscribeNeedsTheResourceScopes: resources/subscribe to a
// resource the caller may not read is refused with insufficient scope.
func TestLegacySubscribeNeedsTheResourceScopes(t *testing.T) {
	core := server.New(tinyInfo, nil)
	defer core.Close()
	core.AddResource(&protocol.Resource{URI: "test://secret", Name: "secret"}, server.TextResource("text/plain", "s"), server.RequireScopes("files:read"))
	a := legacy.New(core, &legacy.Options{Principal: server.PrincipalFrom})
	defer a.Close()
	ctx := as("alice", "other")
	ts, resp := a.Initialize(ctx, req(t, "0", "initialize", initParams("2025-11-25", `{}`)))
	if resp.Error != nil {
		t.Fatal(wire(resp))
	}
	s := ts.(*legacy.Session)
	s.HandleNotification(ctx, note(t, "notifications/initialized", ""))
	err := serveErr(ctx, a, s, req(t, "1", "resources/subscribe", `{"uri":"test://secret"}`))
	var ise *protocol.InsufficientScopeError
	if !errors.As(err, &ise) || len(ise.Scopes) != 1 || ise.Scopes[0] != "files:read" {
		t.Fatalf("resources/subscribe without the scope: %v", err)
	}
	if err := serveErr(as("alice", "files:read"), a, s, req(t, "2", "resources/subscribe", `{"uri":"test://secret"}`)); err != nil {
		t.Errorf("with the scope: %v", err)
	}
	if err := serveErr(ctx, a, s, req(t, "3", "resources/subscribe", `{"uri":"test://unknown"}`)); err != nil {
		t.Errorf("an unknown URI: %v", err)
	}
}
