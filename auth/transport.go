package auth

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure a Transport.
type Options struct {
	// ClientID and ClientSecret are pre-registered client credentials,
	// used first when set. ClientIssuer, when set, is the issuer they
	// belong to: they are then never sent to another authorization server.
	ClientID     string
	ClientSecret string
	ClientIssuer string
	// ClientMetadataURL is the HTTPS URL of the client's Client ID
	// Metadata Document, used as client_id where the authorization server
	// supports it.
	ClientMetadataURL string
	// ClientName is sent in dynamic client registration; "" means "mcpkit".
	ClientName string
	// RedirectURL is where the authorization server sends the user agent
	// back; "" means http://127.0.0.1/callback.
	RedirectURL string
	// Scopes, when set, replace the scope selection of the specification
	// (the challenge's scope, else the resource's scopes_supported, else
	// none).
	Scopes []string
	// NoOfflineAccess keeps offline_access out of the requested scopes even
	// where the authorization server advertises it.
	NoOfflineAccess bool
	// Authorizer performs the interactive step; required for the
	// authorization code flow.
	Authorizer Authorizer
	// Store keeps tokens and registrations; nil means a new MemoryStore.
	Store TokenStore
	// Base sends the MCP requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// HTTPClient sends discovery, registration and token requests; nil
	// means a client over Base with a 30-second timeout.
	HTTPClient *http.Client
	// MaxAttempts bounds the authorizations (and refreshes) one request
	// may trigger, step-ups included; 0 means 3.
	MaxAttempts int
	// Logger receives debug records of the flow, never secrets; nil means
	// none.
	Logger *slog.Logger
}

// Transport is an http.RoundTripper that authorizes the requests to one MCP
// server; see the package documentation.
type Transport struct {
	opts  Options
	base  http.RoundTripper
	hc    *http.Client
	store TokenStore
	now   func() time.Time

	flow sync.Mutex // serializes discovery and authorization

	mu        sync.Mutex
	token     *Token
	key       Key
	disc      *discovery
	requested []string // scopes requested for key, for step-up unions
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport returns a Transport with opts (nil for the defaults).
func NewTransport(opts *Options) *Transport {
	t := &Transport{now: time.Now}
	if opts != nil {
		t.opts = *opts
	}
	t.base = t.opts.Base
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	t.hc = t.opts.HTTPClient
	if t.hc == nil {
		t.hc = &http.Client{Transport: t.base, Timeout: 30 * time.Second}
	}
	t.store = t.opts.Store
	if t.store == nil {
		t.store = NewMemoryStore()
	}
	if t.opts.RedirectURL == "" {
		t.opts.RedirectURL = "http://127.0.0.1/callback"
	}
	if t.opts.ClientName == "" {
		t.opts.ClientName = "mcpkit"
	}
	if t.opts.MaxAttempts <= 0 {
		t.opts.MaxAttempts = 3
	}
	return t
}

func (t *Transport) debug(ctx context.Context, msg string, args ...any) {
	if t.opts.Logger != nil {
		t.opts.Logger.DebugContext(ctx, msg, args...)
	}
}

// currentToken returns the token to send, refreshed first when it has
// expired and can be; nil when there is none.
func (t *Transport) currentToken(ctx context.Context) *Token {
	t.mu.Lock()
	tok, d := t.token, t.disc
	t.mu.Unlock()
	if tok == nil || tok.usable(t.now()) {
		return tok
	}
	if tok.RefreshToken == "" || d == nil {
		return nil
	}
	t.flow.Lock()
	defer t.flow.Unlock()
	t.mu.Lock()
	cur := t.token
	t.mu.Unlock()
	if cur != tok {
		return cur // refreshed meanwhile
	}
	nt, err := t.refreshWith(ctx, d, tok)
	if err != nil {
		t.debug(ctx, "auth: refresh failed", "err", err)
		return nil
	}
	return nt
}

// RoundTrip implements http.RoundTripper: it sends req with the current
// access token and, on 401 or on 403 insufficient_scope, authorizes and
// sends it again, at most MaxAttempts times.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	tok := t.currentToken(ctx)
	for attempt := 0; ; attempt++ {
		r := req.Clone(ctx)
		if attempt > 0 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		if tok != nil {
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
		ch := bearerParams(resp.Header)
		stepUp := resp.StatusCode == http.StatusForbidden
		if stepUp && ch["error"] != "insufficient_scope" {
			return resp, nil
		}
		if attempt >= t.opts.MaxAttempts || req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		tok, err = t.authorize(ctx, req, stepUp, ch, tok)
		if err != nil {
			return nil, err
		}
	}
}

// authorize obtains a new token after a 401 (or a 403 insufficient_scope
// when stepUp) answered a request sent with failed (nil: without a token).
func (t *Transport) authorize(ctx context.Context, req *http.Request, stepUp bool, ch map[string]string, failed *Token) (*Token, error) {
	t.flow.Lock()
	defer t.flow.Unlock()
	t.mu.Lock()
	cur := t.token
	t.mu.Unlock()
	if !stepUp && cur != nil && cur != failed && cur.usable(t.now()) {
		return cur, nil // another request authorized meanwhile
	}
	server := &url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Path: req.URL.Path, RawPath: req.URL.RawPath}
	d, err := t.discover(ctx, server, ch["resource_metadata"], req.Header.Get("MCP-Protocol-Version"))
	if err != nil {
		return nil, err
	}
	key := Key{Issuer: d.issuer, Resource: d.resource}
	t.mu.Lock()
	sameKey := t.disc != nil && t.key == key
	prevScopes := t.requested
	t.mu.Unlock()
	t.debug(ctx, "auth: discovered", "issuer", d.issuer, "resource", d.resource, "step_up", stepUp)

	if !stepUp {
		stored, err := t.store.LoadToken(ctx, key)
		if err != nil {
			return nil, err
		}
		if stored != nil && (failed == nil || stored.AccessToken != failed.AccessToken) && stored.usable(t.now()) {
			if !sameKey {
				prevScopes = nil
			}
			t.set(d, key, stored, prevScopes)
			return stored, nil
		}
		if stored != nil && stored.RefreshToken != "" {
			if nt, err := t.refreshWith(ctx, d, stored); err == nil {
				return nt, nil
			}
		}
	}

	var scopes []string
	switch {
	case len(t.opts.Scopes) > 0:
		scopes = slices.Clone(t.opts.Scopes)
	case ch["scope"] != "":
		scopes = strings.Fields(ch["scope"])
	case d.prm != nil && len(d.prm.ScopesSupported) > 0:
		scopes = slices.Clone(d.prm.ScopesSupported)
	}
	if sameKey {
		// Keep what was asked before, so that a step-up does not lose the
		// permissions other operations need.
		scopes = union(prevScopes, scopes)
	}
	if !t.opts.NoOfflineAccess && len(scopes) > 0 && slices.Contains(d.as.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	c, err := t.client(ctx, d)
	if err != nil {
		return nil, err
	}
	tok, err := t.authorizationCode(ctx, d, c, scopes)
	if err != nil {
		return nil, err
	}
	if err := t.store.SaveToken(ctx, key, tok); err != nil {
		return nil, err
	}
	t.set(d, key, tok, scopes)
	return tok, nil
}

// refreshWith refreshes tok at d's authorization server and keeps the
// result. The caller holds t.flow.
func (t *Transport) refreshWith(ctx context.Context, d *discovery, tok *Token) (*Token, error) {
	c, err := t.client(ctx, d)
	if err != nil {
		return nil, err
	}
	nt, err := t.refresh(ctx, d, c, tok)
	if err != nil {
		return nil, err
	}
	key := Key{Issuer: d.issuer, Resource: d.resource}
	if err := t.store.SaveToken(ctx, key, nt); err != nil {
		return nil, err
	}
	t.mu.Lock()
	prev := t.requested
	t.mu.Unlock()
	t.set(d, key, nt, prev)
	return nt, nil
}

func (t *Transport) set(d *discovery, key Key, tok *Token, scopes []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.disc, t.key, t.token, t.requested = d, key, tok, scopes
}

// union returns a followed by the elements of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
