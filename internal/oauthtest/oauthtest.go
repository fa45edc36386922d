// Package oauthtest is an OAuth 2.1 authorization server and a protected
// resource wrapper over loopback, for the tests of mcpkit's authorization
// client and of the mcpkit command. The authorization server approves every
// authorization request at once (redirecting with a code), checks PKCE,
// redirect URIs, resource indicators and client authentication strictly,
// and counts what it was asked.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
)

// Config configures a Server.
type Config struct {
	// ClientID and ClientSecret, when set, are a pre-registered client:
	// its token requests must authenticate with the secret (Basic or
	// post).
	ClientID, ClientSecret string
	// NoRegistration leaves dynamic client registration out.
	NoRegistration bool
	// ExpiresIn is the lifetime of access tokens in seconds; 0 leaves
	// expires_in out.
	ExpiresIn int
	// Refresh issues refresh tokens.
	Refresh bool
	// Secret is a prefix of every token, code and registered secret the
	// server issues, for tests that look for them where they must not be.
	Secret string
	// Scopes are the scopes_supported of the metadata.
	Scopes []string
	// ExactRedirect compares the redirect URI of an authorization request
	// with the registered ones exactly, port included, as many servers do
	// (RFC 8252 asks for any port on loopback, which is the default).
	ExactRedirect bool
}

// Server is the authorization server.
type Server struct {
	// URL is the issuer.
	URL string
	cfg Config
	srv *httptest.Server

	mu       sync.Mutex
	clients  map[string]client
	codes    map[string]grant
	access   map[string]grant
	refresh  map[string]grant
	counts   Counts
	issuedAT []string
	n        int
}

// Counts are the requests a Server answered successfully.
type Counts struct {
	Registrations, Authorizations, CodeExchanges, Refreshes int
}

type client struct {
	secret       string
	redirectURIs []string
}

type grant struct {
	clientID, redirectURI, challenge, resource, scope string
}

// NewServer starts a Server; Close stops it.
func NewServer(cfg Config) *Server {
	s := &Server{cfg: cfg, clients: map[string]client{}, codes: map[string]grant{},
		access: map[string]grant{}, refresh: map[string]grant{}}
	if cfg.ClientID != "" {
		s.clients[cfg.ClientID] = client{secret: cfg.ClientSecret}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Counts returns what the server answered so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Issued returns the access tokens issued so far.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issuedAT...)
}

// Valid reports whether token is an access token the server issued for
// resource.
func (s *Server) Valid(token, resource string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.access[token]
	return ok && g.resource == resource
}

// Revoke forgets every access token, as if they had expired at the server.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]grant{}
}

func (s *Server) newSecret(kind string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	s.n++
	return fmt.Sprintf("%s%s-%d-%s", s.cfg.Secret, kind, s.n, base64.RawURLEncoding.EncodeToString(b))
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/.well-known/oauth-authorization-server":
		m := map[string]any{
			"issuer":                                         s.URL,
			"authorization_endpoint":                         s.URL + "/authorize",
			"token_endpoint":                                 s.URL + "/token",
			"response_types_supported":                       []string{"code"},
			"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":               []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
			"authorization_response_iss_parameter_supported": true,
		}
		if !s.cfg.NoRegistration {
			m["registration_endpoint"] = s.URL + "/register"
		}
		if s.cfg.Scopes != nil {
			m["scopes_supported"] = s.cfg.Scopes
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(m)
	case r.Method == http.MethodPost && r.URL.Path == "/register" && !s.cfg.NoRegistration:
		s.register(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/authorize":
		s.authorize(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/token":
		s.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.RedirectURIs) == 0 {
		oauthError(w, 400, "invalid_client_metadata")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Registrations++
	id := fmt.Sprintf("client-%d", len(s.clients)+1)
	c := client{redirectURIs: body.RedirectURIs}
	resp := map[string]any{"client_id": id, "redirect_uris": body.RedirectURIs, "token_endpoint_auth_method": "none"}
	if body.AuthMethod != "" && body.AuthMethod != "none" {
		c.secret = s.newSecret("client-secret")
		resp["client_secret"] = c.secret
		resp["token_endpoint_auth_method"] = body.AuthMethod
	}
	s.clients[id] = c
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(resp)
}

// redirectAllowed reports whether uri matches one of the registered ones,
// any port on loopback (RFC 8252 Section 7.3) unless exact. A
// pre-registered client (registered with none) may use any loopback URI.
func redirectAllowed(uri string, registered []string, exact bool) bool {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsLoopback() {
		return false
	}
	if registered == nil {
		return true
	}
	for _, r := range registered {
		if exact {
			if r == uri {
				return true
			}
			continue
		}
		ru, err := url.Parse(r)
		if err == nil && ru.Scheme == u.Scheme && ru.Hostname() == u.Hostname() && ru.Path == u.Path {
			return true
		}
	}
	return false
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[q.Get("client_id")]
	if !ok || !redirectAllowed(q.Get("redirect_uri"), c.redirectURIs, s.cfg.ExactRedirect) {
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	}
	ru, _ := url.Parse(q.Get("redirect_uri"))
	rq := ru.Query()
	rq.Set("state", q.Get("state"))
	rq.Set("iss", s.URL)
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
		rq.Set("error", "invalid_request")
	} else {
		code := s.newSecret("code")
		s.codes[code] = grant{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"),
			challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope")}
		rq.Set("code", code)
		s.counts.Authorizations++
	}
	ru.RawQuery = rq.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request")
		return
	}
	f := r.PostForm
	id, secret := f.Get("client_id"), f.Get("client_secret")
	if bid, bsec, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(bid)
		secret, _ = url.QueryUnescape(bsec)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok || c.secret != secret {
		oauthError(w, 401, "invalid_client")
		return
	}
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok = s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || g.clientID != id || g.redirectURI != f.Get("redirect_uri") || g.resource != f.Get("resource") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthError(w, 400, "invalid_grant")
			return
		}
		s.counts.CodeExchanges++
	case "refresh_token":
		g, ok = s.refresh[f.Get("refresh_token")]
		if !ok || g.clientID != id || f.Get("resource") != "" && f.Get("resource") != g.resource {
			oauthError(w, 400, "invalid_grant")
			return
		}
		delete(s.refresh, f.Get("refresh_token")) // rotated
		s.counts.Refreshes++
	default:
		oauthError(w, 400, "unsupported_grant_type")
		return
	}
	at := s.newSecret("access-token")
	s.access[at] = g
	s.issuedAT = append(s.issuedAT, at)
	resp := map[string]any{"access_token": at, "token_type": "Bearer"}
	if g.scope != "" {
		resp["scope"] = g.scope
	}
	if s.cfg.ExpiresIn > 0 {
		resp["expires_in"] = s.cfg.ExpiresIn
	}
	if s.cfg.Refresh {
		rt := s.newSecret("refresh-token")
		s.refresh[rt] = g
		resp["refresh_token"] = rt
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(resp)
}

// Protect serves h as a protected resource of s at path (an MCP endpoint,
// "/mcp" for instance): the protected resource metadata (RFC 9728) at its
// path-based well-known URI, and h only for requests with a valid bearer
// token for the resource, a 401 with a challenge naming the metadata
// otherwise. The resource is http://HOST+path, HOST as the request names
// it.
func (s *Server) Protect(h http.Handler, path string) http.Handler {
	prm := "/.well-known/oauth-protected-resource" + path
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resource := "http://" + r.Host + path
		if r.URL.Path == prm {
			w.Header().Set("Content-Type", "application/json")
			m := map[string]any{"resource": resource, "authorization_servers": []string{s.URL}}
			if s.cfg.Scopes != nil {
				m["scopes_supported"] = s.cfg.Scopes
			}
			_ = json.NewEncoder(w).Encode(m)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !s.Valid(tok, resource) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="http://`+r.Host+prm+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
