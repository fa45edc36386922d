package resource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// IntrospectionVerifier validates access tokens by asking the
// authorization server's introspection endpoint (RFC 7662), as a client
// authenticated with client_secret_basic. A token the server answers
// active: false for, or with any status but 200, is invalid.
type IntrospectionVerifier struct {
	// Endpoint is the introspection endpoint URL. Required.
	Endpoint string
	// ClientID and ClientSecret authenticate the resource server at the
	// endpoint (client_secret_basic). Required.
	ClientID, ClientSecret string
	// Resource is the canonical URL of the protected resource; when the
	// response has aud, it must contain it. Required.
	Resource string
	// RequireAudience refuses responses without aud.
	RequireAudience bool
	// Issuer, when set, must equal the response's iss when it has one.
	Issuer string
	// Leeway allowed on exp and nbf; default 30 seconds.
	Leeway time.Duration
	// DPoP checks the proofs of DPoP-bound tokens; nil uses a checker of
	// this verifier's own.
	DPoP *DPoPChecker
	// HTTPClient calls the endpoint; default http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time

	dpop DPoPChecker
}

// Verify implements Verifier.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string, req *http.Request) (*Principal, error) {
	if v.Endpoint == "" || v.Resource == "" {
		return nil, errors.New("resource: IntrospectionVerifier needs Endpoint and Resource")
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, v.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("resource: introspection request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hreq.Header.Set("Accept", "application/json")
	// RFC 6749 section 2.3.1: the credentials are form-encoded first.
	hreq.SetBasicAuth(url.QueryEscape(v.ClientID), url.QueryEscape(v.ClientSecret))
	hc := v.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		// The url.Error names the endpoint, not the form: no token in it.
		return nil, fmt.Errorf("resource: introspection: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("resource: introspection: reading the response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, invalid("introspection answered status %d", resp.StatusCode)
	}
	c, err := decodeClaims(body)
	if err != nil {
		return nil, invalid("malformed introspection response")
	}
	if active, _ := c["active"].(bool); !active {
		return nil, invalid("token is not active")
	}
	if v.Issuer != "" {
		if iss, ok := c.str("iss"); ok && iss != v.Issuer {
			return nil, invalid("issuer mismatch")
		}
	}
	if aud := c.strings("aud"); len(aud) > 0 || v.RequireAudience {
		if !slices.Contains(aud, v.Resource) {
			return nil, invalid("audience does not include this resource")
		}
	}
	leeway := v.Leeway
	if leeway == 0 {
		leeway = 30 * time.Second
	}
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	exp, err := c.checkTimes(now, leeway, false)
	if err != nil {
		return nil, err
	}
	p := c.principal(exp)
	d := v.DPoP
	if d == nil {
		d = &v.dpop
	}
	if err := checkBinding(d, p, token, v.Resource, req); err != nil {
		return nil, err
	}
	return p, nil
}
