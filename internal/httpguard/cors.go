package httpguard

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CORS is the CORS protocol of the Fetch standard for the listed origins:
// it answers their preflights and lets their pages read the responses. No
// credentials mode: MCP clients send credentials in the Authorization
// header, which the preflight allows, not as cookies. A nil *CORS is off.
type CORS struct {
	any    bool
	list   map[string]bool // normalised scheme://host[:port]
	maxAge string          // Access-Control-Max-Age; "" for none
}

// CORSMethods are the methods a preflight may ask for: POST, and GET and
// DELETE for the legacy era's stream and session end.
const CORSMethods = "GET, POST, DELETE"

// CORSExposed are the response headers a page may read.
const CORSExposed = "Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version, Retry-After"

// corsHeaders are the request headers a preflight may ask for, lowercased,
// besides Mcp-Param-*.
var corsHeaders = map[string]bool{
	"content-type":         true,
	"accept":               true,
	"authorization":        true,
	"dpop":                 true,
	"mcp-protocol-version": true,
	"mcp-method":           true,
	"mcp-name":             true,
	"mcp-session-id":       true,
	"last-event-id":        true,
}

const corsParamPrefix = "mcp-param-"

// NewCORS returns the CORS of the origins (scheme://host[:port], as
// NewOriginPolicy takes them; "*" for every origin), or nil, off, when
// there are none. Preflights are cached for maxAge: 0 means two hours, a
// negative value leaves it to the browser.
func NewCORS(origins []string, maxAge time.Duration) *CORS {
	if len(origins) == 0 {
		return nil
	}
	c := &CORS{list: map[string]bool{}}
	for _, o := range origins {
		if o == "*" {
			c.any = true
			continue
		}
		c.list[normOrigin(o)] = true
	}
	switch {
	case maxAge == 0:
		c.maxAge = "7200"
	case maxAge > 0:
		c.maxAge = strconv.FormatInt(int64(maxAge/time.Second), 10)
	}
	return c
}

// Listed reports whether origin is one of c's; loopback origins are not
// unless listed.
func (c *CORS) Listed(origin string) bool {
	if c == nil || origin == "" {
		return false
	}
	return c.any || c.list[normOrigin(origin)]
}

// IsPreflight reports whether r is a CORS preflight: OPTIONS with Origin
// and Access-Control-Request-Method.
func IsPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// Preflight answers r when it is a CORS preflight and c is on: 204 with
// the Access-Control-Allow-* headers when the origin is listed and the
// method and headers asked for are allowed, 403 without them otherwise.
// It reports whether it answered.
func (c *CORS) Preflight(w http.ResponseWriter, r *http.Request) bool {
	if c == nil || !IsPreflight(r) {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	origin := r.Header.Get("Origin")
	headers, ok := allowedHeaders(r.Header.Values("Access-Control-Request-Headers"))
	if !ok || !c.Listed(origin) || !allowedMethod(r.Header.Get("Access-Control-Request-Method")) {
		http.Error(w, "Forbidden: CORS preflight refused", http.StatusForbidden)
		return true
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Methods", CORSMethods)
	if headers != "" {
		h.Set("Access-Control-Allow-Headers", headers)
	}
	if c.maxAge != "" {
		h.Set("Access-Control-Max-Age", c.maxAge)
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// Decorate adds to h, the headers of r's response, what lets the page of a
// listed origin read it: Access-Control-Allow-Origin naming the origin and
// Access-Control-Expose-Headers. While c is on every response varies by
// Origin. Preflights are left to Preflight. Calling it again is harmless.
func (c *CORS) Decorate(h http.Header, r *http.Request) {
	if c == nil || IsPreflight(r) {
		return
	}
	if !varies(h, "Origin") {
		h.Add("Vary", "Origin")
	}
	origin := r.Header.Get("Origin")
	if !c.Listed(origin) {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", CORSExposed)
}

func allowedMethod(m string) bool {
	return m == http.MethodPost || m == http.MethodGet || m == http.MethodDelete
}

// allowedHeaders checks the Access-Control-Request-Headers values: every
// name must be one CORS allows. It returns them lowercased, joined by
// ", ", "" for none.
func allowedHeaders(values []string) (string, bool) {
	var b strings.Builder
	for _, v := range values {
		for rest := v; rest != ""; {
			var name string
			name, rest, _ = strings.Cut(rest, ",")
			name = strings.ToLower(strings.Trim(name, " \t"))
			if name == "" {
				continue
			}
			if !corsHeaders[name] && !isParamHeader(name) {
				return "", false
			}
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(name)
		}
	}
	return b.String(), true
}

// isParamHeader reports whether the lowercased name is Mcp-Param-{Name},
// the name a token.
func isParamHeader(name string) bool {
	p, ok := strings.CutPrefix(name, corsParamPrefix)
	if !ok || p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		if !isTokenChar(p[i]) {
			return false
		}
	}
	return true
}

// isTokenChar reports whether c is a tchar of RFC 9110 (section 5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// varies reports whether the Vary values of h name field.
func varies(h http.Header, field string) bool {
	for _, v := range h.Values("Vary") {
		for rest := v; rest != ""; {
			var f string
			f, rest, _ = strings.Cut(rest, ",")
			if strings.EqualFold(strings.TrimSpace(f), field) {
				return true
			}
		}
	}
	return false
}
