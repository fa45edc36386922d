package resource

import (
	"container/list"
	"crypto"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
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
type DPoPChecker struct {
	// Algorithms the proof may be signed with; default ES256, ES384,
	// RS256, PS256, EdDSA. Symmetric algorithms are never accepted.
	Algorithms []jose.SignatureAlgorithm
	// MaxAge is how old a proof's iat may be; default 5 minutes.
	MaxAge time.Duration
	// Leeway is how far in the future a proof's iat may be; default 30s.
	Leeway time.Duration
	// ReplayCacheSize bounds the number of remembered jti; default 100000.
	// When full, the oldest entry is forgotten.
	ReplayCacheSize int
	// Now is the clock; default time.Now.
	Now func() time.Time

	mu    sync.Mutex
	seen  map[string]*list.Element
	order list.List // of replayEntry, oldest first
}

type replayEntry struct {
	jti     string
	expires time.Time
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
// (without query and fragment). Errors wrap ErrInvalidDPoPProof.
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
	if !d.remember(jti, iat.Add(maxAge+leeway), now) {
		return invalidProof("replayed proof")
	}
	return nil
}

// remember records jti until expires; it returns false when jti is
// already known.
func (d *DPoPChecker) remember(jti string, expires, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = make(map[string]*list.Element)
	}
	// Forget the expired entries from the front. Entries are in insertion
	// order, which is close to expiry order.
	for e := d.order.Front(); e != nil; e = d.order.Front() {
		re := e.Value.(replayEntry)
		if re.expires.After(now) {
			break
		}
		d.order.Remove(e)
		delete(d.seen, re.jti)
	}
	if e, ok := d.seen[jti]; ok {
		if e.Value.(replayEntry).expires.After(now) {
			return false
		}
		d.order.Remove(e)
		delete(d.seen, jti)
	}
	limit := d.ReplayCacheSize
	if limit <= 0 {
		limit = 100000
	}
	for d.order.Len() >= limit {
		e := d.order.Front()
		d.order.Remove(e)
		delete(d.seen, e.Value.(replayEntry).jti)
	}
	d.seen[jti] = d.order.PushBack(replayEntry{jti: jti, expires: expires})
	return true
}

// len returns the number of remembered proofs (for tests).
func (d *DPoPChecker) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.order.Len()
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
