package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// wrapAS puts h in front of the fake AS's own handler; h returns true when
// it answered.
func wrapAS(a *fakeAS, h func(w http.ResponseWriter, r *http.Request) bool) {
	a.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h(w, r) {
			a.serve(w, r)
		}
	})
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestClientCredentialsBasic(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.authMethods = []string{AuthMethodBasic}; a.noDCR = true })
	rs := newFakeRS(t, func() *fakeAS { return as }, func(s *fakeRS) { s.scopes = []string{"mcp"} })
	tr := NewTransport(&Options{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret"})
	resp, err := do(t, tr, rs)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resp %v, err %v", resp, err)
	}
	if len(as.authQs) != 0 || len(as.tokenReqs) != 1 {
		t.Fatalf("authorization requests %d, token requests %d", len(as.authQs), len(as.tokenReqs))
	}
	tr0 := as.tokenReqs[0]
	if g := tr0.form.Get("grant_type"); g != "client_credentials" {
		t.Fatalf("grant_type %q", g)
	}
	if tr0.basic != [2]string{"svc", "s3cret"} || tr0.form.Has("client_secret") {
		t.Fatalf("client authentication %v %v", tr0.basic, tr0.form)
	}
	if tr0.form.Get("resource") != rs.srv.URL+"/mcp" || tr0.form.Get("scope") != "mcp" {
		t.Fatalf("form %v", tr0.form)
	}
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	key := newKey(t)
	as := newFakeAS(t, func(a *fakeAS) { a.authMethods = []string{AuthMethodPrivateKeyJWT}; a.noDCR = true })
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	tr := NewTransport(&Options{Grant: GrantClientCredentials, ClientID: "svc", ClientKey: key, ClientKeyID: "k1"})
	if _, err := do(t, tr, rs); err != nil {
		t.Fatal(err)
	}
	f := as.tokenReqs[0].form
	if f.Get("grant_type") != "client_credentials" || f.Get("client_assertion_type") != clientAssertionType {
		t.Fatalf("form %v", f)
	}
	tok, err := jwt.ParseSigned(f.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Headers[0].KeyID != "k1" {
		t.Fatalf("kid %q", tok.Headers[0].KeyID)
	}
	var c jwt.Claims
	if err := tok.Claims(&key.PublicKey, &c); err != nil {
		t.Fatal(err)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: "svc", Subject: "svc", AnyAudience: jwt.Audience{as.url()}, Time: time.Now()}, 0); err != nil {
		t.Fatal(err)
	}
	if c.ID == "" || c.Expiry == nil {
		t.Fatalf("claims %+v", c)
	}
}

func TestJWTBearer(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.authMethods = []string{AuthMethodNone}; a.noDCR = true })
	fail := false
	wrapAS(as, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/token" && fail {
			as.mu.Lock()
			_ = r.ParseForm()
			as.tokenReqs = append(as.tokenReqs, &tokenReq{form: r.PostForm})
			as.mu.Unlock()
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"bad ` + r.PostForm.Get("assertion") + `"}`))
			return true
		}
		return false
	})
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	var got AssertionRequest
	tr := NewTransport(&Options{Grant: GrantJWTBearer, ClientID: "wl", Assertion: func(ctx context.Context, r AssertionRequest) (string, error) {
		got = r
		return "workload-jwt", nil
	}})
	if _, err := do(t, tr, rs); err != nil {
		t.Fatal(err)
	}
	f := as.tokenReqs[0].form
	if f.Get("grant_type") != GrantJWTBearer || f.Get("assertion") != "workload-jwt" || f.Get("client_id") != "wl" {
		t.Fatalf("form %v", f)
	}
	if got.Issuer != as.url() || got.Resource != rs.srv.URL+"/mcp" {
		t.Fatalf("assertion request %+v", got)
	}

	// A refused grant is an error, without a retry or another grant.
	fail = true
	as.tokenReqs = nil
	tr = NewTransport(&Options{Grant: GrantJWTBearer, ClientID: "wl", Assertion: StaticAssertion("workload-jwt")})
	_, err := do(t, tr, rs)
	if !errors.Is(err, ErrTokenEndpoint) || strings.Contains(err.Error(), "workload-jwt") {
		t.Fatalf("err = %v", err)
	}
	if len(as.tokenReqs) != 1 {
		t.Fatalf("%d token requests, want 1", len(as.tokenReqs))
	}
}

func TestIDJAG(t *testing.T) {
	var idpForm url.Values
	var idpBasic [2]string
	idp := newFakeAS(t, nil)
	wrapAS(idp, func(w http.ResponseWriter, r *http.Request) bool {
		_ = r.ParseForm()
		idpForm = r.PostForm
		idpBasic[0], idpBasic[1], _ = r.BasicAuth()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "the-id-jag", "issued_token_type": TokenTypeIDJAG, "token_type": "N_A"})
		return true
	})
	as := newFakeAS(t, func(a *fakeAS) { a.authMethods = []string{AuthMethodBasic}; a.noDCR = true })
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	tr := NewTransport(&Options{Grant: GrantJWTBearer, ClientID: "c", ClientSecret: "cs", Assertion: IDJAGAssertion(IDJAGConfig{
		TokenEndpoint: idp.url() + "/token", ClientID: "idp-c",
		IDToken: func(context.Context) (string, error) { return "the-id-token", nil },
	})})
	if _, err := do(t, tr, rs); err != nil {
		t.Fatal(err)
	}
	want := url.Values{"grant_type": {grantTokenExch}, "requested_token_type": {TokenTypeIDJAG}, "audience": {as.url()},
		"resource": {rs.srv.URL + "/mcp"}, "subject_token": {"the-id-token"}, "subject_token_type": {TokenTypeIDToken}, "client_id": {"idp-c"}}
	for k := range want {
		if idpForm.Get(k) != want.Get(k) {
			t.Fatalf("token exchange %s = %q, want %q", k, idpForm.Get(k), want.Get(k))
		}
	}
	tr0 := as.tokenReqs[0]
	if tr0.form.Get("assertion") != "the-id-jag" || tr0.basic != [2]string{"c", "cs"} {
		t.Fatalf("jwt bearer request %v %v", tr0.form, tr0.basic)
	}
}

// dpopCheck verifies a DPoP proof as RFC 9449 Section 4.3 says and returns
// its claims and key thumbprint.
func dpopCheck(t *testing.T, proof, method, u string) (map[string]any, string) {
	t.Helper()
	jws, err := jose.ParseSigned(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("proof: %v", err)
	}
	h := jws.Signatures[0].Protected
	if h.ExtraHeaders["typ"] != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		t.Fatalf("proof header %+v", h)
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	_ = json.Unmarshal(payload, &c)
	if c["htm"] != method || c["htu"] != u || c["jti"] == "" || c["iat"] == nil {
		t.Fatalf("proof claims %v (want %s %s)", c, method, u)
	}
	tp, _ := h.JSONWebKey.Thumbprint(crypto.SHA256)
	return c, base64.RawURLEncoding.EncodeToString(tp)
}

func TestDPoP(t *testing.T) {
	for _, nonces := range []bool{false, true} {
		as := newFakeAS(t, func(a *fakeAS) { a.noDCR = true })
		var mu sync.Mutex
		bound := map[string]string{} // token -> jkt
		jtis := map[string]bool{}
		asChallenges, rsChallenges := 0, 0
		wrapAS(as, func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != "/token" {
				return false
			}
			c, jkt := dpopCheck(t, r.Header.Get("DPoP"), "POST", as.url()+"/token")
			if nonces && c["nonce"] != "as-nonce" {
				asChallenges++
				w.Header().Set("DPoP-Nonce", "as-nonce")
				w.WriteHeader(400)
				_, _ = w.Write([]byte(`{"error":"use_dpop_nonce"}`))
				return true
			}
			rec := &recorder{header: http.Header{}}
			as.serve(rec, r)
			var body map[string]any
			_ = json.Unmarshal(rec.body, &body)
			body["token_type"] = "DPoP"
			mu.Lock()
			bound[body["access_token"].(string)] = jkt
			mu.Unlock()
			_ = json.NewEncoder(w).Encode(body)
			return true
		})
		rs := newFakeRS(t, func() *fakeAS { return as }, nil)
		inner := rs.srv.Config.Handler
		rs.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "DPoP "); ok && r.URL.Path == "/mcp" {
				c, jkt := dpopCheck(t, r.Header.Get("DPoP"), r.Method, rs.srv.URL+"/mcp")
				sum := sha256.Sum256([]byte(tok))
				mu.Lock()
				if c["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) || bound[tok] != jkt || jtis[c["jti"].(string)] {
					t.Errorf("resource proof %v not bound to the token or replayed", c)
				}
				jtis[c["jti"].(string)] = true
				mu.Unlock()
				if nonces && c["nonce"] != "rs-nonce" {
					rsChallenges++
					w.Header().Set("DPoP-Nonce", "rs-nonce")
					w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
					w.WriteHeader(401)
					return
				}
				r.Header.Set("Authorization", "Bearer "+tok)
			} else if r.URL.Path == "/mcp" && r.Header.Get("Authorization") != "" {
				t.Errorf("Authorization %q", r.Header.Get("Authorization"))
			}
			inner.ServeHTTP(w, r)
		})
		tr := NewTransport(&Options{ClientID: "c", Authorizer: &HeadlessAuthorizer{}, DPoP: true})
		for range 2 {
			resp, err := do(t, tr, rs)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("nonces %t: resp %v err %v", nonces, resp, err)
			}
		}
		if len(jtis) < 2 {
			t.Fatalf("nonces %t: %d resource proofs", nonces, len(jtis))
		}
		if nonces && (asChallenges != 1 || rsChallenges != 1) {
			t.Fatalf("challenges: AS %d, RS %d; want 1 each", asChallenges, rsChallenges)
		}
	}
}

// recorder is a minimal http.ResponseWriter.
type recorder struct {
	header http.Header
	code   int
	body   []byte
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { r.body = append(r.body, b...); return len(b), nil }

func TestParsePrivateKeyPEM(t *testing.T) {
	key := newKey(t)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	k, err := ParsePrivateKeyPEM(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil || !key.Equal(k) {
		t.Fatalf("key %v err %v", k, err)
	}
	_, err = ParsePrivateKeyPEM([]byte("-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ5dGVz\n-----END PRIVATE KEY-----\n"))
	if !errors.Is(err, ErrKey) || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Fatalf("err = %v", err)
	}
}

// noSecretsInGrants extends TestNoSecretsInErrors to the non-interactive
// grants and DPoP: client secrets, client assertions, grant assertions,
// ID tokens and DPoP proofs a refusing server echoes never reach the errors
// nor the debug log, and neither do the tokens and proofs of a successful
// DPoP flow.
func noSecretsInGrants(t *testing.T) {
	const secret = "very-secret-value"
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	as := newFakeAS(t, func(a *fakeAS) { a.noDCR = true })
	var seen []string // every secret the AS was sent
	refuse := true
	wrapAS(as, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/token" {
			return false
		}
		_ = r.ParseForm()
		as.mu.Lock()
		for _, k := range []string{"client_secret", "client_assertion", "assertion", "subject_token"} {
			if v := r.PostForm.Get(k); v != "" {
				seen = append(seen, v)
			}
		}
		for _, h := range []string{"DPoP", "Authorization"} {
			if v := r.Header.Get(h); v != "" {
				seen = append(seen, v)
			}
		}
		as.mu.Unlock()
		if !refuse {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_client", error_description="`+strings.Join(seen, " ")+`"`)
		w.WriteHeader(401)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client " + strings.Join(seen, " "), "error_description": strings.Join(seen, " ")})
		return true
	})
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	key := newKey(t)
	configs := []Options{
		{Grant: GrantClientCredentials, ClientID: "c", ClientSecret: secret},
		{Grant: GrantClientCredentials, ClientID: "c", ClientKey: key, DPoP: true},
		{Grant: GrantJWTBearer, ClientID: "c", Assertion: StaticAssertion("assertion-" + secret)},
		{Grant: GrantJWTBearer, ClientID: "c", ClientSecret: secret, Assertion: IDJAGAssertion(IDJAGConfig{
			TokenEndpoint: as.url() + "/token", ClientID: "idp", ClientSecret: secret,
			IDToken: func(context.Context) (string, error) { return "idtoken-" + secret, nil },
		})},
	}
	for i, o := range configs {
		o.Logger = logger
		_, err := do(t, NewTransport(&o), rs)
		if err == nil {
			t.Fatalf("config %d: no error", i)
		}
		for _, s := range append([]string{secret}, seen...) {
			if strings.Contains(err.Error(), s) {
				t.Fatalf("config %d: error %q contains a secret", i, err)
			}
		}
	}
	// A DPoP flow that succeeds, then the resource requests.
	refuse = false
	o := Options{Grant: GrantClientCredentials, ClientID: "c", ClientSecret: secret, DPoP: true, Logger: logger}
	tr := NewTransport(&o)
	if _, err := do(t, tr, rs); err != nil {
		t.Fatal(err)
	}
	tok, _ := tr.currentToken(context.Background())
	for _, s := range append([]string{secret, tok.AccessToken}, seen...) {
		if strings.Contains(logs.String(), s) {
			t.Fatalf("the log shows a secret: %s", logs.String())
		}
	}
	if len(seen) < 5 || !strings.Contains(logs.String(), "token request") {
		t.Fatalf("the test saw %d secrets and logged %q", len(seen), logs.String())
	}
}

// TestClientCredentialsRegistration: a client that registers dynamically
// for a non-interactive grant asks for that grant and no redirection.
func TestClientCredentialsRegistration(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.secret = "dyn-secret" })
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	if _, err := do(t, NewTransport(&Options{Grant: GrantClientCredentials}), rs); err != nil {
		t.Fatal(err)
	}
	b := as.regBodies[0]
	if g, _ := json.Marshal(b["grant_types"]); string(g) != `["client_credentials"]` || b["redirect_uris"] != nil {
		t.Fatalf("registration %v", b)
	}
	if tr0 := as.tokenReqs[0]; tr0.basic != [2]string{"dyn-client", "dyn-secret"} || tr0.form.Get("grant_type") != GrantClientCredentials {
		t.Fatalf("token request %v %v", tr0.form, tr0.basic)
	}
}
