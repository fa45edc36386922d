// Package httpguard holds the request checks the HTTP transports share:
// Origin and Host validation against DNS rebinding, the media types of
// Content-Type and Accept, and CORS for listed origins.
package httpguard

import (
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// OriginPolicy decides which Origin headers are accepted: loopback origins
// always, plus the configured ones.
type OriginPolicy struct {
	any  bool
	list map[string]bool // normalised scheme://host[:port]
}

// NewOriginPolicy accepts the origins (scheme://host[:port]) of list
// besides loopback ones; "*" accepts every origin.
func NewOriginPolicy(list []string) OriginPolicy {
	p := OriginPolicy{list: map[string]bool{}}
	for _, o := range list {
		if o == "*" {
			p.any = true
			continue
		}
		p.list[normOrigin(o)] = true
	}
	return p
}

// normOrigin is origin as the policies compare it: lowercased, without a
// trailing slash.
func normOrigin(origin string) string {
	return strings.ToLower(strings.TrimSuffix(origin, "/"))
}

// Allowed reports whether a request with the Origin header origin is
// accepted.
func (p OriginPolicy) Allowed(origin string) bool {
	if p.any {
		return true
	}
	o := normOrigin(origin)
	if p.list[o] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return isLoopbackName(u.Hostname())
}

// HostPolicy protects loopback listeners from DNS rebinding: a request that
// arrived on a loopback address must name a loopback host (or an allowed
// one) in its Host header.
type HostPolicy struct {
	list map[string]bool
}

// NewHostPolicy accepts the Host values (host or host:port) of list on
// loopback listeners besides localhost, 127.0.0.1 and [::1].
func NewHostPolicy(list []string) HostPolicy {
	p := HostPolicy{list: map[string]bool{}}
	for _, h := range list {
		p.list[strings.ToLower(h)] = true
	}
	return p
}

// Allowed reports whether r's Host header is accepted. Requests arriving
// on non-loopback listeners are not checked.
func (p HostPolicy) Allowed(r *http.Request) bool {
	if !arrivedOnLoopback(r) {
		return true
	}
	host := strings.ToLower(r.Host)
	if p.list[host] {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	if p.list[name] {
		return true
	}
	return isLoopbackName(strings.Trim(name, "[]"))
}

func arrivedOnLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		// Not served by net/http (a test harness calling ServeHTTP):
		// apply the check, the safe choice.
		return true
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback() // the usual case, without formatting
	}
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isLoopbackName(h string) bool {
	h = strings.Trim(strings.ToLower(h), "[]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

// IsJSONContentType reports whether a Content-Type value is
// application/json, with or without parameters.
func IsJSONContentType(ct string) bool {
	if ct == "application/json" {
		return true // the usual case, without parsing
	}
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// mediaRange parses one Accept element: its media range, lowercased, and
// its q value. Elements without parameters are read without allocating.
func mediaRange(part string) (string, float64, bool) {
	if !strings.ContainsRune(part, ';') {
		for i := 0; i < len(part); i++ {
			if c := part[i]; c >= 'A' && c <= 'Z' {
				return strings.ToLower(part), 1, strings.Count(part, "/") == 1
			}
		}
		return part, 1, strings.Count(part, "/") == 1
	}
	mt, params, err := mime.ParseMediaType(part)
	if err != nil {
		return "", 0, false
	}
	q := 1.0
	if qs, ok := params["q"]; ok {
		if f, err := strconv.ParseFloat(qs, 64); err == nil {
			q = f
		}
	}
	return mt, q, true
}

// Acceptance is what a client's Accept header allows.
type Acceptance struct {
	JSON, SSE bool
	PreferSSE bool // text/event-stream ranks above application/json
}

// Negotiate reads Accept headers as HTTP does: media ranges with q values,
// */* and type/* wildcards; no header accepts everything. Among equally
// ranked types the one listed first is preferred.
func Negotiate(values []string) Acceptance {
	if len(values) == 0 {
		return Acceptance{JSON: true, SSE: true}
	}
	jsonQ, sseQ := -1.0, -1.0
	jsonPos, ssePos := 0, 0
	jsonSpec, sseSpec := 0, 0 // how specific the range that set the q is
	pos := 0
	for _, v := range values {
		for rest := v; rest != ""; {
			var part string
			part, rest, _ = strings.Cut(rest, ",")
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			pos++
			mt, q, ok := mediaRange(part)
			if !ok {
				continue
			}
			// The most specific matching range decides (RFC 9110
			// 12.5.1); among equally specific ones the highest q.
			js := matchRange(mt, "application", "json")
			ss := matchRange(mt, "text", "event-stream")
			if js > jsonSpec || (js > 0 && js == jsonSpec && q > jsonQ) {
				jsonQ, jsonPos, jsonSpec = q, pos, js
			}
			if ss > sseSpec || (ss > 0 && ss == sseSpec && q > sseQ) {
				sseQ, ssePos, sseSpec = q, pos, ss
			}
		}
	}
	a := Acceptance{JSON: jsonQ > 0, SSE: sseQ > 0}
	a.PreferSSE = a.SSE && (!a.JSON || sseQ > jsonQ || (sseQ == jsonQ && ssePos < jsonPos))
	return a
}

// matchRange returns how specifically the media range matches typ/sub: 3
// exactly, 2 as typ/*, 1 as */*, 0 not at all.
func matchRange(mediaRange, typ, sub string) int {
	switch mediaRange {
	case typ + "/" + sub:
		return 3
	case typ + "/*":
		return 2
	case "*/*":
		return 1
	}
	return 0
}

// Guard is the checks every mcpkit HTTP endpoint makes before anything
// else: CORS headers for a listed origin, the Host (DNS rebinding), a CORS
// preflight answered, the Origin.
type Guard struct {
	origin OriginPolicy
	cors   *CORS
	hosts  HostPolicy
}

// NewGuard returns the guard of an endpoint with the origins and hosts it
// accepts beside loopback ones (origins also turn CORS on for themselves)
// and the preflights' cache lifetime (0 means two hours).
func NewGuard(origins, hosts []string, corsMaxAge time.Duration) Guard {
	return Guard{origin: NewOriginPolicy(origins), cors: NewCORS(origins, corsMaxAge), hosts: NewHostPolicy(hosts)}
}

// Check runs the checks in order. It returns handled when it answered
// the request (a preflight), and otherwise the reason the request is
// refused with 403, or "" when it may go on.
func (g *Guard) Check(w http.ResponseWriter, r *http.Request) (refusal string, handled bool) {
	g.cors.Decorate(w.Header(), r) // before anything writes
	if !g.hosts.Allowed(r) {
		return "Forbidden: Host not allowed", false
	}
	if g.cors.Preflight(w, r) {
		return "", true
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.origin.Allowed(origin) {
		return "Forbidden: Origin not allowed", false
	}
	return "", false
}
