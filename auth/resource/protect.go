package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Options configure Protect.
type Options struct {
	// Resource is the canonical URL of the MCP endpoint as clients use it
	// (scheme, host, path; no fragment), e.g. "https://mcp.example.com/mcp".
	// It is the resource of the metadata and the audience tokens must
	// carry. It is configured rather than derived from requests, so that
	// a server behind a reverse proxy is right. Required.
	Resource string
	// AuthorizationServers are the issuer identifiers of the authorization
	// servers clients may use. Required.
	AuthorizationServers []string
	// Verifier validates the tokens. Required.
	Verifier Verifier
	// RequiredScopes must all be granted to a token for any request;
	// a token lacking one is answered 403 insufficient_scope. They are
	// also the scope of the 401 challenge.
	RequiredScopes []string
	// ScopesSupported is the scopes_supported of the metadata; default
	// RequiredScopes.
	ScopesSupported []string
	// ResourceName is the human-readable resource_name of the metadata.
	ResourceName string
	// DPoPAlgorithms, when set, are published as
	// dpop_signing_alg_values_supported and announce DPoP support.
	DPoPAlgorithms []string
	// AllowedOrigins is the protected handler's list of origins
	// (streamable.Options.AllowedOrigins), which get CORS: their
	// preflights, which carry no token, are answered without
	// authentication, and the challenges are readable by their pages.
	// Without it CORS is off here.
	AllowedOrigins []string
	// Logger receives a Debug record for each request refused for its
	// token (status, OAuth error code and reason, remote address, method
	// and path; never the token); nil discards them.
	Logger *slog.Logger
}

// Handler protects an MCP endpoint; see Protect.
type Handler struct {
	next         http.Handler
	opts         Options
	metadataURL  string
	metadataPath string
	metadata     []byte
	cors         *httpguard.CORS // nil without AllowedOrigins
}

// Protect returns next protected by OAuth access tokens as opts say. It
// panics when opts lack Resource, AuthorizationServers or Verifier; use
// New to get an error instead.
func Protect(next http.Handler, opts *Options) *Handler {
	h, err := New(next, opts)
	if err != nil {
		panic(err)
	}
	return h
}

// New is Protect returning an error for bad options.
func New(next http.Handler, opts *Options) (*Handler, error) {
	if opts == nil || opts.Resource == "" || opts.Verifier == nil || len(opts.AuthorizationServers) == 0 {
		return nil, errors.New("resource: Options need Resource, AuthorizationServers and Verifier")
	}
	u, err := url.Parse(opts.Resource)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("resource: Resource %q is not an absolute http(s) URL without fragment", opts.Resource)
	}
	h := &Handler{next: next, opts: *opts, cors: httpguard.NewCORS(opts.AllowedOrigins, 0)}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	h.metadataPath = "/.well-known/oauth-protected-resource" + path
	h.metadataURL = u.Scheme + "://" + u.Host + h.metadataPath
	scopes := opts.ScopesSupported
	if scopes == nil {
		scopes = opts.RequiredScopes
	}
	md := map[string]any{
		"resource":                 opts.Resource,
		"authorization_servers":    opts.AuthorizationServers,
		"bearer_methods_supported": []string{"header"},
	}
	if len(scopes) > 0 {
		md["scopes_supported"] = scopes
	}
	if opts.ResourceName != "" {
		md["resource_name"] = opts.ResourceName
	}
	if len(opts.DPoPAlgorithms) > 0 {
		md["dpop_signing_alg_values_supported"] = opts.DPoPAlgorithms
	}
	if h.metadata, err = json.Marshal(md); err != nil {
		return nil, err
	}
	return h, nil
}

// MetadataURL is the URL of the protected resource metadata, as the
// challenges name it.
func (h *Handler) MetadataURL() string { return h.metadataURL }

// MetadataPath is the path of MetadataURL, where MetadataHandler is to be
// mounted when the endpoint is mounted under a mux.
func (h *Handler) MetadataPath() string { return h.metadataPath }

// MetadataHandler serves the protected resource metadata (RFC 9728) at
// whatever path it is mounted, to any origin, and answers the preflights
// of Options.AllowedOrigins.
func (h *Handler) MetadataHandler() http.Handler {
	return http.HandlerFunc(h.serveMetadata)
}

func (h *Handler) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if h.cors.Preflight(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "max-age=3600")
	_, _ = w.Write(h.metadata)
}

// ServeHTTP serves the metadata at its path and, for any other request,
// authenticates it and passes it on to the protected handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == h.metadataPath {
		h.serveMetadata(w, r)
		return
	}
	if h.cors.Preflight(w, r) {
		return
	}
	h.cors.Decorate(w.Header(), r)
	// RFC 6750 sections 2.2 and 2.3: only the header method is supported.
	if r.URL.Query().Has("access_token") {
		h.challenge(w, r, http.StatusBadRequest, "invalid_request", "access tokens are accepted in the Authorization header only")
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" && r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "reading the request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, err := url.ParseQuery(string(body)); err == nil && form.Has("access_token") {
			h.challenge(w, r, http.StatusBadRequest, "invalid_request", "access tokens are accepted in the Authorization header only")
			return
		}
	}
	authz := r.Header.Values("Authorization")
	if len(authz) > 1 {
		h.challenge(w, r, http.StatusBadRequest, "invalid_request", "more than one Authorization header")
		return
	}
	var token string
	if len(authz) == 1 {
		scheme, rest, _ := strings.Cut(authz[0], " ")
		if strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "DPoP") {
			token = strings.TrimSpace(rest)
			if token == "" || strings.ContainsAny(token, " \t") {
				h.challenge(w, r, http.StatusUnauthorized, "invalid_token", "malformed Authorization header")
				return
			}
		}
	}
	if token == "" {
		// No authentication information: no error code (RFC 6750 3.1).
		h.challenge(w, r, http.StatusUnauthorized, "", "")
		return
	}
	p, err := h.opts.Verifier.Verify(r.Context(), token, r)
	if err == nil && p == nil {
		err = errors.New("resource: the verifier returned no principal")
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrInvalidDPoPProof):
		h.challenge(w, r, http.StatusUnauthorized, "invalid_dpop_proof", err.Error())
		return
	case errors.Is(err, ErrInvalidToken):
		h.challenge(w, r, http.StatusUnauthorized, "invalid_token", err.Error())
		return
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the access token could not be checked", http.StatusServiceUnavailable)
		return
	}
	principal := p.ID()
	if principal == "" {
		// Nobody to bind sessions and sealed state to.
		h.challenge(w, r, http.StatusUnauthorized, "invalid_token", "the token names neither a subject (sub) nor a client (client_id)")
		return
	}
	if !p.HasScopes(h.opts.RequiredScopes...) {
		h.challenge(w, r, http.StatusForbidden, "insufficient_scope", "the token lacks a required scope")
		return
	}
	ctx := r.Context()
	ctx = server.WithPrincipal(ctx, principal)
	ctx = server.WithScopes(ctx, p.Scopes)
	ctx = WithPrincipal(ctx, p)
	// The challenge of a refusal of the core names the metadata too.
	ctx = streamable.WithResourceMetadata(ctx, h.metadataURL)
	h.next.ServeHTTP(w, r.WithContext(ctx))
}

// challenge answers with status and a WWW-Authenticate challenge naming
// the metadata and the required scopes; code is the error code, "" for
// none. The scheme is DPoP when the request used it or the error is
// about the proof, Bearer otherwise.
func (h *Handler) challenge(w http.ResponseWriter, r *http.Request, status int, code, desc string) {
	if h.opts.Logger != nil {
		h.opts.Logger.Debug("resource: request refused", "status", status, "error", code, "reason", desc,
			"remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	}
	scheme := "Bearer"
	if code == "invalid_dpop_proof" || authScheme(r) == "dpop" {
		scheme = "DPoP"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `%s resource_metadata="%s"`, scheme, quoteParam(h.metadataURL))
	if len(h.opts.RequiredScopes) > 0 {
		fmt.Fprintf(&b, `, scope="%s"`, quoteParam(strings.Join(h.opts.RequiredScopes, " ")))
	}
	if scheme == "DPoP" && len(h.opts.DPoPAlgorithms) > 0 {
		fmt.Fprintf(&b, `, algs="%s"`, quoteParam(strings.Join(h.opts.DPoPAlgorithms, " ")))
	}
	if code != "" {
		fmt.Fprintf(&b, `, error="%s"`, code)
		if desc != "" {
			fmt.Fprintf(&b, `, error_description="%s"`, quoteParam(desc))
		}
	}
	w.Header().Set("WWW-Authenticate", b.String())
	w.Header().Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		w.WriteHeader(status)
		return
	}
	http.Error(w, desc, status)
}

// quoteParam keeps the characters RFC 6750 allows in a quoted
// auth-param value (%x20-21 / %x23-5B / %x5D-7E), dropping the others.
func quoteParam(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, s)
}
