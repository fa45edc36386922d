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
//
// Unknown tokens cost the authorization server a call each, so their
// calls are rate-limited (UnknownTokenRate) and refusals are kept for a
// while (NegativeCacheTTL); tokens seen active recently are not limited.
type IntrospectionVerifier struct {
	// Endpoint is the introspection endpoint URL. Required.
	Endpoint string
	// ClientID and ClientSecret authenticate the resource server at the
	// endpoint (client_secret_basic). Required.
	ClientID, ClientSecret string
	// Resource is the canonical URL of the protected resource; the
	// answer's aud must contain it. Required.
	Resource string
	// AllowMissingAudience accepts an active answer without aud. Only for
	// authorization servers that never send it, and then only when this
	// resource server is the sole audience of every token the server
	// issues: an answer without aud cannot tell a token issued for this
	// resource from one issued for another API of the same server (which
	// that API's operators, or anyone who captures it there, could then
	// replay here). By default such an answer is refused.
	AllowMissingAudience bool
	// Issuer, when set, must equal the response's iss when it has one,
	// and is the Principal's Issuer when it has none.
	Issuer string
	// Leeway allowed on exp and nbf; default 30 seconds.
	Leeway time.Duration
	// DPoP checks the proofs of DPoP-bound tokens; nil uses a checker of
	// this verifier's own.
	DPoP *DPoPChecker
	// HTTPClient calls the endpoint; default http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds one call of the endpoint; default 10 seconds.
	Timeout time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// CacheTTL, when positive, keeps an active token's answer for that
	// long (never past the token's exp), so that a client's requests do
	// not each cost a round trip to the authorization server; a token
	// revoked meanwhile is taken until then. 0 asks every time.
	CacheTTL time.Duration
	// CacheSize bounds the active tokens remembered, and apart from them
	// the refusals kept; 0 means 10,000 of each. When full, the expired
	// ones go, else the one closest to its end.
	CacheSize int
	// NegativeCacheTTL is how long the refusal of a token (inactive, for
	// another audience or issuer, expired) is kept and given again
	// without asking; default 10 seconds, negative to ask every time.
	NegativeCacheTTL time.Duration
	// UnknownTokenRate bounds the calls of the endpoint per second for
	// tokens not seen active (within their exp) and not refused
	// recently, in bursts of as many; default 20. Beyond it a request is
	// answered 503 (an error wrapping ErrBusy), so that a flood of made-up
	// tokens does not become a flood of introspection calls. Negative
	// turns the limit off.
	UnknownTokenRate float64

	dpop    DPoPChecker
	mu      sync.Mutex
	active  map[[sha256.Size]byte]activeToken  // by the token's SHA-256
	refused map[[sha256.Size]byte]refusedToken // by the token's SHA-256
	bucket  float64                            // calls allowed now for unknown tokens
	filled  time.Time                          // when bucket was last filled
}

// activeToken is a token seen active.
type activeToken struct {
	p     *Principal // the answer kept, nil without CacheTTL
	until time.Time  // the answer is used until then
	known time.Time  // the token is not rate-limited until then
}

// refusedToken is a refusal kept.
type refusedToken struct {
	err   error
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
	p, err := v.lookup(key, now)
	if err != nil {
		return nil, err
	}
	if p == nil {
		var cacheable bool
		if p, cacheable, err = v.introspect(ctx, token, now); err != nil {
			if cacheable {
				v.refuse(key, err, now)
			}
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

// lookup returns a copy of the kept answer for the token, or the kept
// refusal, or neither when the endpoint is to be asked; for a token not
// known active it takes a call from the rate limit, or fails with
// ErrBusy.
func (v *IntrospectionVerifier) lookup(key [sha256.Size]byte, now time.Time) (*Principal, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if a, ok := v.active[key]; ok && now.Before(a.known) {
		if a.p != nil && now.Before(a.until) {
			p := *a.p
			return &p, nil
		}
		return nil, nil
	}
	if r, ok := v.refused[key]; ok && now.Before(r.until) {
		return nil, r.err
	}
	rate := v.UnknownTokenRate
	if rate == 0 {
		rate = 20
	}
	if rate < 0 {
		return nil, nil
	}
	burst := max(rate, 1)
	if v.filled.IsZero() {
		v.bucket = burst
	} else if d := now.Sub(v.filled); d > 0 {
		v.bucket = min(burst, v.bucket+d.Seconds()*rate)
	}
	v.filled = now
	if v.bucket < 1 {
		return nil, fmt.Errorf("%w: too many introspections of unknown tokens", ErrBusy)
	}
	v.bucket--
	return nil, nil
}

// cacheSize returns the bound of each of the two maps.
func (v *IntrospectionVerifier) cacheSize() int {
	if v.CacheSize <= 0 {
		return 10000
	}
	return v.CacheSize
}

// keep remembers that a token is active (until its exp, or an hour
// without one) and, with CacheTTL, its answer (for CacheTTL, never past
// its expiry), within CacheSize.
func (v *IntrospectionVerifier) keep(key [sha256.Size]byte, p *Principal, now time.Time) {
	a := activeToken{known: now.Add(time.Hour)}
	if !p.Expiry.IsZero() {
		a.known = p.Expiry
	}
	if !now.Before(a.known) {
		return
	}
	if v.CacheTTL > 0 {
		a.until = now.Add(v.CacheTTL)
		if a.known.Before(a.until) {
			a.until = a.known
		}
		kept := *p
		a.p = &kept
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.refused, key)
	if v.active == nil {
		v.active = map[[sha256.Size]byte]activeToken{}
	}
	if _, ok := v.active[key]; !ok && len(v.active) >= v.cacheSize() {
		evict(v.active, now, func(a activeToken) time.Time { return a.known })
	}
	v.active[key] = a
}

// refuse keeps the refusal of a token for NegativeCacheTTL, within
// CacheSize, and forgets that it was active.
func (v *IntrospectionVerifier) refuse(key [sha256.Size]byte, err error, now time.Time) {
	ttl := v.NegativeCacheTTL
	if ttl == 0 {
		ttl = 10 * time.Second
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.active, key)
	if ttl < 0 {
		return
	}
	if v.refused == nil {
		v.refused = map[[sha256.Size]byte]refusedToken{}
	}
	if _, ok := v.refused[key]; !ok && len(v.refused) >= v.cacheSize() {
		evict(v.refused, now, func(r refusedToken) time.Time { return r.until })
	}
	v.refused[key] = refusedToken{err: err, until: now.Add(ttl)}
}

// evict makes room in m: it drops the entries that ended by now or,
// when none did, the one closest to its end.
func evict[E any](m map[[sha256.Size]byte]E, now time.Time, end func(E) time.Time) {
	n := len(m)
	var soonest [sha256.Size]byte
	var soonestAt time.Time
	for k, e := range m {
		at := end(e)
		if !now.Before(at) {
			delete(m, k)
			continue
		}
		if soonestAt.IsZero() || at.Before(soonestAt) {
			soonest, soonestAt = k, at
		}
	}
	if len(m) == n {
		delete(m, soonest)
	}
}

// introspect asks the endpoint about the token and checks the answer;
// cacheable tells a refusal of a decoded answer, which asking again would
// not change soon, from a failure to ask.
func (v *IntrospectionVerifier) introspect(ctx context.Context, token string, now time.Time) (p *Principal, cacheable bool, err error) {
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, v.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, false, fmt.Errorf("resource: introspection request: %w", err)
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
		return nil, false, fmt.Errorf("resource: introspection: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, false, fmt.Errorf("resource: introspection: reading the response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, invalid("introspection answered status %d", resp.StatusCode)
	}
	c, err := decodeClaims(body)
	if err != nil {
		return nil, false, invalid("malformed introspection response")
	}
	if active, _ := c["active"].(bool); !active {
		return nil, true, invalid("token is not active")
	}
	if v.Issuer != "" {
		if iss, ok := c.str("iss"); ok && iss != v.Issuer {
			return nil, true, invalid("issuer mismatch")
		}
	}
	switch aud := c.strings("aud"); {
	case len(aud) == 0 && !v.AllowMissingAudience:
		return nil, true, invalid("the introspection answer has no aud: the token may be for another resource")
	case len(aud) > 0 && !slices.Contains(aud, v.Resource):
		return nil, true, invalid("audience does not include this resource")
	}
	leeway := v.Leeway
	if leeway == 0 {
		leeway = 30 * time.Second
	}
	exp, err := c.checkTimes(now, leeway, false)
	if err != nil {
		return nil, true, err
	}
	p = c.principal(exp)
	if p.Issuer == "" {
		p.Issuer = v.Issuer
	}
	return p, false, nil
}
