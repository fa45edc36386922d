package resource

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// tokenVerifier grants the scopes it maps a token to; other tokens are
// invalid.
type tokenVerifier map[string][]string

func (v tokenVerifier) Verify(ctx context.Context, token string, r *http.Request) (*Principal, error) {
	scopes, ok := v[token]
	if !ok {
		return nil, invalid("unknown token")
	}
	return &Principal{Subject: "alice", Scopes: scopes}, nil
}

const pageOrigin = "https://app.example"

// corsEndpoint serves a protected endpoint and its metadata with the
// origins.
func corsEndpoint(t *testing.T, origins []string) *httptest.Server {
	t.Helper()
	core := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	server.AddTool(core, &protocol.Tool{Name: "fixed"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "ok", nil
	})
	h := Protect(streamable.NewHandler(core, &streamable.Options{AllowedOrigins: origins}), &Options{
		Resource:             testResource,
		AuthorizationServers: []string{"https://as.example.com"},
		Verifier:             tokenVerifier{"good": {"mcp:read"}, "weak": {}},
		RequiredScopes:       []string{"mcp:read"},
		AllowedOrigins:       origins,
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle(h.MetadataPath(), h.MetadataHandler())
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.Close()
		_ = core.Close()
	})
	return ts
}

func exchange(t *testing.T, ts *httptest.Server, method, path string, header ...string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	}
	req, _ := http.NewRequest(method, ts.URL+path, body)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func accessControl(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out = append(out, k)
		}
	}
	return out
}

func TestCORSProtect(t *testing.T) {
	ts := corsEndpoint(t, []string{pageOrigin})
	const mdPath = "/.well-known/oauth-protected-resource/mcp"

	// A preflight carries no token: it is answered, not challenged.
	resp, _ := exchange(t, ts, http.MethodOptions, "/mcp", "Origin", pageOrigin,
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type, mcp-method, mcp-protocol-version")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != pageOrigin ||
		resp.Header.Get("Access-Control-Allow-Headers") != "authorization, content-type, mcp-method, mcp-protocol-version" ||
		resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = exchange(t, ts, http.MethodOptions, "/mcp", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	if resp.StatusCode != http.StatusForbidden || len(accessControl(resp.Header)) != 0 {
		t.Errorf("preflight of another origin: %d %v", resp.StatusCode, resp.Header)
	}

	wantCORS := func(what string, resp *http.Response) {
		t.Helper()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != pageOrigin {
			t.Errorf("%s: Access-Control-Allow-Origin %q", what, got)
		}
		if got := resp.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(got, "WWW-Authenticate") {
			t.Errorf("%s: Access-Control-Expose-Headers %q", what, got)
		}
		if got := resp.Header.Values("Vary"); len(got) != 1 || got[0] != "Origin" {
			t.Errorf("%s: Vary %q", what, got)
		}
	}
	resp, _ = exchange(t, ts, http.MethodPost, "/mcp", "Origin", pageOrigin)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("no token: %d %v", resp.StatusCode, resp.Header)
	}
	wantCORS("401", resp)
	resp, _ = exchange(t, ts, http.MethodPost, "/mcp", "Origin", pageOrigin, "Authorization", "Bearer forged")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("invalid token: %d", resp.StatusCode)
	}
	wantCORS("401 invalid_token", resp)
	resp, _ = exchange(t, ts, http.MethodPost, "/mcp", "Origin", pageOrigin, "Authorization", "Bearer weak")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope") {
		t.Fatalf("weak token: %d %v", resp.StatusCode, resp.Header)
	}
	wantCORS("403", resp)
	resp, body := exchange(t, ts, http.MethodPost, "/mcp", "Origin", pageOrigin, "Authorization", "Bearer good")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("good token: %d %s", resp.StatusCode, body)
	}
	wantCORS("200", resp)

	// Another origin's challenge is not readable.
	resp, _ = exchange(t, ts, http.MethodPost, "/mcp", "Origin", "https://evil.example")
	if resp.StatusCode != http.StatusUnauthorized || len(accessControl(resp.Header)) != 0 {
		t.Errorf("another origin: %d %v", resp.StatusCode, resp.Header)
	}

	// The metadata: readable by any page, its preflight answered.
	resp, body = exchange(t, ts, http.MethodGet, mdPath, "Origin", pageOrigin)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") == "" || !strings.Contains(body, testResource) {
		t.Errorf("metadata: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, _ = exchange(t, ts, http.MethodOptions, mdPath, "Origin", pageOrigin,
		"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "mcp-protocol-version")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != pageOrigin ||
		resp.Header.Get("Access-Control-Allow-Headers") != "mcp-protocol-version" {
		t.Errorf("metadata preflight: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestCORSProtectOff: without AllowedOrigins, OPTIONS is challenged as
// any request and the metadata answers it 405, as before.
func TestCORSProtectOff(t *testing.T) {
	ts := corsEndpoint(t, nil)
	resp, _ := exchange(t, ts, http.MethodOptions, "/mcp", "Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST")
	if resp.StatusCode != http.StatusUnauthorized || len(accessControl(resp.Header)) != 0 {
		t.Errorf("OPTIONS: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = exchange(t, ts, http.MethodPost, "/mcp", "Origin", "http://localhost:3000")
	if resp.StatusCode != http.StatusUnauthorized || len(accessControl(resp.Header)) != 0 || len(resp.Header.Values("Vary")) != 0 {
		t.Errorf("POST: %d %v", resp.StatusCode, resp.Header)
	}
	const mdPath = "/.well-known/oauth-protected-resource/mcp"
	resp, _ = exchange(t, ts, http.MethodOptions, mdPath, "Origin", "http://localhost:3000", "Access-Control-Request-Method", "GET")
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("metadata OPTIONS: %d", resp.StatusCode)
	}
	resp, _ = exchange(t, ts, http.MethodGet, mdPath)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("metadata: %d %v", resp.StatusCode, resp.Header)
	}
}
