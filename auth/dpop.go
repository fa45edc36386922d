package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// dpopTyp is the typ header of a DPoP proof (RFC 9449 Section 4.2).
const dpopTyp = "dpop+jwt"

// dpop makes DPoP proofs (RFC 9449) with one key and remembers the nonces
// servers supply, per origin.
type dpop struct {
	key crypto.Signer
	now func() time.Time

	mu     sync.Mutex
	nonces map[string]string // origin -> last DPoP-Nonce
}

// newDPoP returns a proof maker over key, or over a new P-256 key (ES256)
// when key is nil.
func newDPoP(key crypto.Signer, now func() time.Time) (*dpop, error) {
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		key = k
	}
	if _, err := signingAlg(key); err != nil {
		return nil, err
	}
	return &dpop{key: key, now: now, nonces: map[string]string{}}, nil
}

// htu is the htu claim for u: the URI without query and fragment.
func htu(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment, c.User = "", false, "", "", nil
	return c.String()
}

// proof returns a fresh proof for a request with method to u, bound to
// accessToken (ath) when it is not "", with the origin's last nonce.
func (p *dpop) proof(method string, u *url.URL, accessToken string) (string, error) {
	claims := map[string]any{
		"jti": randomString(16),
		"htm": method,
		"htu": htu(u),
		"iat": p.now().Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	p.mu.Lock()
	if n := p.nonces[origin(u)]; n != "" {
		claims["nonce"] = n
	}
	p.mu.Unlock()
	return signJWT(p.key, dpopTyp, "", true, claims)
}

// sign sets the DPoP header of req (and Authorization, for tok).
func (p *dpop) sign(req *http.Request, tok *Token) error {
	at := ""
	if tok != nil {
		at = tok.AccessToken
	}
	proof, err := p.proof(req.Method, req.URL, at)
	if err != nil {
		return err
	}
	req.Header.Set("DPoP", proof)
	return nil
}

// observe keeps the DPoP-Nonce a response from u supplies and reports
// whether the response asks to retry with it: a use_dpop_nonce error with
// a nonce (RFC 9449 Sections 8 and 9). Callers retry once.
func (p *dpop) observe(u *url.URL, resp *http.Response, errCode string) (retry bool) {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" || len(n) > 1024 {
		return false
	}
	p.mu.Lock()
	p.nonces[origin(u)] = n
	p.mu.Unlock()
	return errCode == "use_dpop_nonce"
}

// authParams returns the parameters of the response's Bearer challenge, or
// else of its DPoP one (RFC 9449 Section 7.1), or an empty map.
func authParams(h http.Header) map[string]string {
	var dp map[string]string
	for _, c := range ParseChallenges(h.Values("WWW-Authenticate")) {
		switch {
		case strings.EqualFold(c.Scheme, "Bearer"):
			return c.Params
		case strings.EqualFold(c.Scheme, "DPoP") && dp == nil:
			dp = c.Params
		}
	}
	if dp == nil {
		return map[string]string{}
	}
	return dp
}

// dpopParams returns the parameters of the response's DPoP challenge, or
// nil.
func dpopParams(h http.Header) map[string]string {
	for _, c := range ParseChallenges(h.Values("WWW-Authenticate")) {
		if strings.EqualFold(c.Scheme, "DPoP") {
			return c.Params
		}
	}
	return nil
}

// dpopBound reports whether the token is DPoP-bound (token_type DPoP).
func (t *Token) dpopBound() bool {
	return t != nil && strings.EqualFold(t.TokenType, "DPoP")
}
