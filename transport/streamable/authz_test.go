package streamable

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// fakeAuth stands for the resource-server middleware: X-Test-User names
// the principal, X-Test-Scopes (space-separated) its granted scopes.
func fakeAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := server.WithPrincipal(r.Context(), r.Header.Get("X-Test-User"))
		ctx = server.WithScopes(ctx, strings.Fields(r.Header.Get("X-Test-Scopes")))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func scopedHandler(t *testing.T) http.Handler {
	t.Helper()
	core := server.New(testInfo, nil)
	t.Cleanup(func() { core.Close() })
	obj := json.RawMessage(`{"type":"object"}`)
	h := func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
		return server.TextResult("ok"), nil
	}
	core.AddToolHandler(&protocol.Tool{Name: "open", InputSchema: obj}, h)
	core.AddToolHandler(&protocol.Tool{Name: "write", InputSchema: obj}, h, server.RequireScopes("files:read", "files:write"))
	return fakeAuth(NewHandler(core, nil))
}

func serveRec(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

const wantChallenge = `Bearer error="insufficient_scope", scope="files:read files:write"`

func TestInsufficientScopeIs403WithChallenge(t *testing.T) {
	h := scopedHandler(t)
	post := func(body, scopes string) *httptest.ResponseRecorder {
		r := newPost(body)
		r.Header.Set("Accept", "application/json")
		r.Header.Set("X-Test-User", "alice")
		r.Header.Set("X-Test-Scopes", scopes)
		return serveRec(h, r)
	}
	rec := post(callBody("1", "write", `{}`), "files:read")
	if rec.Code != http.StatusForbidden {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("WWW-Authenticate"); got != wantChallenge {
		t.Errorf("WWW-Authenticate = %q, want %q", got, wantChallenge)
	}
	e := checkErrorBody(t, rec.Header(), rec.Body.Bytes(), protocol.CodeInvalidRequest, "1")
	if string(e.Error.Data) != `{"scopes":["files:read","files:write"]}` {
		t.Errorf("data = %s", e.Error.Data)
	}
	rec = post(callBody("2", "write", `{}`), "files:read files:write")
	if rec.Code != 200 || rec.Header().Get("WWW-Authenticate") != "" || !strings.Contains(rec.Body.String(), `"text":"ok"`) {
		t.Errorf("granted: %d %s", rec.Code, rec.Body)
	}
	rec = post(rpc("3", protocol.MethodToolsList, ""), "files:read")
	if rec.Code != 200 || strings.Contains(rec.Body.String(), `"write"`) || !strings.Contains(rec.Body.String(), `"cacheScope":"private"`) {
		t.Errorf("tools/list: %d %s", rec.Code, rec.Body)
	}
}

func TestLegacySessionAuthorization(t *testing.T) {
	h := scopedHandler(t)
	send := func(body, sid, user, scopes string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			r.Header.Set(HeaderSessionID, sid)
			r.Header.Set(HeaderProtocolVersion, "2025-11-25")
		}
		r.Header.Set("X-Test-User", user)
		r.Header.Set("X-Test-Scopes", scopes)
		return serveRec(h, r)
	}
	rec := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "", "alice", "files:read")
	sid := rec.Header().Get(HeaderSessionID)
	if rec.Code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{}}}`
	rec = send(call, sid, "alice", "files:read")
	if rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") != wantChallenge {
		t.Errorf("legacy insufficient scope: %d %q %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	checkErrorBody(t, rec.Header(), rec.Body.Bytes(), protocol.CodeInvalidRequest, "2")
	rec = send(call, sid, "alice", "files:read files:write")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"text":"ok"`) {
		t.Errorf("legacy granted: %d %s", rec.Code, rec.Body)
	}
	// Another principal's token on alice's session.
	rec = send(call, sid, "bob", "files:read files:write")
	if rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") != "" {
		t.Errorf("other principal: %d %q %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	// Refused at the session's lookup, before the body is read: no id.
	e := checkErrorBody(t, rec.Header(), rec.Body.Bytes(), protocol.CodeInvalidRequest, "")
	if e.Error.Message != "session belongs to another principal" {
		t.Errorf("message %q", e.Error.Message)
	}
	// Other legacy errors keep 200.
	rec = send(`{"jsonrpc":"2.0","id":3,"method":"tools/nope"}`, sid, "alice", "")
	if rec.Code != 200 {
		t.Errorf("legacy unknown method: %d %s", rec.Code, rec.Body)
	}
}

// TestLegacySessionGetDeleteBoundToPrincipal: the GET stream and the DELETE
// of a session are refused to another principal with 403, and the session
// goes on for its owner.
func TestLegacySessionGetDeleteBoundToPrincipal(t *testing.T) {
	h := scopedHandler(t)
	do := func(ctx context.Context, method, body, sid, user string) *httptest.ResponseRecorder {
		r := httptest.NewRequestWithContext(ctx, method, "http://localhost/mcp", strings.NewReader(body))
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		r.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			r.Header.Set(HeaderSessionID, sid)
			r.Header.Set(HeaderProtocolVersion, "2025-11-25")
		}
		r.Header.Set("X-Test-User", user)
		return serveRec(h, r)
	}
	bg := context.Background()
	rec := do(bg, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "", "alice")
	sid := rec.Header().Get(HeaderSessionID)
	if rec.Code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, who := range []string{"bob", ""} {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			rec = do(bg, method, "", sid, who)
			if rec.Code != http.StatusForbidden {
				t.Fatalf("%s by %q: %d %s", method, who, rec.Code, rec.Body)
			}
			e := checkErrorBody(t, rec.Header(), rec.Body.Bytes(), protocol.CodeInvalidRequest, "")
			if e.Error.Message != "session belongs to another principal" {
				t.Errorf("%s by %q: message %q", method, who, e.Error.Message)
			}
		}
	}
	if rec = do(bg, http.MethodPost, ping, sid, "alice"); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"result":{}`) {
		t.Fatalf("the session did not survive: %d %s", rec.Code, rec.Body)
	}
	// The owner's GET stream opens (and ends with its request).
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	rec = do(ctx, http.MethodGet, "", sid, "alice")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		t.Errorf("owner's GET: %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if rec = do(bg, http.MethodDelete, "", sid, "alice"); rec.Code != 200 {
		t.Fatalf("owner's DELETE: %d %s", rec.Code, rec.Body)
	}
	if rec = do(bg, http.MethodPost, ping, sid, "alice"); rec.Code != http.StatusNotFound {
		t.Errorf("after DELETE: %d %s", rec.Code, rec.Body)
	}
}

func TestChallenge(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("x"), ""},
		{protocol.InsufficientScope("a"), `Bearer error="insufficient_scope", scope="a"`},
		{protocol.InsufficientScope("a", `b"c`, "d e", "f"), `Bearer error="insufficient_scope", scope="a f"`},
		{protocol.InsufficientScope(), `Bearer error="insufficient_scope"`},
	}
	for _, tt := range tests {
		if got := Challenge(tt.err); got != tt.want {
			t.Errorf("Challenge(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	ctx := WithResourceMetadata(context.Background(), "https://x.example/.well-known/oauth-protected-resource/m\"cp")
	if got, want := challenge(ctx, protocol.InsufficientScope("a")), `Bearer resource_metadata="https://x.example/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="a"`; got != want {
		t.Errorf("challenge with metadata = %q, want %q", got, want)
	}
	if got := challenge(ctx, errors.New("x")); got != "" {
		t.Errorf("challenge of another error = %q", got)
	}
	if Status(protocol.InsufficientScope("a")) != http.StatusForbidden || Status(protocol.Mark(protocol.InternalError("x"), protocol.ErrForbidden)) != http.StatusForbidden {
		t.Error("Status of the authorization refusals is not 403")
	}
}
