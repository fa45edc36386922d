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
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// JWTVerifier validates JWT access tokens (RFC 9068) signed by one
// authorization server. Set Issuer and Resource; the rest has defaults.
// Its methods may be called concurrently; do not change its fields once
// it is in use.
type JWTVerifier struct {
	// Issuer is the authorization server's issuer identifier; the iss
	// claim must equal it exactly. Required.
	Issuer string
	// Resource is the canonical URL of the protected resource; the aud
	// claim must contain it. Required.
	Resource string
	// JWKSURL is the issuer's key set; when "", it is the jwks_uri of the
	// issuer's metadata (RFC 8414, then OpenID Connect Discovery).
	JWKSURL string
	// Algorithms the token may be signed with; default RS256, PS256,
	// ES256, ES384, EdDSA. "none" and symmetric algorithms are refused.
	Algorithms []jose.SignatureAlgorithm
	// Leeway allowed on exp and nbf; default 30 seconds.
	Leeway time.Duration
	// RequireATJWT requires the typ header of RFC 9068 ("at+jwt"). Many
	// authorization servers send "JWT"; by default typ may be absent, JWT
	// or at+jwt, and any other typ (an ID token's, a DPoP proof's, ...) is
	// refused.
	RequireATJWT bool
	// KeySetTTL is how long a fetched key set is used before it is fetched
	// again; default 1 hour.
	KeySetTTL time.Duration
	// MinRefreshInterval is the least time between the end of one fetch
	// of the key set and the start of the next, when tokens naming
	// unknown keys (or a stale set) ask for it; default 10 seconds.
	MinRefreshInterval time.Duration
	// FetchTimeout bounds one fetch of the metadata and key set; default
	// 10 seconds. A fetch runs on its own, one at a time, whatever becomes
	// of the request that started it; a token whose key is known is never
	// made to wait for it, and one naming an unknown key waits for it at
	// most this long.
	FetchTimeout time.Duration
	// DPoP checks the proofs of DPoP-bound tokens; nil uses a checker of
	// this verifier's own.
	DPoP *DPoPChecker
	// HTTPClient fetches the metadata and keys; default
	// http.DefaultClient (FetchTimeout bounds each fetch either way).
	HTTPClient *http.Client
	// Now is the clock of the tokens' exp and nbf; default time.Now.
	Now func() time.Time

	mu       sync.Mutex
	jwksURL  string
	keys     *jose.JSONWebKeySet // never changed once published
	keysAt   time.Time           // when keys was fetched
	endedAt  time.Time           // when the last fetch ended, well or not
	inflight *keyFetch           // the fetch under way, or nil
	fetches  int
	dpop     DPoPChecker
}

// keyFetch is a fetch of the key set under way; done is closed when it
// ends, err set before.
type keyFetch struct {
	done chan struct{}
	err  error
}

var defaultJWTAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.ES256, jose.ES384, jose.EdDSA}

func (v *JWTVerifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *JWTVerifier) client() *http.Client {
	if v.HTTPClient != nil {
		return v.HTTPClient
	}
	return http.DefaultClient
}

func (v *JWTVerifier) checker() *DPoPChecker {
	if v.DPoP != nil {
		return v.DPoP
	}
	return &v.dpop
}

// Verify implements Verifier.
func (v *JWTVerifier) Verify(ctx context.Context, token string, req *http.Request) (*Principal, error) {
	if v.Issuer == "" || v.Resource == "" {
		return nil, errors.New("resource: JWTVerifier needs Issuer and Resource")
	}
	algs := v.Algorithms
	if len(algs) == 0 {
		algs = defaultJWTAlgorithms
	}
	if strings.Count(token, ".") != 2 {
		return nil, invalid("not a JWS compact serialization")
	}
	jws, err := jose.ParseSigned(token, algs)
	if err != nil {
		return nil, invalid("malformed token or algorithm not allowed")
	}
	if len(jws.Signatures) != 1 {
		return nil, invalid("want one signature")
	}
	h := jws.Signatures[0].Protected
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	switch strings.ToLower(typ) {
	case "at+jwt", "application/at+jwt":
	case "", "jwt":
		if v.RequireATJWT {
			return nil, invalid("typ is not at+jwt")
		}
	default:
		return nil, invalid("typ %q is not an access token's", typ)
	}
	keys, err := v.keysFor(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, err
	}
	var payload []byte
	for _, k := range keys {
		if payload, err = jws.Verify(k); err == nil {
			break
		}
	}
	if payload == nil {
		return nil, invalid("signature does not verify")
	}
	c, err := decodeClaims(payload)
	if err != nil {
		return nil, invalid("malformed claims")
	}
	if iss, _ := c.str("iss"); iss != v.Issuer {
		return nil, invalid("issuer mismatch")
	}
	if !slices.Contains(c.strings("aud"), v.Resource) {
		return nil, invalid("audience does not include this resource")
	}
	leeway := v.Leeway
	if leeway == 0 {
		leeway = 30 * time.Second
	}
	exp, err := c.checkTimes(v.now(), leeway, true)
	if err != nil {
		return nil, err
	}
	p := c.principal(exp)
	if err := checkBinding(v.checker(), p, token, v.Resource, req); err != nil {
		return nil, err
	}
	return p, nil
}

// keysFor returns the keys that may have signed a token with kid and
// alg. A known key is returned at once; a stale set is refreshed in the
// background meanwhile. A token naming an unknown key starts a fetch
// (at most one at a time, at most one per MinRefreshInterval) and waits
// for it, at most FetchTimeout or until ctx ends.
func (v *JWTVerifier) keysFor(ctx context.Context, kid, alg string) ([]*jose.JSONWebKey, error) {
	ttl := v.KeySetTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	v.mu.Lock()
	now := time.Now()
	if v.keys != nil {
		if keys := matchKeys(v.keys, kid, alg); len(keys) > 0 {
			if now.Sub(v.keysAt) >= ttl {
				v.refreshLocked(ctx, now)
			}
			v.mu.Unlock()
			return keys, nil
		}
	}
	f := v.refreshLocked(ctx, now)
	had := v.keys != nil
	v.mu.Unlock()
	if f == nil {
		if !had {
			return nil, errors.New("resource: the issuer's keys could not be fetched; retrying later")
		}
		return nil, invalid("no key of the issuer matches the token's kid")
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("resource: waiting for the issuer's keys: %w", context.Cause(ctx))
	}
	v.mu.Lock()
	keys := matchKeys(v.keys, kid, alg)
	v.mu.Unlock()
	if len(keys) > 0 {
		return keys, nil
	}
	if f.err != nil {
		return nil, f.err
	}
	return nil, invalid("no key of the issuer matches the token's kid")
}

// refreshLocked returns the fetch under way or starts one, unless the
// last one ended less than MinRefreshInterval ago (then it returns nil).
// The fetch runs on a goroutine of its own, bounded by FetchTimeout, with
// ctx's values but not its cancellation. v.mu is held.
func (v *JWTVerifier) refreshLocked(ctx context.Context, now time.Time) *keyFetch {
	if v.inflight != nil {
		return v.inflight
	}
	minRefresh := v.MinRefreshInterval
	if minRefresh <= 0 {
		minRefresh = 10 * time.Second
	}
	if !v.endedAt.IsZero() && now.Sub(v.endedAt) < minRefresh {
		return nil
	}
	timeout := v.FetchTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	f := &keyFetch{done: make(chan struct{})}
	v.inflight = f
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	jwksURL := v.jwksURL
	go func() {
		defer cancel()
		set, u, err := v.fetch(fctx, jwksURL)
		v.mu.Lock()
		defer v.mu.Unlock()
		if u != "" {
			v.jwksURL = u
		}
		if err == nil {
			v.keys, v.keysAt = set, time.Now()
			v.fetches++
		}
		f.err = err
		v.endedAt = time.Now()
		v.inflight = nil
		close(f.done)
	}()
	return f
}

// fetch fetches the key set, discovering its URL first when jwksURL is
// "". It returns the URL it used.
func (v *JWTVerifier) fetch(ctx context.Context, jwksURL string) (set *jose.JSONWebKeySet, u string, err error) {
	defer func() {
		if r := recover(); r != nil {
			set, err = nil, fmt.Errorf("resource: fetching the issuer's keys: panic: %v", r)
		}
	}()
	u = jwksURL
	if u == "" {
		u = v.JWKSURL
	}
	if u == "" {
		if u, err = discoverJWKS(ctx, v.client(), v.Issuer); err != nil {
			return nil, "", err
		}
	}
	set = new(jose.JSONWebKeySet)
	if err := getJSON(ctx, v.client(), u, set); err != nil {
		return nil, u, fmt.Errorf("resource: fetching the issuer's keys: %w", err)
	}
	return set, u, nil
}

func matchKeys(set *jose.JSONWebKeySet, kid, alg string) []*jose.JSONWebKey {
	if set == nil {
		return nil
	}
	var out []*jose.JSONWebKey
	for i := range set.Keys {
		k := &set.Keys[i]
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		if !k.IsPublic() {
			continue
		}
		out = append(out, k)
	}
	return out
}

// keySetFetches returns how many times the key set was fetched (tests).
func (v *JWTVerifier) keySetFetches() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.fetches
}

// MetadataURLs returns the URLs where the metadata of issuer is looked
// for, in order: RFC 8414 (path inserted), then OpenID Connect Discovery
// (path inserted, as RFC 8414 section 5 describes, then appended).
func MetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}

func discoverJWKS(ctx context.Context, hc *http.Client, issuer string) (string, error) {
	var errs []error
	for _, mu := range MetadataURLs(issuer) {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := getJSON(ctx, hc, mu, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		if md.Issuer != issuer {
			return "", fmt.Errorf("resource: metadata at %s names issuer %q", mu, md.Issuer)
		}
		if md.JWKSURI == "" {
			return "", fmt.Errorf("resource: metadata at %s has no jwks_uri", mu)
		}
		return md.JWKSURI, nil
	}
	return "", fmt.Errorf("resource: no metadata for issuer %s: %w", issuer, errors.Join(errs...))
}

type statusError struct {
	url    string
	status int
}

func (e *statusError) Error() string { return fmt.Sprintf("GET %s: status %d", e.url, e.status) }

func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return &statusError{u, resp.StatusCode}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(b) > maxDocument {
		return fmt.Errorf("GET %s: the document exceeds %d bytes", u, maxDocument)
	}
	// One policy for peer-sent JSON: exact names, no repeated member.
	if err := jsonrpc.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// maxDocument bounds the metadata and key set documents fetched.
const maxDocument = 1 << 20
