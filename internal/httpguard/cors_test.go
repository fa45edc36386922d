package httpguard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func preflight(origin, method, headers string) *http.Request {
	r := httptest.NewRequest(http.MethodOptions, "http://127.0.0.1/mcp", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if method != "" {
		r.Header.Set("Access-Control-Request-Method", method)
	}
	if headers != "" {
		r.Header.Set("Access-Control-Request-Headers", headers)
	}
	return r
}

// corsHeadersOf returns the Access-Control-* headers of h.
func corsHeadersOf(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out[k] = v
		}
	}
	return out
}

func TestCORSOff(t *testing.T) {
	for _, list := range [][]string{nil, {}} {
		c := NewCORS(list, 0)
		if c != nil {
			t.Fatalf("NewCORS(%v) = %v, want nil", list, c)
		}
		w := httptest.NewRecorder()
		if c.Preflight(w, preflight("https://app.example", "POST", "content-type")) {
			t.Error("a nil CORS answered a preflight")
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Origin", "https://app.example")
		h := http.Header{}
		c.Decorate(h, r)
		if len(h) != 0 {
			t.Errorf("a nil CORS decorated: %v", h)
		}
		if c.Listed("https://app.example") {
			t.Error("a nil CORS lists an origin")
		}
	}
}

func TestCORSListed(t *testing.T) {
	c := NewCORS([]string{"https://App.example/", "http://localhost:5173"}, 0)
	for _, tc := range []struct {
		origin string
		want   bool
	}{
		{"https://app.example", true},
		{"HTTPS://APP.EXAMPLE", true},
		{"https://app.example/", true},
		{"http://localhost:5173", true},
		{"http://localhost:5174", false}, // loopback, accepted by OriginPolicy, but not listed
		{"http://127.0.0.1:8080", false},
		{"https://evil.example", false},
		{"http://app.example", false},
		{"https://app.example:8443", false},
		{"null", false},
		{"", false},
	} {
		if got := c.Listed(tc.origin); got != tc.want {
			t.Errorf("Listed(%q) = %v, want %v", tc.origin, got, tc.want)
		}
	}
	all := NewCORS([]string{"*"}, 0)
	for _, o := range []string{"https://evil.example", "http://localhost:1", "null"} {
		if !all.Listed(o) {
			t.Errorf(`"*" does not list %q`, o)
		}
	}
}

func TestCORSPreflight(t *testing.T) {
	c := NewCORS([]string{"https://app.example"}, 0)
	for _, tc := range []struct {
		name, origin, method, headers string
		ok                            bool
		allowHeaders                  string
	}{
		{"POST", "https://app.example", "POST", "content-type, mcp-protocol-version, mcp-method, mcp-name", true, "content-type, mcp-protocol-version, mcp-method, mcp-name"},
		{"no headers", "https://app.example", "POST", "", true, ""},
		{"GET", "https://app.example", "GET", "mcp-session-id,last-event-id", true, "mcp-session-id, last-event-id"},
		{"DELETE", "https://app.example", "DELETE", "mcp-session-id", true, "mcp-session-id"},
		{"auth", "https://app.example", "POST", "authorization,dpop,accept", true, "authorization, dpop, accept"},
		{"mixed case", "https://app.example", "POST", "Content-Type, MCP-Protocol-Version, Mcp-Param-Region", true, "content-type, mcp-protocol-version, mcp-param-region"},
		{"mcp-param-x", "https://app.example", "POST", "mcp-param-x", true, "mcp-param-x"},
		{"empty elements", "https://app.example", "POST", " , content-type,,", true, "content-type"},
		{"x-evil", "https://app.example", "POST", "content-type, x-evil", false, ""},
		{"cookie", "https://app.example", "POST", "cookie", false, ""},
		{"mcp-param- alone", "https://app.example", "POST", "mcp-param-", false, ""},
		{"mcp-param bad name", "https://app.example", "POST", "mcp-param-a b", false, ""},
		{"PUT", "https://app.example", "PUT", "", false, ""},
		{"lowercase post", "https://app.example", "post", "", false, ""},
		{"unlisted", "https://evil.example", "POST", "content-type", false, ""},
		{"implicit loopback", "http://localhost:3000", "POST", "content-type", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if !c.Preflight(w, preflight(tc.origin, tc.method, tc.headers)) {
				t.Fatal("the preflight was not answered")
			}
			got := corsHeadersOf(w.Header())
			if !tc.ok {
				if w.Code != http.StatusForbidden || len(got) != 0 {
					t.Errorf("got %d %v, want 403 without Access-Control-* headers", w.Code, got)
				}
				return
			}
			want := http.Header{
				"Access-Control-Allow-Origin":  {tc.origin},
				"Access-Control-Allow-Methods": {"GET, POST, DELETE"},
				"Access-Control-Max-Age":       {"7200"},
			}
			if tc.allowHeaders != "" {
				want["Access-Control-Allow-Headers"] = []string{tc.allowHeaders}
			}
			if w.Code != http.StatusNoContent || !equalHeaders(got, want) {
				t.Errorf("got %d %v, want 204 %v", w.Code, got, want)
			}
			if v := w.Header().Get("Vary"); v != "Origin, Access-Control-Request-Method, Access-Control-Request-Headers" {
				t.Errorf("Vary: %q", v)
			}
			if w.Header().Get("Access-Control-Allow-Credentials") != "" {
				t.Error("Access-Control-Allow-Credentials sent")
			}
		})
	}
}

func TestCORSPreflightWildcard(t *testing.T) {
	c := NewCORS([]string{"*"}, 90*time.Second)
	w := httptest.NewRecorder()
	c.Preflight(w, preflight("https://anywhere.example", "POST", "content-type"))
	if w.Code != http.StatusNoContent {
		t.Fatalf("status %d", w.Code)
	}
	if got := w.Header().Get("Access-Control-Allow-Origin"); got != "https://anywhere.example" {
		t.Errorf(`Access-Control-Allow-Origin %q, want the origin, never "*"`, got)
	}
	if got := w.Header().Get("Access-Control-Max-Age"); got != "90" {
		t.Errorf("Access-Control-Max-Age %q, want 90", got)
	}

	w = httptest.NewRecorder()
	NewCORS([]string{"*"}, -1).Preflight(w, preflight("https://anywhere.example", "POST", ""))
	if _, ok := w.Header()["Access-Control-Max-Age"]; ok || w.Code != http.StatusNoContent {
		t.Errorf("negative max age: %d %v", w.Code, w.Header())
	}
}

func TestCORSNotPreflight(t *testing.T) {
	c := NewCORS([]string{"https://app.example"}, 0)
	for _, r := range []*http.Request{
		preflight("", "POST", ""),                      // no Origin
		preflight("https://app.example", "", ""),       // no Access-Control-Request-Method
		httptest.NewRequest(http.MethodPost, "/", nil), // not OPTIONS
	} {
		w := httptest.NewRecorder()
		if c.Preflight(w, r) {
			t.Errorf("%s %v answered as a preflight", r.Method, r.Header)
		}
	}
}

func TestCORSDecorate(t *testing.T) {
	c := NewCORS([]string{"https://app.example"}, 0)
	for _, tc := range []struct {
		origin string
		cors   bool
	}{
		{"https://app.example", true},
		{"http://localhost:3000", false},
		{"https://evil.example", false},
		{"", false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		h := http.Header{}
		c.Decorate(h, r)
		c.Decorate(h, r) // again: no duplicates
		want := http.Header{}
		if tc.cors {
			want = http.Header{
				"Access-Control-Allow-Origin":   {tc.origin},
				"Access-Control-Expose-Headers": {"Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version, Retry-After"},
			}
		}
		if got := corsHeadersOf(h); !equalHeaders(got, want) {
			t.Errorf("origin %q: %v, want %v", tc.origin, got, want)
		}
		if got := h.Values("Vary"); len(got) != 1 || got[0] != "Origin" {
			t.Errorf("origin %q: Vary %q, want Origin once", tc.origin, got)
		}
	}
	// A preflight is Preflight's.
	h := http.Header{}
	c.Decorate(h, preflight("https://app.example", "POST", ""))
	if len(h) != 0 {
		t.Errorf("a preflight was decorated: %v", h)
	}
	// Another Vary value stays.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Origin", "https://app.example")
	h = http.Header{"Vary": {"Accept-Encoding"}}
	c.Decorate(h, r)
	if got := h.Values("Vary"); len(got) != 2 {
		t.Errorf("Vary %q", got)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := b[k]
		if len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}
