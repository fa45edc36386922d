package streamable_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// CORS of the endpoint, from outside, against the dual-era
// everything-server on a loopback listener.

const (
	pageOrigin = "https://app.example"
	exposed    = "Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version, Retry-After"
)

// corsServer serves everything.New(nil) (both eras) with opts.
func corsServer(t *testing.T, opts *streamable.Options) *httptest.Server {
	t.Helper()
	leakcheck.Check(t)
	core := everything.New(nil)
	ts := httptest.NewServer(streamable.NewHandler(core, opts))
	t.Cleanup(func() {
		ts.Close()
		_ = core.Close()
	})
	return ts
}

// corsSend sends one request to the endpoint and reads the whole response.
func corsSend(t *testing.T, ts *httptest.Server, method string, h http.Header, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading body: %v", method, err)
	}
	return resp, string(b)
}

// pageHeaders are the headers of a modern request for method from origin.
func pageHeaders(method, origin string) http.Header {
	h := modernHeaders(method, "")
	h.Set("Origin", origin)
	return h
}

func modernList() string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + modernMeta + `}}`
}

func preflightHeaders(origin, method, headers string) http.Header {
	h := http.Header{}
	h.Set("Origin", origin)
	h.Set("Access-Control-Request-Method", method)
	if headers != "" {
		h.Set("Access-Control-Request-Headers", headers)
	}
	return h
}

// accessControl returns the Access-Control-* headers of h.
func accessControl(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out[k] = v
		}
	}
	return out
}

func wantNoCORS(t *testing.T, what string, h http.Header) {
	t.Helper()
	if ac := accessControl(h); len(ac) != 0 {
		t.Errorf("%s: Access-Control-* headers %v, want none", what, ac)
	}
}

func wantCORS(t *testing.T, what string, h http.Header) {
	t.Helper()
	if got := h.Get("Access-Control-Allow-Origin"); got != pageOrigin {
		t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", what, got, pageOrigin)
	}
	if got := h.Get("Access-Control-Expose-Headers"); got != exposed {
		t.Errorf("%s: Access-Control-Expose-Headers %q, want %q", what, got, exposed)
	}
	if got := h.Values("Vary"); len(got) != 1 || got[0] != "Origin" {
		t.Errorf("%s: Vary %q, want Origin", what, got)
	}
	if h.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("%s: Access-Control-Allow-Credentials sent", what)
	}
}

// TestCORSOff: without AllowedOrigins the wire is as it was: OPTIONS is
// refused as any method but POST, and no response carries CORS headers.
func TestCORSOff(t *testing.T) {
	ts := corsServer(t, nil)
	const loopback = "http://localhost:5173"

	resp, body := corsSend(t, ts, http.MethodOptions, preflightHeaders(loopback, "POST", "content-type, mcp-method"), "")
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("OPTIONS: %d Allow %q: %s", resp.StatusCode, resp.Header.Get("Allow"), body)
	}
	wantNoCORS(t, "OPTIONS", resp.Header)
	resp, _ = corsSend(t, ts, http.MethodOptions, preflightHeaders(pageOrigin, "POST", ""), "")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("OPTIONS from another origin: %d, want 403", resp.StatusCode)
	}
	wantNoCORS(t, "OPTIONS from another origin", resp.Header)

	resp, body = corsSend(t, ts, http.MethodPost, pageHeaders("tools/list", loopback), modernList())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("modern POST: %d %s", resp.StatusCode, body)
	}
	wantNoCORS(t, "modern POST", resp.Header)
	if v := resp.Header.Values("Vary"); len(v) != 0 {
		t.Errorf("modern POST: Vary %q", v)
	}

	h := postHeaders()
	h.Set("Origin", loopback)
	resp, body = corsSend(t, ts, http.MethodPost, h, initializeBody(1, "2025-11-25", `{}`))
	if resp.StatusCode != http.StatusOK || resp.Header.Get(streamable.HeaderSessionID) == "" {
		t.Fatalf("legacy initialize: %d %s", resp.StatusCode, body)
	}
	wantNoCORS(t, "legacy initialize", resp.Header)

	h = pageHeaders("tools/list", loopback)
	h.Del(streamable.HeaderMethod)
	resp, body = corsSend(t, ts, http.MethodPost, h, modernList())
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("error: %d %s", resp.StatusCode, body)
	}
	wantNoCORS(t, "error", resp.Header)
}

func TestCORSPreflight(t *testing.T) {
	ts := corsServer(t, &streamable.Options{AllowedOrigins: []string{pageOrigin}})

	resp, body := corsSend(t, ts, http.MethodOptions, preflightHeaders(pageOrigin, "POST", "content-type,mcp-protocol-version,mcp-method,mcp-name,mcp-param-region"), "")
	if resp.StatusCode != http.StatusNoContent || body != "" {
		t.Fatalf("preflight: %d %q", resp.StatusCode, body)
	}
	want := http.Header{
		"Access-Control-Allow-Origin":  {pageOrigin},
		"Access-Control-Allow-Methods": {"GET, POST, DELETE"},
		"Access-Control-Allow-Headers": {"content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region"},
		"Access-Control-Max-Age":       {"7200"},
	}
	if got := accessControl(resp.Header); !sameHeader(got, want) {
		t.Errorf("preflight headers %v, want %v", got, want)
	}
	if got := resp.Header.Get("Vary"); got != "Origin, Access-Control-Request-Method, Access-Control-Request-Headers" {
		t.Errorf("preflight Vary %q", got)
	}

	// The legacy era's session requests.
	resp, _ = corsSend(t, ts, http.MethodOptions, preflightHeaders(pageOrigin, "DELETE", "mcp-session-id, mcp-protocol-version"), "")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Headers") != "mcp-session-id, mcp-protocol-version" {
		t.Errorf("DELETE preflight: %d %v", resp.StatusCode, resp.Header)
	}

	for _, tc := range []struct{ name, origin, method, headers string }{
		{"unlisted origin", "https://evil.example", "POST", "content-type"},
		{"implicit loopback origin", "http://localhost:5173", "POST", "content-type"},
		{"header not allowed", pageOrigin, "POST", "content-type, x-evil"},
		{"cookie", pageOrigin, "POST", "cookie"},
		{"method not allowed", pageOrigin, "PUT", ""},
	} {
		resp, _ := corsSend(t, ts, http.MethodOptions, preflightHeaders(tc.origin, tc.method, tc.headers), "")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.name, resp.StatusCode)
		}
		wantNoCORS(t, tc.name, resp.Header)
	}

	// The Host check comes first.
	req, _ := http.NewRequest(http.MethodOptions, ts.URL+"/mcp", nil)
	req.Header = preflightHeaders(pageOrigin, "POST", "")
	req.Host = "evil.example"
	r, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("preflight with a foreign Host: %d, want 403", r.StatusCode)
	}
	wantNoCORS(t, "preflight with a foreign Host", r.Header)
}

func TestCORSResponses(t *testing.T) {
	ts := corsServer(t, &streamable.Options{AllowedOrigins: []string{pageOrigin}})

	resp, body := corsSend(t, ts, http.MethodPost, pageHeaders("tools/list", pageOrigin), modernList())
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("modern POST: %d %s", resp.StatusCode, body)
	}
	wantCORS(t, "modern POST", resp.Header)

	h := pageHeaders("tools/list", pageOrigin)
	h.Set("Accept", "text/event-stream")
	resp, body = corsSend(t, ts, http.MethodPost, h, modernList())
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(body, `"tools"`) {
		t.Fatalf("SSE response: %d %s", resp.StatusCode, body)
	}
	wantCORS(t, "SSE response", resp.Header)

	h = pageHeaders("tools/list", pageOrigin)
	h.Del(streamable.HeaderMethod)
	resp, body = corsSend(t, ts, http.MethodPost, h, modernList())
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "-32020") {
		t.Fatalf("header error: %d %s", resp.StatusCode, body)
	}
	wantCORS(t, "400", resp.Header)

	h = pageHeaders("tools/list", pageOrigin)
	h.Set("Content-Type", "text/plain")
	resp, _ = corsSend(t, ts, http.MethodPost, h, modernList())
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %d", resp.StatusCode)
	}
	wantCORS(t, "415", resp.Header)

	// The legacy era: the session id is readable.
	h = postHeaders()
	h.Set("Origin", pageOrigin)
	resp, body = corsSend(t, ts, http.MethodPost, h, initializeBody(1, "2025-11-25", `{}`))
	if resp.StatusCode != http.StatusOK || resp.Header.Get(streamable.HeaderSessionID) == "" {
		t.Fatalf("legacy initialize: %d %s", resp.StatusCode, body)
	}
	wantCORS(t, "legacy initialize", resp.Header)

	// Other origins: refused as before, or served without CORS.
	resp, body = corsSend(t, ts, http.MethodPost, pageHeaders("tools/list", "https://evil.example"), modernList())
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unlisted origin: %d %s", resp.StatusCode, body)
	}
	wantNoCORS(t, "unlisted origin", resp.Header)
	resp, body = corsSend(t, ts, http.MethodPost, pageHeaders("tools/list", "http://localhost:5173"), modernList())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("loopback origin: %d %s", resp.StatusCode, body)
	}
	wantNoCORS(t, "loopback origin", resp.Header)
}

// TestCORSAnyOrigin: "*" lists every origin, which is named, never "*".
func TestCORSAnyOrigin(t *testing.T) {
	ts := corsServer(t, &streamable.Options{AllowedOrigins: []string{"*"}, CORSMaxAge: time.Minute})
	const origin = "https://elsewhere.example"
	resp, _ := corsSend(t, ts, http.MethodOptions, preflightHeaders(origin, "POST", "content-type"), "")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != origin || resp.Header.Get("Access-Control-Max-Age") != "60" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = corsSend(t, ts, http.MethodPost, pageHeaders("tools/list", origin), modernList())
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("POST: %d %v", resp.StatusCode, resp.Header)
	}
}

func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\n") != strings.Join(b[k], "\n") {
			return false
		}
	}
	return true
}
