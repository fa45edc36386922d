package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Grants for Options.Grant.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// AuthMethodPrivateKeyJWT is client authentication with a JWT signed by the
// client's key (RFC 7523 Section 2.2); see Options.ClientKey.
const AuthMethodPrivateKeyJWT = "private_key_jwt"

const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// ErrAssertion: no JWT authorization grant could be obtained for
// GrantJWTBearer.
var ErrAssertion = errors.New("auth: no authorization grant assertion")

// AssertionRequest is what an AssertionFunc is asked for: a JWT
// authorization grant for the authorization server Issuer, to access
// Resource with Scopes.
type AssertionRequest struct {
	Issuer        string
	TokenEndpoint string
	Resource      string
	Scopes        []string
}

// AssertionFunc returns the assertion of a JWT bearer grant (RFC 7523
// Section 2.1). It is called for every token request of the grant, so that
// it can return a fresh one; its errors should not carry secrets.
type AssertionFunc func(ctx context.Context, r AssertionRequest) (string, error)

// StaticAssertion returns an AssertionFunc that always returns assertion,
// such as a workload identity token its platform keeps fresh on disk
// (read it again per call to follow rotations instead).
func StaticAssertion(assertion string) AssertionFunc {
	return func(context.Context, AssertionRequest) (string, error) { return assertion, nil }
}

// obtain gets a token with the configured grant.
func (t *Transport) obtain(ctx context.Context, d *discovery, scopes []string) (*Token, error) {
	switch t.opts.Grant {
	case "", GrantAuthorizationCode:
		return t.authorizationCode(ctx, d, scopes)
	case GrantJWTBearer, GrantClientCredentials:
	default:
		return nil, fmt.Errorf("auth: unsupported grant %q", t.opts.Grant)
	}
	c, err := t.client(ctx, d)
	if err != nil {
		return nil, err
	}
	switch t.opts.Grant {
	case GrantClientCredentials:
		form := url.Values{"grant_type": {GrantClientCredentials}, "resource": {d.resource}}
		if len(scopes) > 0 {
			form.Set("scope", strings.Join(scopes, " "))
		}
		return t.tokenRequest(ctx, d, c, form, nil)
	case GrantJWTBearer:
		if t.opts.Assertion == nil {
			return nil, fmt.Errorf("%w: no Assertion configured", ErrAssertion)
		}
		a, err := t.opts.Assertion(ctx, AssertionRequest{Issuer: d.issuer, TokenEndpoint: d.as.TokenEndpoint, Resource: d.resource, Scopes: scopes})
		if err != nil {
			return nil, err
		}
		if a == "" {
			return nil, fmt.Errorf("%w: the assertion is empty", ErrAssertion)
		}
		form := url.Values{"grant_type": {GrantJWTBearer}, "assertion": {a}, "resource": {d.resource}}
		if len(scopes) > 0 {
			form.Set("scope", strings.Join(scopes, " "))
		}
		return t.tokenRequest(ctx, d, c, form, nil)
	}
	return nil, fmt.Errorf("auth: unsupported grant %q", t.opts.Grant)
}

// clientAssertion returns a fresh private_key_jwt client assertion for c at
// d's authorization server: iss and sub are the client_id, aud the issuer
// identifier (as draft-ietf-oauth-rfc7523bis requires), valid for a minute.
func (t *Transport) clientAssertion(d *discovery, c *ClientInfo) (string, error) {
	now := t.now()
	claims := map[string]any{
		"iss": c.ClientID,
		"sub": c.ClientID,
		"aud": d.issuer,
		"jti": randomString(16),
		"iat": now.Unix(),
		"exp": now.Add(time.Minute).Unix(),
	}
	return signJWTKid(t.opts.ClientKey, t.opts.ClientKeyID, claims)
}

// Token types of RFC 8693 used by enterprise-managed authorization.
const (
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
	grantTokenExch   = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// IDJAGConfig configures IDJAGAssertion: the enterprise identity provider
// where the user signed in, and the client's registration there.
type IDJAGConfig struct {
	// TokenEndpoint is the identity provider's token endpoint.
	TokenEndpoint string
	// ClientID and ClientSecret are the client's credentials at the
	// identity provider; the secret, when set, goes in HTTP Basic
	// (client_secret_basic), else client_id goes in the form.
	ClientID     string
	ClientSecret string
	// IDToken returns the user's ID token from the identity provider
	// (the subject of the exchange).
	IDToken func(ctx context.Context) (string, error)
	// HTTPClient sends the exchange; nil means a client with a 30-second
	// timeout over http.DefaultTransport. The exchange never follows a
	// redirect (a copy of the client is used; it is not changed).
	HTTPClient *http.Client
}

// IDJAGAssertion returns an AssertionFunc for enterprise-managed
// authorization: it exchanges the user's ID token at the identity provider
// for an Identity Assertion JWT Authorization Grant (ID-JAG) for the
// authorization server and resource (RFC 8693 token exchange, with
// requested_token_type id-jag), which GrantJWTBearer then redeems at the
// MCP server's authorization server.
func IDJAGAssertion(cfg IDJAGConfig) AssertionFunc {
	return func(ctx context.Context, r AssertionRequest) (string, error) {
		if cfg.IDToken == nil || cfg.TokenEndpoint == "" {
			return "", fmt.Errorf("%w: the identity provider is not configured", ErrAssertion)
		}
		idt, err := cfg.IDToken(ctx)
		if err != nil {
			return "", err
		}
		form := url.Values{
			"grant_type":           {grantTokenExch},
			"requested_token_type": {TokenTypeIDJAG},
			"audience":             {r.Issuer},
			"resource":             {r.Resource},
			"subject_token":        {idt},
			"subject_token_type":   {TokenTypeIDToken},
		}
		if len(r.Scopes) > 0 {
			form.Set("scope", strings.Join(r.Scopes, " "))
		}
		if cfg.ClientSecret == "" && cfg.ClientID != "" {
			form.Set("client_id", cfg.ClientID)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.TokenEndpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return "", fmt.Errorf("%w: invalid identity provider token endpoint", ErrAssertion)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if cfg.ClientSecret != "" {
			req.SetBasicAuth(url.QueryEscape(cfg.ClientID), url.QueryEscape(cfg.ClientSecret))
		}
		hc := cfg.HTTPClient
		if hc == nil {
			hc = &http.Client{Timeout: 30 * time.Second}
		}
		// The exchange carries the user's ID token: it is never re-sent
		// where a redirect points.
		resp, err := noRedirects(hc).Do(req)
		if err != nil {
			return "", fmt.Errorf("%w: token exchange: %w", ErrAssertion, stripURL(err))
		}
		defer resp.Body.Close()
		if isRedirect(resp) {
			return "", fmt.Errorf("%w: the identity provider answered %d, a redirect, which is not followed", ErrAssertion, resp.StatusCode)
		}
		var out struct {
			AccessToken     string `json:"access_token"`
			IssuedTokenType string `json:"issued_token_type"`
			Error           string `json:"error"`
		}
		derr := readJSON(resp.Body, &out)
		if resp.StatusCode/100 != 2 {
			return "", fmt.Errorf("%w: the identity provider answered %d %s", ErrAssertion, resp.StatusCode, safeCode(out.Error))
		}
		if derr != nil || out.AccessToken == "" {
			return "", fmt.Errorf("%w: the identity provider returned no token", ErrAssertion)
		}
		if out.IssuedTokenType != TokenTypeIDJAG {
			return "", fmt.Errorf("%w: the identity provider issued %s, not an ID-JAG", ErrAssertion, safeCode(out.IssuedTokenType))
		}
		return out.AccessToken, nil
	}
}
