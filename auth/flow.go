package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Token endpoint authentication methods.
const (
	AuthMethodBasic = "client_secret_basic"
	AuthMethodPost  = "client_secret_post"
	AuthMethodNone  = "none"
)

// randomString returns n random bytes, base64url without padding.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// pkce returns a code verifier and its S256 challenge (RFC 7636).
func pkce() (verifier, challenge string) {
	verifier = randomString(32) // 43 characters
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// chooseAuthMethod picks how to authenticate at the token endpoint among
// what the authorization server supports (RFC 8414: client_secret_basic
// when it does not say).
func chooseAuthMethod(supported []string, hasSecret bool) string {
	if !hasSecret {
		return AuthMethodNone
	}
	if len(supported) == 0 {
		return AuthMethodBasic
	}
	for _, m := range []string{AuthMethodBasic, AuthMethodPost, AuthMethodNone} {
		if slices.Contains(supported, m) {
			return m
		}
	}
	return AuthMethodBasic
}

// client returns the client identity to use at d's authorization server,
// in the specification's order: pre-registered credentials, a Client ID
// Metadata Document, a stored or new dynamic registration.
func (t *Transport) client(ctx context.Context, d *discovery) (*ClientInfo, error) {
	if t.opts.ClientID != "" {
		if t.opts.ClientIssuer != "" && t.opts.ClientIssuer != d.issuer {
			return nil, fmt.Errorf("%w: the pre-registered client belongs to %s, the server now uses %s", ErrIssuerMismatch, t.opts.ClientIssuer, d.issuer)
		}
		if t.opts.ClientKey != nil {
			return &ClientInfo{ClientID: t.opts.ClientID, AuthMethod: AuthMethodPrivateKeyJWT}, nil
		}
		return &ClientInfo{ClientID: t.opts.ClientID, ClientSecret: t.opts.ClientSecret,
			AuthMethod: chooseAuthMethod(d.as.TokenEndpointAuthMethodsSupported, t.opts.ClientSecret != "")}, nil
	}
	if t.opts.ClientMetadataURL != "" && d.as.ClientIDMetadataDocumentSupported {
		return &ClientInfo{ClientID: t.opts.ClientMetadataURL, AuthMethod: AuthMethodNone}, nil
	}
	stored, err := t.store.LoadClient(ctx, d.issuer)
	if err != nil {
		return nil, err
	}
	if stored != nil {
		return stored, nil
	}
	if d.as.RegistrationEndpoint == "" {
		return nil, ErrNoRegistration
	}
	c, err := t.register(ctx, d, t.opts.RedirectURL)
	if err != nil {
		return nil, err
	}
	if err := t.store.SaveClient(ctx, d.issuer, c); err != nil {
		return nil, err
	}
	return c, nil
}

// redirect is where one authorization's redirect is received: the
// Authorizer to run and the redirect URI to send.
type redirect struct {
	authorizer Authorizer
	uri        string
	close      func()
}

// listen prepares the redirect at uri: a RedirectListener listens there
// (on the port uri names, else on one it picks); another Authorizer is
// used as it is, with uri.
func (t *Transport) listen(ctx context.Context, uri string) (*redirect, error) {
	l, ok := t.opts.Authorizer.(RedirectListener)
	if !ok {
		return &redirect{authorizer: t.opts.Authorizer, uri: uri, close: func() {}}, nil
	}
	p, err := l.Listen(ctx, uri)
	if err != nil {
		return nil, err
	}
	return &redirect{authorizer: p, uri: p.RedirectURL(), close: func() { _ = p.Close() }}, nil
}

// interactiveClient returns the client identity for the authorization code
// flow at d's authorization server and where its redirect is received.
//
// Authorization servers may compare redirect URIs exactly, port included,
// though RFC 8252 asks them to allow any port on loopback: a dynamic
// registration therefore registers the redirect URI with the port the
// listener got, and later authorizations of that registration listen on
// that same port. When the port cannot be had (or the registration does
// not say which URI it registered), the client registers again with a new
// one. Pre-registered clients and Client ID Metadata Documents use
// Options.RedirectURL.
func (t *Transport) interactiveClient(ctx context.Context, d *discovery) (*ClientInfo, *redirect, error) {
	if !t.registers(d) {
		c, err := t.client(ctx, d)
		if err != nil {
			return nil, nil, err
		}
		r, err := t.listen(ctx, t.opts.RedirectURL)
		if err != nil {
			return nil, nil, err
		}
		return c, r, nil
	}
	stored, err := t.store.LoadClient(ctx, d.issuer)
	if err != nil {
		return nil, nil, err
	}
	if stored != nil && stored.RedirectURI != "" && redirectFits(stored.RedirectURI, t.opts.RedirectURL) {
		r, err := t.listen(ctx, stored.RedirectURI)
		if err == nil {
			return stored, r, nil
		}
		if ctx.Err() != nil {
			return nil, nil, err
		}
		t.debug(ctx, "auth: the registered redirect URI cannot be used; registering again", "redirect_uri", stored.RedirectURI, "err", err)
	}
	if d.as.RegistrationEndpoint == "" {
		if stored == nil {
			return nil, nil, ErrNoRegistration
		}
		// No way to register again: the registration as it is.
		r, err := t.listen(ctx, t.opts.RedirectURL)
		if err != nil {
			return nil, nil, err
		}
		return stored, r, nil
	}
	r, err := t.listen(ctx, t.opts.RedirectURL)
	if err != nil {
		return nil, nil, err
	}
	c, err := t.register(ctx, d, r.uri)
	if err == nil {
		c.RedirectURI = r.uri
		err = t.store.SaveClient(ctx, d.issuer, c)
	}
	if err != nil {
		r.close()
		return nil, nil, err
	}
	return c, r, nil
}

// registers reports whether the client identity at d's authorization
// server comes from dynamic registration (not pre-registered credentials
// nor a Client ID Metadata Document).
func (t *Transport) registers(d *discovery) bool {
	return t.opts.ClientID == "" && (t.opts.ClientMetadataURL == "" || !d.as.ClientIDMetadataDocumentSupported)
}

// redirectFits reports whether the registered redirect URI serves for the
// configured one: the same, or, when the configured one names no port, the
// same with a port.
func redirectFits(registered, configured string) bool {
	if registered == configured {
		return true
	}
	r, err := url.Parse(registered)
	if err != nil {
		return false
	}
	c, err := url.Parse(configured)
	if err != nil || c.Port() != "" || r.Port() == "" {
		return false
	}
	rp, cp := r.EscapedPath(), c.EscapedPath()
	if rp == "" {
		rp = "/"
	}
	if cp == "" {
		cp = "/"
	}
	return r.Scheme == c.Scheme && strings.EqualFold(r.Hostname(), c.Hostname()) && rp == cp && r.RawQuery == c.RawQuery
}

// register performs dynamic client registration (RFC 7591) with
// redirectURI as the one redirect URI (none for the non-interactive
// grants).
func (t *Transport) register(ctx context.Context, d *discovery, redirectURI string) (*ClientInfo, error) {
	method := AuthMethodNone
	if sup := d.as.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !slices.Contains(sup, AuthMethodNone) || len(sup) == 0 && !d.as.defaults {
		method = chooseAuthMethod(sup, true)
	}
	appType := "web"
	if ru, err := url.Parse(redirectURI); err == nil && (isLoopback(ru) || ru.Scheme != "http" && ru.Scheme != "https") {
		appType = "native"
	}
	meta := map[string]any{
		"client_name":                t.opts.ClientName,
		"redirect_uris":              []string{redirectURI},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           appType,
	}
	if g := t.opts.Grant; g != "" && g != GrantAuthorizationCode {
		// A non-interactive client: no redirection (RFC 7591 Section 2).
		meta["grant_types"] = []string{g}
		meta["response_types"] = []string{}
		delete(meta, "redirect_uris")
	}
	body, _ := json.Marshal(meta)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := t.post.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: client registration: %w", err)
	}
	defer resp.Body.Close()
	if isRedirect(resp) {
		return nil, fmt.Errorf("%w: client registration answered %d, a redirect, which is not followed", ErrNoRegistration, resp.StatusCode)
	}
	var r struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
		Error        string `json:"error"`
	}
	derr := readJSON(resp.Body, &r)
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%w: client registration answered %d %s", ErrNoRegistration, resp.StatusCode, safeCode(r.Error))
	}
	if derr != nil || r.ClientID == "" {
		return nil, fmt.Errorf("%w: client registration returned no client_id", ErrNoRegistration)
	}
	c := &ClientInfo{ClientID: r.ClientID, ClientSecret: r.ClientSecret, AuthMethod: r.AuthMethod}
	if c.AuthMethod == "" {
		c.AuthMethod = method
	}
	if c.ClientSecret == "" {
		c.AuthMethod = AuthMethodNone
	}
	return c, nil
}

// safeCode keeps an OAuth error code only if it looks like one (RFC 6749
// restricts them to printable ASCII without quotes or backslashes), so that
// nothing else a server echoes ends up in an error.
func safeCode(code string) string {
	if len(code) > 64 {
		return ""
	}
	for _, c := range code {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == ' ' {
			return ""
		}
	}
	return code
}

// authorizationCode runs the authorization code flow with PKCE and returns
// the token.
func (t *Transport) authorizationCode(ctx context.Context, d *discovery, scopes []string) (*Token, error) {
	if t.opts.Authorizer == nil {
		return nil, fmt.Errorf("%w: no Authorizer configured", ErrAuthorizationResponse)
	}
	c, r, err := t.interactiveClient(ctx, d)
	if err != nil {
		return nil, err
	}
	defer r.close()
	authorizer, redirectURL := r.authorizer, r.uri
	verifier, challenge := pkce()
	state := randomString(24)
	au, err := url.Parse(d.as.AuthorizationEndpoint)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid authorization endpoint", ErrNoMetadata)
	}
	q := au.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ClientID)
	q.Set("redirect_uri", redirectURL)
	q.Set("code_challenge", challenge)
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	q.Set("resource", d.resource)
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	au.RawQuery = q.Encode()
	t.debug(ctx, "auth: authorization request", "endpoint", d.as.AuthorizationEndpoint, "scope", q.Get("scope"))
	redirected, err := authorizer.Authorize(ctx, au.String())
	if err != nil {
		return nil, err
	}
	ru, err := url.Parse(redirected)
	if err != nil {
		return nil, fmt.Errorf("%w: the redirect is not a URL", ErrAuthorizationResponse)
	}
	rq := ru.Query()
	// RFC 9207 Section 2.4, before anything else in the response is used:
	// a present iss must be the recorded issuer by simple string
	// comparison; an absent one is refused when the server advertised it.
	if iss, ok := rq["iss"]; ok {
		if len(iss) != 1 || iss[0] != d.issuer {
			return nil, fmt.Errorf("%w: the authorization response is not from %s", ErrIssuerMismatch, d.issuer)
		}
	} else if d.as.IssParameterSupported {
		return nil, fmt.Errorf("%w: iss is missing though %s advertises it", ErrAuthorizationResponse, d.issuer)
	}
	if rq.Get("state") != state {
		return nil, fmt.Errorf("%w: state does not match", ErrAuthorizationResponse)
	}
	if e := rq.Get("error"); e != "" {
		return nil, fmt.Errorf("%w: the authorization server answered %s", ErrAuthorizationResponse, safeCode(e))
	}
	code := rq.Get("code")
	if code == "" {
		return nil, fmt.Errorf("%w: no code", ErrAuthorizationResponse)
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURL},
		"code_verifier": {verifier},
		"resource":      {d.resource},
	}
	return t.tokenRequest(ctx, d, c, form, nil)
}

// refresh exchanges tok's refresh token for a new token.
func (t *Transport) refresh(ctx context.Context, d *discovery, c *ClientInfo, tok *Token) (*Token, error) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {tok.RefreshToken},
		"resource":      {d.resource},
	}
	return t.tokenRequest(ctx, d, c, form, tok)
}

// tokenRequest posts form to the token endpoint with the client's
// authentication (and a DPoP proof, answering a use_dpop_nonce challenge
// once). prev, when refreshing, gives the refresh token to keep if the
// server does not rotate it.
func (t *Transport) tokenRequest(ctx context.Context, d *discovery, c *ClientInfo, form url.Values, prev *Token) (*Token, error) {
	switch c.AuthMethod {
	case AuthMethodPost:
		form.Set("client_id", c.ClientID)
		form.Set("client_secret", c.ClientSecret)
	case AuthMethodBasic:
	case AuthMethodPrivateKeyJWT:
		form.Set("client_id", c.ClientID)
		form.Set("client_assertion_type", clientAssertionType)
	default:
		form.Set("client_id", c.ClientID)
	}
	t.debug(ctx, "auth: token request", "endpoint", d.as.TokenEndpoint, "grant_type", form.Get("grant_type"), "client", c, "dpop", t.dpop != nil)
	for try := 0; ; try++ {
		if c.AuthMethod == AuthMethodPrivateKeyJWT {
			a, err := t.clientAssertion(d, c)
			if err != nil {
				return nil, err
			}
			form.Set("client_assertion", a) // fresh jti per request
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.as.TokenEndpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return nil, fmt.Errorf("%w: invalid token endpoint", ErrTokenEndpoint)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if c.AuthMethod == AuthMethodBasic {
			// RFC 6749 Section 2.3.1: both form-encoded before Basic.
			req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
		}
		if t.dpop != nil {
			if err := t.dpop.sign(req, nil); err != nil {
				return nil, err
			}
		}
		resp, err := t.post.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTokenEndpoint, stripURL(err))
		}
		if isRedirect(resp) {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: %s answered %d, a redirect, which is not followed", ErrTokenEndpoint, d.as.TokenEndpoint, resp.StatusCode)
		}
		var r struct {
			AccessToken  string          `json:"access_token"`
			TokenType    string          `json:"token_type"`
			ExpiresIn    json.RawMessage `json:"expires_in"`
			RefreshToken string          `json:"refresh_token"`
			Scope        string          `json:"scope"`
			Error        string          `json:"error"`
		}
		derr := readJSON(resp.Body, &r)
		resp.Body.Close()
		if t.dpop != nil && t.dpop.observe(req.URL, resp, r.Error) && resp.StatusCode/100 != 2 && try == 0 {
			t.debug(ctx, "auth: token request answered use_dpop_nonce; retrying with the nonce")
			continue
		}
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%w: %s answered %d %s", ErrTokenEndpoint, d.as.TokenEndpoint, resp.StatusCode, safeCode(r.Error))
		}
		if derr != nil || r.AccessToken == "" {
			return nil, fmt.Errorf("%w: no access token in the response", ErrTokenEndpoint)
		}
		tok := &Token{AccessToken: r.AccessToken, TokenType: "Bearer", RefreshToken: r.RefreshToken, Scope: r.Scope}
		switch {
		case r.TokenType == "" || strings.EqualFold(r.TokenType, "Bearer"):
		case strings.EqualFold(r.TokenType, "DPoP") && t.dpop != nil:
			tok.TokenType = "DPoP"
		default:
			return nil, fmt.Errorf("%w: unsupported token type %s", ErrTokenEndpoint, safeCode(r.TokenType))
		}
		if secs, ok := expiresIn(r.ExpiresIn); ok {
			tok.Expiry = t.now().Add(time.Duration(secs * float64(time.Second)))
		}
		if tok.RefreshToken == "" && prev != nil {
			tok.RefreshToken = prev.RefreshToken
		}
		return tok, nil
	}
}

// maxExpiresIn bounds the lifetime a token response may announce (ten
// years): a larger expires_in is read as no expiry given.
const maxExpiresIn = 10 * 365 * 24 * 3600

// expiresIn reads a token response's expires_in (RFC 6749): a JSON number
// of seconds or, as some servers send it, a JSON string holding one, each
// read with jsonrpc.Unmarshal. ok is false when it is absent, malformed,
// not positive or implausibly large.
func expiresIn(raw json.RawMessage) (secs float64, ok bool) {
	if len(raw) == 0 {
		return 0, false
	}
	if jsonrpc.Unmarshal(raw, &secs) != nil {
		var s string
		if jsonrpc.Unmarshal(raw, &s) != nil || jsonrpc.Unmarshal([]byte(s), &secs) != nil {
			return 0, false
		}
	}
	return secs, secs > 0 && secs <= maxExpiresIn
}
