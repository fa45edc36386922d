package resource

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// staticVerifier accepts any token as alice with the scopes.
type staticVerifier []string

func (v staticVerifier) Verify(ctx context.Context, token string, r *http.Request) (*Principal, error) {
	return &Principal{Subject: "alice", Scopes: v}, nil
}

// TestCoreRefusalChallengeNamesMetadata: the insufficient_scope challenge
// of a call the core refuses names the resource metadata first, as the
// middleware's own challenges do.
func TestCoreRefusalChallengeNamesMetadata(t *testing.T) {
	core := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	defer core.Close()
	core.AddToolHandler(&protocol.Tool{Name: "write", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
			return server.TextResult("ok"), nil
		}, server.RequireScopes("files:write"))
	h := Protect(streamable.NewHandler(core, nil), &Options{
		Resource:             testResource,
		AuthorizationServers: []string{"https://as.example.com"},
		Verifier:             staticVerifier{"files:read"},
	})
	post := func(body, sid string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer tok")
		if sid != "" {
			r.Header.Set(streamable.HeaderSessionID, sid)
			r.Header.Set(streamable.HeaderProtocolVersion, "2025-11-25")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	rec := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "")
	sid := rec.Header().Get(streamable.HeaderSessionID)
	if rec.Code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	rec = post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{}}}`, sid)
	want := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="files:write"`
	if rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") != want {
		t.Errorf("refused call: %d %q %s\nwant %q", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body, want)
	}
	if h.MetadataURL() != "https://mcp.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("MetadataURL %q", h.MetadataURL())
	}
}
