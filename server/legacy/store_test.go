package legacy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestSharedStoreAcrossReplicas opens a session on one replica and serves
// it on another that shares the store.
func TestSharedStoreAcrossReplicas(t *testing.T) {
	store := legacy.NewMemoryStore()
	newReplica := func() *legacy.Adapter {
		core := server.New(protocol.Implementation{Name: "r", Version: "1"}, nil)
		core.AddResource(&protocol.Resource{URI: "test://a", Name: "a"}, server.TextResource("text/plain", "A"))
		a := legacy.New(core, &legacy.Options{Store: store})
		t.Cleanup(func() { a.Close() })
		return a
	}
	a, b := newReplica(), newReplica()
	init := &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: protocol.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}`)}
	sess, resp := a.Initialize(context.Background(), init)
	if sess == nil || resp.Error != nil {
		t.Fatalf("initialize: %+v", resp)
	}
	sess.HandleNotification(context.Background(), &jsonrpc.Message{Method: protocol.MethodNotificationInitialized})
	ls := sess.(*legacy.Session)
	if r := ls.Handle(context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(2), Method: protocol.MethodResourcesSubscribe, Params: json.RawMessage(`{"uri":"test://a"}`)}, nil); r.Error != nil {
		t.Fatalf("subscribe: %+v", r.Error)
	}

	other, err := b.Session(context.Background(), sess.ID())
	if err != nil {
		t.Fatal("replica b does not know the session")
	}
	if other.Version() != "2025-06-18" {
		t.Fatalf("version on b = %s", other.Version())
	}
	ob := other.(*legacy.Session)
	if !legacy.Subscribed(ob, "test://a") || ob.ClientCapabilities().Elicitation == nil {
		t.Fatalf("restored session lost state: %+v", ob)
	}
	r := ob.Handle(context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(3), Method: protocol.MethodResourcesRead, Params: json.RawMessage(`{"uri":"test://a"}`)}, nil)
	if r.Error != nil || string(r.Result) != `{"contents":[{"uri":"test://a","mimeType":"text/plain","text":"A"}]}` {
		t.Fatalf("read on b = %s %+v", r.Result, r.Error)
	}

	// Shutting a replica down keeps the record; ending the session deletes it.
	a.Close()
	if store.Len() != 1 {
		t.Fatalf("records after a replica shut down = %d", store.Len())
	}
	other.Close()
	if store.Len() != 0 {
		t.Fatalf("records after the session ended = %d", store.Len())
	}
	if _, err := b.Session(context.Background(), sess.ID()); err == nil {
		t.Fatal("ended session still served")
	}
}

func TestEraOptions(t *testing.T) {
	core := server.New(protocol.Implementation{Name: "r", Version: "1"}, nil)
	discover := &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: protocol.MethodDiscover,
		Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)}
	init := &jsonrpc.Message{ID: jsonrpc.IntID(2), Method: protocol.MethodInitialize, Params: json.RawMessage(`{"protocolVersion":"2025-11-25"}`)}

	legacyOff := legacy.New(core, &legacy.Options{Disabled: true})
	defer legacyOff.Close()
	if s, r := legacyOff.Initialize(context.Background(), init); s != nil || r.Error == nil || streamable.Status(legacyOff.InitializeErr(context.Background(), init)) != 400 {
		t.Fatalf("initialize with legacy off: %v %+v", s, r)
	}
	if r := legacyOff.Handle(context.Background(), discover, nil); r.Error != nil {
		t.Fatalf("discover with legacy off: %+v", r.Error)
	}

	modernOff := legacy.New(core, &legacy.Options{ModernDisabled: true})
	defer modernOff.Close()
	if r := modernOff.Handle(context.Background(), discover, nil); r.Error == nil || r.Error.Code != protocol.CodeInvalidRequest {
		t.Fatalf("discover with modern off: %+v", r)
	}
	if s, r := modernOff.Initialize(context.Background(), init); s == nil || r.Error != nil {
		t.Fatalf("initialize with modern off: %+v", r)
	}
}
