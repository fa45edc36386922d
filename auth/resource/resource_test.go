package resource

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcpkit/mcpkit/server"
)

const testResource = "https://mcp.example.com/mcp"

// dpopKey is the client's DPoP key of the tests.
type dpopKey struct {
	priv *ecdsa.PrivateKey
	jkt  string
}

func newDPoPKey(t *testing.T) *dpopKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := (&jose.JSONWebKey{Key: &k.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &dpopKey{priv: k, jkt: base64.RawURLEncoding.EncodeToString(tp)}
}

// proof signs a DPoP proof for method, htu and token.
func (k *dpopKey) proof(t *testing.T, method, htu, token string, iat time.Time) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.priv},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(token))
	jti := make([]byte, 12)
	rand.Read(jti)
	payload, _ := json.Marshal(map[string]any{
		"jti": base64.RawURLEncoding.EncodeToString(jti),
		"htm": method, "htu": htu, "iat": iat.Unix(),
		"ath": base64.RawURLEncoding.EncodeToString(sum[:]),
	})
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func request(method, scheme, token, proof string) *http.Request {
	r := httptest.NewRequest(method, testResource, nil)
	if token != "" {
		r.Header.Set("Authorization", scheme+" "+token)
	}
	if proof != "" {
		r.Header.Set("DPoP", proof)
	}
	return r
}

// wantInvalid checks that err is an invalid-token error (or, with
// sentinel, that one) mentioning what, and that it does not contain token.
func wantInvalid(t *testing.T, err error, sentinel error, what, token string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error (%s), got none", what)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("error %q is not %v", err, sentinel)
	}
	if !strings.Contains(err.Error(), what) {
		t.Errorf("error %q does not mention %q", err, what)
	}
	if token != "" && strings.Contains(err.Error(), token) {
		t.Errorf("error contains the token")
	}
}

func TestJWTVerifierZitadel(t *testing.T) {
	ctx := context.Background()
	dk := newDPoPKey(t)
	p := startProvider(t, testResource, dk.jkt)
	verifier := func() *JWTVerifier { return &JWTVerifier{Issuer: p.issuer, Resource: testResource} }

	t.Run("valid", func(t *testing.T) {
		tok := p.token(t, svcJWT, scopeRead, scopeWrite)
		pr, err := verifier().Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		if err != nil {
			t.Fatal(err)
		}
		if pr.Subject != svcJWT || pr.ClientID != svcJWT || pr.Issuer != p.issuer || !pr.HasScopes(scopeRead, scopeWrite) || pr.JKT != "" {
			t.Errorf("principal %+v", pr)
		}
		if d := time.Until(pr.Expiry); d < 4*time.Minute || d > 6*time.Minute {
			t.Errorf("expiry in %v, want about 5 minutes", d)
		}
		if pr.Claims["jti"] == nil || !slices.Contains(pr.Audience, testResource) {
			t.Errorf("claims %v", pr.Claims)
		}
	})

	t.Run("expired", func(t *testing.T) {
		tok := p.token(t, svcJWT, scopeRead)
		v := verifier()
		v.Now = func() time.Time { return time.Now().Add(5*time.Minute + 31*time.Second) }
		_, err := v.Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "expired", tok)
		// Within the leeway it is still good.
		v = verifier()
		v.Now = func() time.Time { return time.Now().Add(5*time.Minute + 10*time.Second) }
		if _, err := v.Verify(ctx, tok, request("POST", "Bearer", tok, "")); err != nil {
			t.Errorf("within the leeway: %v", err)
		}
	})

	t.Run("wrong issuer", func(t *testing.T) {
		tok := p.token(t, svcJWT, scopeRead)
		v := verifier()
		v.Issuer = p.issuer + "/tenant"
		v.JWKSURL = p.jwksURL // the same keys: only iss differs
		_, err := v.Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "issuer", tok)
	})

	t.Run("wrong audience", func(t *testing.T) {
		tok := p.token(t, svcOther, scopeRead)
		_, err := verifier().Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "audience", tok)
	})

	t.Run("algorithm not allowed", func(t *testing.T) {
		tok := p.token(t, svcJWT, scopeRead)
		v := verifier()
		v.Algorithms = []jose.SignatureAlgorithm{jose.ES256}
		_, err := v.Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "algorithm", tok)
	})

	t.Run("tampered", func(t *testing.T) {
		tok := p.token(t, svcJWT, scopeRead)
		parts := strings.Split(tok, ".")
		claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
		claims = []byte(strings.Replace(string(claims), scopeRead, scopeWrite, 1))
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(claims) + "." + parts[2]
		_, err := verifier().Verify(ctx, forged, request("POST", "Bearer", forged, ""))
		wantInvalid(t, err, ErrInvalidToken, "signature", forged)
	})

	t.Run("DPoP", func(t *testing.T) {
		tok := p.token(t, svcDPoP, scopeRead)
		v := verifier()
		good := dk.proof(t, "POST", testResource, tok, time.Now())
		pr, err := v.Verify(ctx, tok, request("POST", "DPoP", tok, good))
		if err != nil {
			t.Fatalf("good proof: %v", err)
		}
		if pr.JKT != dk.jkt {
			t.Errorf("jkt %q, want %q", pr.JKT, dk.jkt)
		}
		_, err = v.Verify(ctx, tok, request("POST", "DPoP", tok, good))
		wantInvalid(t, err, ErrInvalidDPoPProof, "replayed", tok)

		_, err = v.Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "DPoP-bound token sent with the bearer scheme", tok)
		_, err = v.Verify(ctx, tok, request("POST", "DPoP", tok, ""))
		wantInvalid(t, err, ErrInvalidDPoPProof, "exactly one DPoP header", tok)
		_, err = v.Verify(ctx, tok, request("POST", "DPoP", tok, dk.proof(t, "GET", testResource, tok, time.Now())))
		wantInvalid(t, err, ErrInvalidDPoPProof, "htm", tok)
		_, err = v.Verify(ctx, tok, request("POST", "DPoP", tok, dk.proof(t, "POST", "https://mcp.example.com/other", tok, time.Now())))
		wantInvalid(t, err, ErrInvalidDPoPProof, "htu", tok)
		_, err = v.Verify(ctx, tok, request("POST", "DPoP", tok, dk.proof(t, "POST", testResource, "another token", time.Now())))
		wantInvalid(t, err, ErrInvalidDPoPProof, "ath", tok)
		_, err = v.Verify(ctx, tok, request("POST", "DPoP", tok, dk.proof(t, "POST", testResource, tok, time.Now().Add(-10*time.Minute))))
		wantInvalid(t, err, ErrInvalidDPoPProof, "iat", tok)
		other := newDPoPKey(t)
		_, err = v.Verify(ctx, tok, request("POST", "DPoP", tok, other.proof(t, "POST", testResource, tok, time.Now())))
		wantInvalid(t, err, ErrInvalidDPoPProof, "cnf.jkt", tok)
		// A bearer token presented with the DPoP scheme.
		bearer := p.token(t, svcJWT, scopeRead)
		_, err = v.Verify(ctx, bearer, request("POST", "DPoP", bearer, dk.proof(t, "POST", testResource, bearer, time.Now())))
		wantInvalid(t, err, ErrInvalidToken, "not DPoP-bound", bearer)
		// A fresh proof for GET of the same URL is good.
		if _, err := v.Verify(ctx, tok, request("GET", "DPoP", tok, dk.proof(t, "GET", testResource, tok, time.Now()))); err != nil {
			t.Errorf("second good proof: %v", err)
		}
	})

	// Runs last: it rotates the provider's keys.
	t.Run("unknown kid after key rotation", func(t *testing.T) {
		before := p.token(t, svcJWT, scopeRead)
		fast, slow := verifier(), verifier()
		fast.MinRefreshInterval = time.Millisecond
		slow.MinRefreshInterval = time.Hour
		for _, v := range []*JWTVerifier{fast, slow} {
			if _, err := v.Verify(ctx, before, request("POST", "Bearer", before, "")); err != nil {
				t.Fatal(err)
			}
		}
		p.st.rotate(t)
		after := p.token(t, svcJWT, scopeRead)
		if hdr := strings.Split(after, ".")[0]; hdr == strings.Split(before, ".")[0] {
			t.Fatal("the provider did not sign with the new key")
		}
		time.Sleep(5 * time.Millisecond)
		pr, err := fast.Verify(ctx, after, request("POST", "Bearer", after, ""))
		if err != nil {
			t.Fatalf("after rotation: %v", err)
		}
		if pr.Subject != svcJWT {
			t.Errorf("principal %+v", pr)
		}
		if n := fast.keySetFetches(); n != 2 {
			t.Errorf("%d key set fetches, want 2", n)
		}
		// The rate limit: no refetch within MinRefreshInterval.
		for range 3 {
			_, err = slow.Verify(ctx, after, request("POST", "Bearer", after, ""))
			wantInvalid(t, err, ErrInvalidToken, "kid", after)
		}
		if n := slow.keySetFetches(); n != 1 {
			t.Errorf("rate-limited verifier: %d key set fetches, want 1", n)
		}
		// Tokens signed with the old key still verify.
		if _, err := fast.Verify(ctx, before, request("POST", "Bearer", before, "")); err != nil {
			t.Errorf("old key: %v", err)
		}
	})
}

func TestIntrospectionVerifierZitadel(t *testing.T) {
	ctx := context.Background()
	dk := newDPoPKey(t)
	p := startProvider(t, testResource, dk.jkt)
	verifier := func() *IntrospectionVerifier {
		return &IntrospectionVerifier{Endpoint: p.introspectURL, ClientID: rsClientID, ClientSecret: rsSecret, Resource: testResource, Issuer: p.issuer}
	}

	t.Run("active", func(t *testing.T) {
		tok := p.token(t, svcOpaque, scopeRead, scopeWrite)
		if strings.Count(tok, ".") == 2 {
			t.Fatalf("want an opaque token")
		}
		pr, err := verifier().Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		if err != nil {
			t.Fatal(err)
		}
		if pr.Subject != svcOpaque || pr.ClientID != svcOpaque || !pr.HasScopes(scopeRead, scopeWrite) || pr.Expiry.IsZero() || pr.Claims["active"] != true {
			t.Errorf("principal %+v", pr)
		}
	})

	t.Run("inactive", func(t *testing.T) {
		// A JWT for the resource whose audience lacks mcp-rs: the provider
		// answers active: false to the resource server.
		tok := p.token(t, svcJWT, scopeRead)
		_, err := verifier().Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "not active", tok)
		// A string that is no token at all.
		_, err = verifier().Verify(ctx, "not-a-token", request("POST", "Bearer", "not-a-token", ""))
		wantInvalid(t, err, ErrInvalidToken, "not active", "not-a-token")
	})

	t.Run("wrong audience", func(t *testing.T) {
		tok := p.token(t, svcOpaqueRS, scopeRead)
		_, err := verifier().Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "audience", tok)
	})

	t.Run("bad client credentials", func(t *testing.T) {
		tok := p.token(t, svcOpaque, scopeRead)
		v := verifier()
		v.ClientSecret = "wrong"
		_, err := v.Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "status 401", tok)
	})

	t.Run("expired", func(t *testing.T) {
		tok := p.token(t, svcOpaque, scopeRead)
		v := verifier()
		v.Now = func() time.Time { return time.Now().Add(6 * time.Minute) }
		_, err := v.Verify(ctx, tok, request("POST", "Bearer", tok, ""))
		wantInvalid(t, err, ErrInvalidToken, "expired", tok)
	})

	t.Run("unreachable", func(t *testing.T) {
		v := verifier()
		v.Endpoint = "http://127.0.0.1:1/introspect"
		_, err := v.Verify(ctx, "tok-123", request("POST", "Bearer", "tok-123", ""))
		if err == nil || errors.Is(err, ErrInvalidToken) || strings.Contains(err.Error(), "tok-123") {
			t.Errorf("unreachable endpoint: %v", err)
		}
	})
}

// TestDPoPReplayCacheNeverForgetsLiveProofs: a full replay cache, or a
// key at its share of it, refuses new proofs (ErrBusy) instead of
// forgetting live ones; expired proofs make room; jti are a key's own.
func TestDPoPReplayCacheNeverForgetsLiveProofs(t *testing.T) {
	d := &DPoPChecker{ReplayCacheSize: 4, ReplayCachePerKey: 2}
	now := time.Now()
	exp := now.Add(time.Minute)
	busy := func(err error, what string) {
		t.Helper()
		if !errors.Is(err, ErrBusy) || errors.Is(err, ErrInvalidDPoPProof) {
			t.Errorf("%s: %v, want ErrBusy", what, err)
		}
	}
	for _, p := range [][2]string{{"A", "1"}, {"A", "2"}, {"B", "1"}} {
		if err := d.remember(p[0], p[1], exp, now); err != nil {
			t.Fatalf("%v refused: %v", p, err)
		}
	}
	busy(d.remember("A", "3", exp, now), "a key's third proof")
	if err := d.remember("B", "2", exp.Add(time.Minute), now); err != nil {
		t.Fatalf("B 2: %v", err)
	}
	busy(d.remember("C", "1", exp, now), "a new key's proof, the cache full")
	for _, p := range [][2]string{{"A", "1"}, {"A", "2"}, {"B", "1"}, {"B", "2"}} {
		if err := d.remember(p[0], p[1], exp, now); !errors.Is(err, ErrInvalidDPoPProof) {
			t.Errorf("replay of %v with the cache full: %v", p, err)
		}
	}
	// Past the first three's expiry, they make room; B 2 is still live.
	later := exp.Add(time.Second)
	if err := d.remember("C", "1", later.Add(time.Minute), later); err != nil {
		t.Errorf("after expiry: %v", err)
	}
	if err := d.remember("B", "2", later.Add(time.Minute), later); !errors.Is(err, ErrInvalidDPoPProof) {
		t.Errorf("replay of the live B 2: %v", err)
	}
	if d.len() != 2 {
		t.Errorf("%d entries, want 2", d.len())
	}
	// The default share of one key is a tenth of the cache.
	d = &DPoPChecker{ReplayCacheSize: 20}
	for i := range 3 {
		err := d.remember("A", fmt.Sprint(i), exp, now)
		if i < 2 && err != nil {
			t.Errorf("proof %d: %v", i, err)
		}
		if i == 2 {
			busy(err, "a key's proof beyond a tenth of the cache")
		}
	}
}

// TestDPoPReplayAfterFlood: the attack on a cache that forgets when full
// (capture a proof, flood the cache with fresh proofs, replay it) fails.
func TestDPoPReplayAfterFlood(t *testing.T) {
	d := &DPoPChecker{ReplayCacheSize: 30}
	victim, attacker := newDPoPKey(t), newDPoPKey(t)
	check := func(k *dpopKey, token, proof string) error {
		r := request("POST", "DPoP", token, proof)
		return d.Check(r, token, k.jkt, testResource)
	}
	captured := victim.proof(t, "POST", testResource, "victim-token", time.Now())
	if err := check(victim, "victim-token", captured); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for range 60 {
		err := check(attacker, "attacker-token", attacker.proof(t, "POST", testResource, "attacker-token", time.Now()))
		if errors.Is(err, ErrBusy) {
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if refused != 57 {
		t.Errorf("%d of the attacker's 60 proofs refused, want 57 (a tenth of the cache is 3)", refused)
	}
	wantInvalid(t, check(victim, "victim-token", captured), ErrInvalidDPoPProof, "replayed", "")
	// The victim's fresh proofs are still taken.
	if err := check(victim, "victim-token", victim.proof(t, "POST", testResource, "victim-token", time.Now())); err != nil {
		t.Errorf("a fresh proof of another key: %v", err)
	}
}

func TestProtectZitadel(t *testing.T) {
	dk := newDPoPKey(t)
	p := startProvider(t, testResource, dk.jkt)
	type seen struct {
		principal string
		scopes    []string
		scopesSet bool
		p         *Principal
	}
	var got seen
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.principal = server.PrincipalFrom(r.Context())
		got.scopes, got.scopesSet = server.ScopesFrom(r.Context())
		got.p = PrincipalFrom(r.Context())
		io.WriteString(w, "inner "+r.Method)
	})
	h := Protect(inner, &Options{
		Resource:             testResource,
		AuthorizationServers: []string{p.issuer},
		Verifier:             &JWTVerifier{Issuer: p.issuer, Resource: testResource},
		RequiredScopes:       []string{scopeRead},
		ScopesSupported:      []string{scopeRead, scopeWrite},
		DPoPAlgorithms:       []string{"ES256"},
	})
	const mdURL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	const chal = `resource_metadata="` + mdURL + `", scope="` + scopeRead + `"`

	serve := func(r *http.Request) *httptest.ResponseRecorder {
		got = seen{}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	t.Run("metadata", func(t *testing.T) {
		if h.MetadataURL() != mdURL {
			t.Errorf("MetadataURL %q", h.MetadataURL())
		}
		check := func(w *httptest.ResponseRecorder) {
			t.Helper()
			if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("metadata: %d %v", w.Code, w.Header())
			}
			var md map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &md); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{
				"resource":                          testResource,
				"authorization_servers":             []any{p.issuer},
				"scopes_supported":                  []any{scopeRead, scopeWrite},
				"bearer_methods_supported":          []any{"header"},
				"dpop_signing_alg_values_supported": []any{"ES256"},
			}
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(md)
			if string(wj) != string(gj) {
				t.Errorf("metadata %s, want %s", gj, wj)
			}
		}
		check(serve(httptest.NewRequest("GET", mdURL, nil)))
		// Mounted at the root of a mux, the endpoint elsewhere.
		mux := http.NewServeMux()
		mux.Handle(h.MetadataPath(), h.MetadataHandler())
		mux.Handle("/mcp", h)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", mdURL, nil))
		check(w)
	})

	t.Run("no token", func(t *testing.T) {
		for _, m := range []string{"POST", "GET", "DELETE"} {
			w := serve(httptest.NewRequest(m, testResource, nil))
			if w.Code != 401 || w.Header().Get("WWW-Authenticate") != "Bearer "+chal {
				t.Errorf("%s: %d %q", m, w.Code, w.Header().Get("WWW-Authenticate"))
			}
			if got.p != nil {
				t.Errorf("%s reached the inner handler", m)
			}
		}
	})

	t.Run("bad token", func(t *testing.T) {
		tok := p.token(t, svcOther, scopeRead)
		w := serve(request("POST", "Bearer", tok, ""))
		wa := w.Header().Get("WWW-Authenticate")
		if w.Code != 401 || !strings.HasPrefix(wa, "Bearer "+chal+`, error="invalid_token", error_description="`) || strings.Contains(wa, tok) {
			t.Errorf("%d %q", w.Code, wa)
		}
	})

	t.Run("insufficient scope", func(t *testing.T) {
		tok := p.token(t, svcJWT, scopeWrite)
		w := serve(request("POST", "Bearer", tok, ""))
		wa := w.Header().Get("WWW-Authenticate")
		if w.Code != 403 || !strings.HasPrefix(wa, "Bearer "+chal+`, error="insufficient_scope"`) {
			t.Errorf("%d %q", w.Code, wa)
		}
	})

	t.Run("token in the query or form", func(t *testing.T) {
		tok := p.token(t, svcJWT, scopeRead)
		w := serve(httptest.NewRequest("GET", testResource+"?access_token="+url.QueryEscape(tok), nil))
		if w.Code != 400 || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_request"`) || got.p != nil {
			t.Errorf("query: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
		}
		r := httptest.NewRequest("POST", testResource, strings.NewReader(url.Values{"access_token": {tok}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w = serve(r)
		if w.Code != 400 || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_request"`) || got.p != nil {
			t.Errorf("form: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
		}
	})

	t.Run("principal reaches the inner handler", func(t *testing.T) {
		tok := p.token(t, svcJWT, scopeRead, scopeWrite)
		for _, m := range []string{"POST", "GET", "DELETE"} {
			w := serve(request(m, "Bearer", tok, ""))
			if w.Code != 200 || w.Body.String() != "inner "+m {
				t.Fatalf("%s: %d %s", m, w.Code, w.Body)
			}
			if got.principal != p.issuer+"#sub="+svcJWT || !got.scopesSet || !slices.Equal(got.scopes, []string{scopeRead, scopeWrite}) {
				t.Errorf("%s: server context: %+v", m, got)
			}
			if got.p == nil || got.p.Subject != svcJWT || got.p.ClientID != svcJWT || got.p.Expiry.IsZero() || got.p.Claims["iss"] != p.issuer {
				t.Errorf("%s: principal %+v", m, got.p)
			}
		}
	})

	t.Run("DPoP", func(t *testing.T) {
		tok := p.token(t, svcDPoP, scopeRead)
		proof := dk.proof(t, "POST", testResource, tok, time.Now())
		if w := serve(request("POST", "DPoP", tok, proof)); w.Code != 200 || got.p == nil || got.p.JKT != dk.jkt {
			t.Fatalf("good proof: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
		}
		w := serve(request("POST", "DPoP", tok, proof))
		wa := w.Header().Get("WWW-Authenticate")
		if w.Code != 401 || !strings.HasPrefix(wa, "DPoP "+chal+`, algs="ES256", error="invalid_dpop_proof"`) || got.p != nil {
			t.Errorf("replayed proof: %d %q", w.Code, wa)
		}
	})
}

// sharedReplay is a ReplayCache two checkers share, as replicas share one
// in Redis.
type sharedReplay struct {
	mu   sync.Mutex
	used map[string]bool
	fail bool
}

func (s *sharedReplay) Use(ctx context.Context, id string, expires time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return false, errors.New("unreachable")
	}
	if s.used[id] {
		return false, nil
	}
	s.used[id] = true
	return true, nil
}

// TestDPoPSharedReplayCache: a proof one replica accepted is refused as
// replayed by another that shares the replay cache; a cache that fails
// refuses proofs as busy.
func TestDPoPSharedReplayCache(t *testing.T) {
	shared := &sharedReplay{used: map[string]bool{}}
	a, b := &DPoPChecker{Replay: shared}, &DPoPChecker{Replay: shared}
	k := newDPoPKey(t)
	proof := k.proof(t, "POST", testResource, "tok", time.Now())
	if err := a.Check(request("POST", "DPoP", "tok", proof), "tok", k.jkt, testResource); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, b.Check(request("POST", "DPoP", "tok", proof), "tok", k.jkt, testResource), ErrInvalidDPoPProof, "replayed", "")
	shared.fail = true
	err := b.Check(request("POST", "DPoP", "tok", k.proof(t, "POST", testResource, "tok", time.Now())), "tok", k.jkt, testResource)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("with the cache failing: %v, want ErrBusy", err)
	}
}
