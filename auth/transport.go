package auth

import (
	"context"
	"crypto"
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
	// back; "" means http://127.0.0.1/callback. With a RedirectListener
	// (LoopbackAuthorizer) a URL without a port gets the port the listener
	// picks, and a dynamic registration registers that exact URL and
	// keeps it (ClientInfo.RedirectURI): later authorizations listen on
	// the same port, and register again only when it cannot be had.
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
	// means a client over Base with a 30-second timeout. It is used
	// through copies with a redirect policy of their own (it is not
	// changed): requests that carry client credentials, codes or tokens
	// (registration, token) never follow a redirect, and metadata
	// requests follow one only to an HTTPS URL (or plain HTTP on
	// loopback), before its own CheckRedirect, if any, is asked.
	HTTPClient *http.Client
	// MaxAttempts bounds the authorizations (and refreshes) one request
	// may trigger, step-ups included; 0 means 3.
	MaxAttempts int
	// Logger receives debug records of the flow, never secrets; nil means
	// none.
	Logger *slog.Logger

	// Grant is how tokens are obtained: "" or GrantAuthorizationCode for
	// the interactive flow (Authorizer), GrantClientCredentials for a
	// client acting on its own behalf (client credentials extension),
	// GrantJWTBearer for a JWT authorization grant (RFC 7523) from
	// Assertion. The non-interactive grants need no Authorizer and never
	// ask for offline_access.
	Grant string
	// ClientKey, when set, authenticates the client at the token endpoint
	// with private_key_jwt (RFC 7523 Section 2.2): a short-lived assertion
	// (iss and sub ClientID, aud the issuer) signed with it, ES256 for a
	// P-256 key. It takes precedence over ClientSecret. ClientKeyID, when
	// set, is the assertion's kid.
	ClientKey   crypto.Signer
	ClientKeyID string
	// Assertion supplies the JWT authorization grant for GrantJWTBearer:
	// a workload identity token (StaticAssertion) or an identity assertion
	// authorization grant from an enterprise IdP (IDJAGAssertion).
	Assertion AssertionFunc
	// DPoP sender-constrains tokens (RFC 9449): token requests carry a
	// DPoP proof, and tokens the authorization server binds (token_type
	// DPoP) are sent as "Authorization: DPoP" with a proof bound to them;
	// server nonces are honored. DPoPKey is the proof key; nil means a
	// P-256 key generated for this Transport. Setting DPoPKey implies DPoP.
	DPoP    bool
	DPoPKey crypto.Signer
}

// Transport is an http.RoundTripper that authorizes the requests to one MCP
// server; see the package documentation.
type Transport struct {
	opts  Options
	base  http.RoundTripper
	hc    *http.Client // metadata: redirects to secure URLs only
	post  *http.Client // registration and token requests: no redirects
	store TokenStore
	now   func() time.Time

	dpop    *dpop // nil without DPoP
	initErr error // a key Options gave that cannot be used

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
	hc := t.opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: t.base, Timeout: 30 * time.Second}
	}
	t.hc, t.post = metadataClient(hc), noRedirects(hc)
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
	if t.opts.DPoP || t.opts.DPoPKey != nil {
		t.dpop, t.initErr = newDPoP(t.opts.DPoPKey, func() time.Time { return t.now() })
	}
	if t.initErr == nil && t.opts.ClientKey != nil {
		_, t.initErr = signingAlg(t.opts.ClientKey)
	}
	return t
}

func (t *Transport) debug(ctx context.Context, msg string, args ...any) {
	if t.opts.Logger != nil {
		t.opts.Logger.DebugContext(ctx, msg, args...)
	}
}

// currentToken returns the token to send and the resource it was obtained
// for, refreshed first when it has expired and can be; nil when there is
// none.
func (t *Transport) currentToken(ctx context.Context) (*Token, string) {
	t.mu.Lock()
	tok, d, resource := t.token, t.disc, t.key.Resource
	t.mu.Unlock()
	if tok == nil || tok.usable(t.now()) {
		return tok, resource
	}
	if tok.RefreshToken == "" || d == nil {
		return nil, ""
	}
	t.flow.Lock()
	defer t.flow.Unlock()
	t.mu.Lock()
	cur, resource := t.token, t.key.Resource
	t.mu.Unlock()
	if cur != tok {
		return cur, resource // refreshed meanwhile
	}
	nt, err := t.refreshWith(ctx, d, tok)
	if err != nil {
		t.debug(ctx, "auth: refresh failed", "err", err)
		return nil, ""
	}
	return nt, d.resource
}

// RoundTrip implements http.RoundTripper: it sends req with the current
// access token and, on 401 or on 403 insufficient_scope, authorizes and
// sends it again, at most MaxAttempts times. With DPoP, a use_dpop_nonce
// challenge is answered once more with the server's nonce.
//
// The token (and its DPoP proof) is sent only to the origin of the
// resource it was obtained for. A request that follows a redirect to
// another origin than the one the client was sent to (an http.Client sets
// its Response) is sent as it is, without Authorization or DPoP headers,
// and its answer returned: no authorization starts there.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.initErr != nil {
		return nil, t.initErr
	}
	if foreignRedirect(req) {
		if req.Header.Get("Authorization") == "" && req.Header.Get("DPoP") == "" {
			return t.base.RoundTrip(req)
		}
		r := req.Clone(req.Context())
		r.Header.Del("Authorization")
		r.Header.Del("DPoP")
		return t.base.RoundTrip(r)
	}
	ctx := req.Context()
	tok, resource := t.currentToken(ctx)
	hasBody := req.Body != nil && req.Body != http.NoBody
	nonceRetried := false
	for sent, attempt := 0, 0; ; sent++ {
		r := req.Clone(ctx)
		if sent > 0 && hasBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		var with *Token // the token sent, if any
		if tok != nil && mayCarry(r.URL, resource) {
			with = tok
			if tok.dpopBound() && t.dpop != nil {
				r.Header.Set("Authorization", "DPoP "+tok.AccessToken)
				if err := t.dpop.sign(r, tok); err != nil {
					return nil, err
				}
			} else {
				r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			}
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			if t.dpop != nil {
				t.dpop.observe(r.URL, resp, "")
			}
			return resp, nil
		}
		canResend := !hasBody || req.GetBody != nil
		if t.dpop != nil && with.dpopBound() && resp.StatusCode == http.StatusUnauthorized {
			retry := t.dpop.observe(r.URL, resp, dpopParams(resp.Header)["error"])
			if retry && !nonceRetried && canResend {
				nonceRetried = true
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
				resp.Body.Close()
				continue
			}
		}
		ch := authParams(resp.Header)
		stepUp := resp.StatusCode == http.StatusForbidden
		if stepUp && ch["error"] != "insufficient_scope" {
			return resp, nil
		}
		if attempt >= t.opts.MaxAttempts || !canResend {
			return resp, nil
		}
		attempt++
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		tok, resource, err = t.authorize(ctx, req, stepUp, ch, with)
		if err != nil {
			return nil, err
		}
		nonceRetried = false
	}
}

// authorize obtains a new token after a 401 (or a 403 insufficient_scope
// when stepUp) answered a request sent with failed (nil: without a token).
func (t *Transport) authorize(ctx context.Context, req *http.Request, stepUp bool, ch map[string]string, failed *Token) (*Token, string, error) {
	t.flow.Lock()
	defer t.flow.Unlock()
	t.mu.Lock()
	cur, curResource := t.token, t.key.Resource
	t.mu.Unlock()
	if !stepUp && cur != nil && cur != failed && cur.usable(t.now()) && mayCarry(req.URL, curResource) {
		return cur, curResource, nil // another request authorized meanwhile
	}
	tok, err := t.authorizeLocked(ctx, req, stepUp, ch, failed)
	if err != nil {
		return nil, "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return tok, t.key.Resource, nil
}

// authorizeLocked is authorize past its shortcut; the caller holds t.flow.
func (t *Transport) authorizeLocked(ctx context.Context, req *http.Request, stepUp bool, ch map[string]string, failed *Token) (*Token, error) {
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
				// Adopted from the store (another process, an earlier
				// run): what it was granted is what a step-up keeps.
				prevScopes = strings.Fields(stored.Scope)
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
	if stepUp && failed != nil {
		// And what the refused token was granted, wherever it came from.
		scopes = union(strings.Fields(failed.Scope), scopes)
	}
	if t.opts.Grant == "" || t.opts.Grant == GrantAuthorizationCode {
		if !t.opts.NoOfflineAccess && len(scopes) > 0 && slices.Contains(d.as.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
			scopes = append(scopes, "offline_access")
		}
	}
	tok, err := t.obtain(ctx, d, scopes)
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
	if t.key != key {
		prev = nil
	}
	t.mu.Unlock()
	if len(prev) == 0 {
		prev = strings.Fields(nt.Scope)
	}
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
