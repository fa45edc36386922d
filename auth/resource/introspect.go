package resource

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
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
	// CacheTTL, when positive, keeps an active token's answer for that
	// long (never past the token's exp), so that a client's requests do
	// not each cost a round trip to the authorization server; a token
	// revoked meanwhile is taken until then. 0 asks every time.
	CacheTTL time.Duration
	// CacheSize bounds the answers kept; 0 means 10,000. When full, the
	// expired ones go, else the one closest to its end.
	CacheSize int

	dpop  DPoPChecker
	mu    sync.Mutex
	cache map[[sha256.Size]byte]cached // by the token's SHA-256
}

// cached is a kept introspection answer.
type cached struct {
	p     *Principal
	until time.Time
}

// Verify implements Verifier.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string, req *http.Request) (*Principal, error) {
	if v.Endpoint == "" || v.Resource == "" {
		return nil, errors.New("resource: IntrospectionVerifier needs Endpoint and Resource")
	}
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	key := sha256.Sum256([]byte(token))
	p, ok := v.lookup(key, now)
	if !ok {
		var err error
		if p, err = v.introspect(ctx, token, now); err != nil {
			return nil, err
		}
		v.keep(key, p, now)
	}
	d := v.DPoP
	if d == nil {
		d = &v.dpop
	}
	// The proof is a request's own: checked every time, the answer kept
	// or not.
	if err := checkBinding(d, p, token, v.Resource, req); err != nil {
		return nil, err
	}
	return p, nil
}

// lookup returns a copy of the kept answer for the token, if it is still
// good at now.
func (v *IntrospectionVerifier) lookup(key [sha256.Size]byte, now time.Time) (*Principal, bool) {
	if v.CacheTTL <= 0 {
		return nil, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	c, ok := v.cache[key]
	if !ok || !now.Before(c.until) {
		return nil, false
	}
	p := *c.p
	return &p, true
}

// keep remembers an active token's answer for CacheTTL, never past its
// expiry, within CacheSize.
func (v *IntrospectionVerifier) keep(key [sha256.Size]byte, p *Principal, now time.Time) {
	if v.CacheTTL <= 0 {
		return
	}
	until := now.Add(v.CacheTTL)
	if !p.Expiry.IsZero() && p.Expiry.Before(until) {
		until = p.Expiry
	}
	if !now.Before(until) {
		return
	}
	size := v.CacheSize
	if size <= 0 {
		size = 10000
	}
	kept := *p
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cache == nil {
		v.cache = map[[sha256.Size]byte]cached{}
	}
	if _, ok := v.cache[key]; !ok && len(v.cache) >= size {
		var soonest [sha256.Size]byte
		var soonestAt time.Time
		for k, c := range v.cache {
			if !now.Before(c.until) {
				delete(v.cache, k)
				continue
			}
			if soonestAt.IsZero() || c.until.Before(soonestAt) {
				soonest, soonestAt = k, c.until
			}
		}
		if len(v.cache) >= size {
			delete(v.cache, soonest)
		}
	}
	v.cache[key] = cached{p: &kept, until: until}
}

// introspect asks the endpoint about the token and checks the answer.
func (v *IntrospectionVerifier) introspect(ctx context.Context, token string, now time.Time) (*Principal, error) {
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
	exp, err := c.checkTimes(now, leeway, false)
	if err != nil {
		return nil, err
	}
	p := c.principal(exp)
	if p.Issuer == "" {
		p.Issuer = v.Issuer
	}
	return p, nil
}
