package resource

import (
	"container/heap"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// DPoPChecker verifies DPoP proofs (RFC 9449 section 4.3) presented with
// sender-constrained access tokens, and remembers their jti to refuse a
// replayed proof. The zero value is ready to use; one checker must be
// shared by all the verifiers of a resource for the replay check to hold.
//
// A proof is remembered, by its key and jti, until it is too old to be
// accepted (its iat plus MaxAge and Leeway), and never forgotten before:
// when the replay cache holds ReplayCacheSize live proofs, or one key
// has ReplayCachePerKey of them, a new proof is refused with an error
// wrapping ErrBusy (Protect answers 503 with Retry-After) rather than
// making room. The cache thus takes at most ReplayCacheSize proofs per
// MaxAge+Leeway (about 300 a second with the defaults), and one key at
// most ReplayCachePerKey of them, so that one client cannot fill it for
// the others.
type DPoPChecker struct {
	// Algorithms the proof may be signed with; default ES256, ES384,
	// RS256, PS256, EdDSA. Symmetric algorithms are never accepted.
	Algorithms []jose.SignatureAlgorithm
	// MaxAge is how old a proof's iat may be; default 5 minutes.
	MaxAge time.Duration
	// Leeway is how far in the future a proof's iat may be; default 30s.
	Leeway time.Duration
	// ReplayCacheSize bounds the number of remembered proofs; default
	// 100000.
	ReplayCacheSize int
	// ReplayCachePerKey bounds the remembered proofs of one key (one
	// client); default a tenth of ReplayCacheSize.
	ReplayCachePerKey int
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Replay, when set, remembers the proofs instead of this checker's
	// own cache, so that replicas of a resource that share it refuse a
	// proof any of them accepted (ReplayCacheSize and ReplayCachePerKey
	// then do not apply: the shared cache forgets a proof when it expires,
	// MaxAge+Leeway after its iat). A *redis.Store's OnceStore (package
	// store/redis) is one. Its error refuses the proof with ErrBusy.
	Replay ReplayCache

	mu     sync.Mutex
	seen   map[string]struct{} // key and jti of the live proofs
	byKey  map[string]int      // live proofs per key
	expiry replayHeap          // the live proofs, soonest to expire first
}

// ReplayCache remembers used one-time ids until they expire, for
// DPoPChecker.Replay. Its method set is server.OnceStore's.
type ReplayCache interface {
	// Use records id as used until expires, reporting true the first time
	// and false on every later one.
	Use(ctx context.Context, id string, expires time.Time) (bool, error)
}

// replayEntry is a remembered proof.
type replayEntry struct {
	jkt, id string // id is jkt and jti
	expires time.Time
}

// replayHeap is a min-heap of remembered proofs by expiry.
type replayHeap []replayEntry

func (h replayHeap) Len() int           { return len(h) }
func (h replayHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h replayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *replayHeap) Push(x any)        { *h = append(*h, x.(replayEntry)) }
func (h *replayHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

var defaultDPoPAlgorithms = []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.RS256, jose.PS256, jose.EdDSA}

func (d *DPoPChecker) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Check verifies the DPoP proof of req for token, bound to the key whose
// JWK SHA-256 thumbprint is jkt. htu is the URL the request was sent to
// (without query and fragment). Errors wrap ErrInvalidDPoPProof, or
// ErrBusy when the replay cache has no room for the proof.
func (d *DPoPChecker) Check(req *http.Request, token, jkt, htu string) error {
	proofs := req.Header.Values("DPoP")
	if len(proofs) != 1 {
		return invalidProof("want exactly one DPoP header, got %d", len(proofs))
	}
	algs := d.Algorithms
	if len(algs) == 0 {
		algs = defaultDPoPAlgorithms
	}
	jws, err := jose.ParseSigned(proofs[0], algs)
	if err != nil {
		return invalidProof("malformed or disallowed algorithm")
	}
	if len(jws.Signatures) != 1 {
		return invalidProof("want one signature")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return invalidProof("typ is not dpop+jwt")
	}
	jwk := h.JSONWebKey
	if jwk == nil || !jwk.Valid() || !jwk.IsPublic() {
		return invalidProof("no public jwk in the header")
	}
	payload, err := jws.Verify(jwk)
	if err != nil {
		return invalidProof("bad signature")
	}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return invalidProof("jwk thumbprint")
	}
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(tp)), []byte(jkt)) != 1 {
		return invalidProof("key does not match the token's cnf.jkt")
	}
	c, err := decodeClaims(payload)
	if err != nil {
		return invalidProof("malformed claims")
	}
	jti, _ := c.str("jti")
	if jti == "" {
		return invalidProof("no jti")
	}
	if htm, _ := c.str("htm"); htm != req.Method {
		return invalidProof("htm does not match the request method")
	}
	pu, _ := c.str("htu")
	if !sameHTU(pu, htu) {
		return invalidProof("htu does not match the request URL")
	}
	sum := sha256.Sum256([]byte(token))
	if ath, _ := c.str("ath"); subtle.ConstantTimeCompare([]byte(ath), []byte(base64.RawURLEncoding.EncodeToString(sum[:]))) != 1 {
		return invalidProof("ath does not match the access token")
	}
	iat, ok, err := c.time("iat")
	if err != nil || !ok {
		return invalidProof("no iat")
	}
	maxAge, leeway := d.MaxAge, d.Leeway
	if maxAge <= 0 {
		maxAge = 5 * time.Minute
	}
	if leeway <= 0 {
		leeway = 30 * time.Second
	}
	now := d.now()
	if iat.Before(now.Add(-maxAge)) || iat.After(now.Add(leeway)) {
		return invalidProof("iat out of the accepted window")
	}
	if d.Replay != nil {
		// jkt is base64url: the space cannot be part of it.
		fresh, err := d.Replay.Use(req.Context(), "dpop:"+jkt+" "+jti, iat.Add(maxAge+leeway))
		switch {
		case err != nil:
			return fmt.Errorf("%w: the DPoP replay cache is unavailable; try again shortly", ErrBusy)
		case !fresh:
			return invalidProof("replayed proof")
		}
		return nil
	}
	return d.remember(jkt, jti, iat.Add(maxAge+leeway), now)
}

// remember records the proof jti of the key jkt until expires. It
// refuses a proof already remembered (ErrInvalidDPoPProof) and, without
// forgetting a live one, a proof the cache has no room for (ErrBusy).
func (d *DPoPChecker) remember(jkt, jti string, expires, now time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = make(map[string]struct{})
		d.byKey = make(map[string]int)
	}
	for len(d.expiry) > 0 && !d.expiry[0].expires.After(now) {
		e := heap.Pop(&d.expiry).(replayEntry)
		delete(d.seen, e.id)
		if d.byKey[e.jkt]--; d.byKey[e.jkt] <= 0 {
			delete(d.byKey, e.jkt)
		}
	}
	// jkt is base64url: the space cannot be part of it.
	id := jkt + " " + jti
	if _, ok := d.seen[id]; ok {
		return invalidProof("replayed proof")
	}
	limit := d.ReplayCacheSize
	if limit <= 0 {
		limit = 100000
	}
	perKey := d.ReplayCachePerKey
	if perKey <= 0 {
		perKey = max(limit/10, 1)
	}
	if len(d.expiry) >= limit {
		return fmt.Errorf("%w: the DPoP replay cache is full; try again shortly", ErrBusy)
	}
	if d.byKey[jkt] >= perKey {
		return fmt.Errorf("%w: too many DPoP proofs of this key; try again shortly", ErrBusy)
	}
	d.seen[id] = struct{}{}
	d.byKey[jkt]++
	heap.Push(&d.expiry, replayEntry{jkt: jkt, id: id, expires: expires})
	return nil
}

// len returns the number of remembered proofs (for tests).
func (d *DPoPChecker) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.expiry)
}

// sameHTU compares the htu of a proof with the request URL, ignoring
// query and fragment, case-insensitively in scheme and host (RFC 9449
// section 4.3, with RFC 3986 normalization of those parts).
func sameHTU(proof, want string) bool {
	p, err := url.Parse(proof)
	if err != nil {
		return false
	}
	w, err := url.Parse(want)
	if err != nil {
		return false
	}
	norm := func(u *url.URL) string {
		host := strings.ToLower(u.Host)
		scheme := strings.ToLower(u.Scheme)
		if scheme == "https" {
			host = strings.TrimSuffix(host, ":443")
		} else if scheme == "http" {
			host = strings.TrimSuffix(host, ":80")
		}
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		return scheme + "://" + host + path
	}
	return norm(p) == norm(w)
}

// requestHTU returns the URL a request was sent to, as a client names it:
// the origin of the canonical resource URL and the request's path (the
// request's own Host is not trusted behind a proxy).
func requestHTU(resource string, req *http.Request) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + req.URL.EscapedPath()
}

// authScheme returns the scheme of the request's Authorization header,
// lower-cased.
func authScheme(req *http.Request) string {
	s, _, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	return strings.ToLower(s)
}

// checkBinding enforces sender constraint for p: a token bound to a key
// (cnf.jkt) must come with the DPoP scheme and a valid proof; a token
// sent with the DPoP scheme must be bound (RFC 9449 section 7.1).
func checkBinding(d *DPoPChecker, p *Principal, token, resource string, req *http.Request) error {
	scheme := authScheme(req)
	if p.JKT == "" {
		if scheme == "dpop" {
			return invalid("DPoP scheme used with a token that is not DPoP-bound")
		}
		return nil
	}
	if scheme != "dpop" {
		return invalid("DPoP-bound token sent with the %s scheme", scheme)
	}
	if d == nil {
		return invalidProof("DPoP is not configured")
	}
	return d.Check(req, token, p.JKT, requestHTU(resource, req))
}
