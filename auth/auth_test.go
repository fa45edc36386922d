package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseChallenges(t *testing.T) {
	got := ParseChallenges([]string{
		`Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", error_description="say \"hi\""`,
		`DPoP algs="ES256"`,
	})
	if len(got) != 3 || got[1].Scheme != "Bearer" || got[2].Scheme != "DPoP" {
		t.Fatalf("challenges = %+v", got)
	}
	want := map[string]string{"error": "insufficient_scope", "scope": "a b",
		"resource_metadata": "http://h/.well-known/oauth-protected-resource/mcp", "error_description": `say "hi"`}
	if !reflect.DeepEqual(got[1].Params, want) {
		t.Fatalf("Bearer params = %v", got[1].Params)
	}
	h := http.Header{}
	h.Set("WWW-Authenticate", `bearer scope=files:read`)
	if p := bearerParams(h); p["scope"] != "files:read" {
		t.Fatalf("unquoted, lower-case scheme: %v", p)
	}
}

// TestFlow runs the whole flow: path-based metadata named in the
// challenge, dynamic registration, PKCE S256, resource in both requests,
// and the token reused afterwards.
func TestFlow(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.authMethods = []string{"none"} })
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	tr := newTransport(Options{})
	for i := 0; i < 2; i++ {
		resp, err := do(t, tr, rs)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("request %d: %v %v", i, resp, err)
		}
	}
	if len(as.authQs) != 1 || len(as.tokenReqs) != 1 || len(as.regBodies) != 1 {
		t.Fatalf("authorizations %d, token requests %d, registrations %d; want 1 each", len(as.authQs), len(as.tokenReqs), len(as.regBodies))
	}
	q := as.authQs[0]
	resource := rs.srv.URL + "/mcp"
	if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || q.Get("response_type") != "code" ||
		q.Get("client_id") != "dyn-client" || q.Get("resource") != resource || q.Get("state") == "" || q.Has("scope") {
		t.Fatalf("authorization query = %v", q)
	}
	f := as.tokenReqs[0].form
	if f.Get("resource") != resource || f.Get("client_id") != "dyn-client" || len(f.Get("code_verifier")) != 43 || f.Has("client_secret") {
		t.Fatalf("token form = %v", f)
	}
	reg := as.regBodies[0]
	if reg["application_type"] != "native" || reg["token_endpoint_auth_method"] != "none" ||
		!reflect.DeepEqual(reg["grant_types"], []any{"authorization_code", "refresh_token"}) {
		t.Fatalf("registration = %v", reg)
	}
	if got := rs.auths; len(got) != 3 || got[0] != "" || got[1] != "Bearer at-1" || got[2] != "Bearer at-1" {
		t.Fatalf("Authorization headers = %q", got)
	}
}

// TestDiscoveryOrder: without resource_metadata in the challenge, the
// path-based well-known URI comes before the root one; an issuer with a
// path is looked up as RFC 8414 inserted, OpenID inserted, OpenID appended.
func TestDiscoveryOrder(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) {
		a.prefix = "/tenant1"
		a.metadataPath = "/tenant1/.well-known/openid-configuration"
	})
	rs := newFakeRS(t, func() *fakeAS { return as }, func(s *fakeRS) {
		s.prmInHeader = false
		s.prmPath = "/.well-known/oauth-protected-resource"
	})
	if resp, err := do(t, newTransport(Options{}), rs); err != nil || resp.StatusCode != 200 {
		t.Fatalf("request: %v %v", resp, err)
	}
	wantRS := []string{"/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource", "/mcp"}
	if !reflect.DeepEqual(rs.paths, wantRS) {
		t.Fatalf("resource server paths = %q, want %q", rs.paths, wantRS)
	}
	wantAS := []string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1",
		"/tenant1/.well-known/openid-configuration", "/tenant1/register", "/tenant1/authorize", "/tenant1/token"}
	if !reflect.DeepEqual(as.paths, wantAS) {
		t.Fatalf("authorization server paths = %q, want %q", as.paths, wantAS)
	}
	// The root PRM names the origin as the resource: that is what is sent.
	if got := as.authQs[0].Get("resource"); got != rs.srv.URL {
		t.Fatalf("resource = %q", got)
	}
}

// TestMarch2025Fallbacks: no protected resource metadata and no
// authorization server metadata: the server's origin with the default
// endpoints.
func TestMarch2025Fallbacks(t *testing.T) {
	var rs *fakeRS
	as := newFakeAS(t, func(a *fakeAS) { a.noMetadata = true })
	rs = newFakeRS(t, func() *fakeAS { return as }, func(s *fakeRS) { s.prmPath = "-" })
	// The MCP server and the authorization server share the origin here:
	// route the RS's non-MCP paths to the AS.
	rs.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			rs.serve(w, r)
			return
		}
		as.serve(w, r)
	})
	if resp, err := do(t, newTransport(Options{}), rs); err != nil || resp.StatusCode != 200 {
		t.Fatalf("request: %v %v", resp, err)
	}
	want := []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/register", "/authorize", "/token"}
	if !reflect.DeepEqual(as.paths, want) {
		t.Fatalf("paths = %q, want %q", as.paths, want)
	}
}

func TestResourceMismatch(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, func() *fakeAS { return as }, func(s *fakeRS) { s.resource = "https://evil.example.com/mcp" })
	_, err := do(t, newTransport(Options{}), rs)
	if !errors.Is(err, ErrResourceMismatch) {
		t.Fatalf("err = %v, want ErrResourceMismatch", err)
	}
	if len(as.paths) != 0 {
		t.Fatalf("the authorization server was contacted: %q", as.paths)
	}
}

func TestMetadataIssuerMismatch(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.issuer = "https://attacker.example.com" })
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	_, err := do(t, newTransport(Options{}), rs)
	if !errors.Is(err, ErrIssuerMismatch) || len(as.regBodies)+len(as.authQs)+len(as.tokenReqs) != 0 {
		t.Fatalf("err = %v; registrations %d, authorizations %d", err, len(as.regBodies), len(as.authQs))
	}
}

func TestNoPKCE(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.noPKCE = true })
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	if _, err := do(t, newTransport(Options{}), rs); !errors.Is(err, ErrNoPKCE) || len(as.authQs) != 0 {
		t.Fatalf("err = %v", err)
	}
}

// TestIssValidation follows the table of RFC 9207 Section 2.4 as the
// specification applies it; a refused response never reaches the token
// endpoint.
func TestIssValidation(t *testing.T) {
	for _, c := range []struct {
		name      string
		supported *bool
		mode      string
		ok        bool
	}{
		{"advertised-correct", ptr(true), "correct", true},
		{"not-advertised-absent", nil, "omit", true},
		{"advertised-false-absent", ptr(false), "omit", true},
		{"advertised-missing", ptr(true), "omit", false},
		{"advertised-wrong", ptr(true), "wrong", false},
		{"unadvertised-wrong", nil, "wrong", false},
		{"trailing-slash", ptr(true), "slash", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.issSupported, a.issMode = c.supported, c.mode })
			rs := newFakeRS(t, func() *fakeAS { return as }, nil)
			resp, err := do(t, newTransport(Options{}), rs)
			if c.ok {
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("%v %v", resp, err)
				}
				return
			}
			if err == nil || len(as.tokenReqs) != 0 || len(as.authQs) != 1 {
				t.Fatalf("err = %v, token requests %d", err, len(as.tokenReqs))
			}
		})
	}
}

func TestTokenEndpointAuthMethod(t *testing.T) {
	for _, c := range []struct {
		supported []string
		secret    string
		want      string
	}{
		{[]string{"client_secret_basic"}, "s3cr:et", "basic"},
		{[]string{"client_secret_post"}, "s3cr:et", "post"},
		{[]string{"none"}, "s3cr:et", "none"},
		{nil, "s3cr:et", "basic"},
		{[]string{"client_secret_basic", "client_secret_post"}, "", "none"},
	} {
		t.Run(fmt.Sprint(c.supported, c.secret != ""), func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.authMethods, a.noDCR = c.supported, true })
			rs := newFakeRS(t, func() *fakeAS { return as }, nil)
			if resp, err := do(t, newTransport(Options{ClientID: "pre:id", ClientSecret: c.secret}), rs); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v %v", resp, err)
			}
			tr := as.tokenReqs[0]
			got := "none"
			switch {
			case tr.basic != [2]string{}:
				got = "basic"
				if tr.basic != [2]string{"pre:id", c.secret} || tr.form.Has("client_id") {
					t.Fatalf("basic credentials %q, form %v", tr.basic, tr.form)
				}
			case tr.form.Has("client_secret"):
				got = "post"
				if tr.form.Get("client_secret") != c.secret || tr.form.Get("client_id") != "pre:id" {
					t.Fatalf("form %v", tr.form)
				}
			default:
				if tr.form.Get("client_id") != "pre:id" {
					t.Fatalf("form %v", tr.form)
				}
			}
			if got != c.want {
				t.Fatalf("method %s, want %s", got, c.want)
			}
		})
	}
}

// TestRegistrationOrder: pre-registered credentials, then the Client ID
// Metadata Document where supported, then dynamic registration.
func TestRegistrationOrder(t *testing.T) {
	const cimd = "https://app.example.com/client.json"
	for _, c := range []struct {
		name     string
		opts     Options
		asCIMD   bool
		wantID   string
		register bool
	}{
		{"pre-registered", Options{ClientID: "pre", ClientMetadataURL: cimd}, true, "pre", false},
		{"cimd", Options{ClientMetadataURL: cimd}, true, cimd, false},
		{"cimd-unsupported", Options{ClientMetadataURL: cimd}, false, "dyn-client", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.cimd = c.asCIMD })
			rs := newFakeRS(t, func() *fakeAS { return as }, nil)
			if resp, err := do(t, newTransport(c.opts), rs); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v %v", resp, err)
			}
			if got := as.authQs[0].Get("client_id"); got != c.wantID || (len(as.regBodies) == 1) != c.register {
				t.Fatalf("client_id %q, registrations %d", got, len(as.regBodies))
			}
		})
	}
	t.Run("pre-registered-other-issuer", func(t *testing.T) {
		as := newFakeAS(t, nil)
		rs := newFakeRS(t, func() *fakeAS { return as }, nil)
		_, err := do(t, newTransport(Options{ClientID: "pre", ClientIssuer: "https://other.example.com"}), rs)
		if !errors.Is(err, ErrIssuerMismatch) || len(as.authQs) != 0 {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestScopeSelection(t *testing.T) {
	for _, c := range []struct {
		name      string
		challenge string
		prm       []string
		asScopes  []string
		override  []string
		noOffline bool
		want      string // "-" means omitted
	}{
		{"challenge", "mcp:basic", []string{"mcp:a", "mcp:b"}, nil, nil, false, "mcp:basic"},
		{"scopes-supported", "", []string{"mcp:a", "mcp:b"}, nil, nil, false, "mcp:a mcp:b"},
		{"omitted", "", nil, nil, nil, false, "-"},
		{"override", "mcp:basic", nil, nil, []string{"x"}, false, "x"},
		{"offline-advertised", "mcp:basic", nil, []string{"mcp:basic", "offline_access"}, nil, false, "mcp:basic offline_access"},
		{"offline-not-advertised", "mcp:basic", nil, []string{"mcp:basic"}, nil, false, "mcp:basic"},
		{"offline-disabled", "mcp:basic", nil, []string{"offline_access"}, nil, true, "mcp:basic"},
		{"offline-not-alone", "", nil, []string{"offline_access"}, nil, false, "-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.scopes = c.asScopes })
			rs := newFakeRS(t, func() *fakeAS { return as }, func(s *fakeRS) { s.challenge, s.scopes = c.challenge, c.prm })
			if resp, err := do(t, newTransport(Options{Scopes: c.override, NoOfflineAccess: c.noOffline}), rs); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v %v", resp, err)
			}
			q := as.authQs[0]
			got := q.Get("scope")
			if !q.Has("scope") {
				got = "-"
			}
			if got != c.want {
				t.Fatalf("scope %q, want %q", got, c.want)
			}
		})
	}
}

// TestStepUp: a 403 insufficient_scope re-authorizes with the union of the
// scopes asked so far and the challenged ones.
func TestStepUp(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, func() *fakeAS { return as }, func(s *fakeRS) {
		s.challenge, s.need, s.stepScope = "mcp:basic", []string{"mcp:write"}, "mcp:write"
	})
	resp, err := do(t, newTransport(Options{}), rs)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if len(as.authQs) != 2 || as.authQs[0].Get("scope") != "mcp:basic" || as.authQs[1].Get("scope") != "mcp:basic mcp:write" {
		t.Fatalf("authorizations %d: %v", len(as.authQs), as.authQs)
	}
}

// TestStepUpLimit: a server that always answers 403 gets a bounded number
// of authorizations, then its 403 is returned.
func TestStepUpLimit(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, func() *fakeAS { return as }, func(s *fakeRS) {
		s.challenge, s.need, s.stepScope = "mcp:admin", []string{"never"}, "mcp:admin"
	})
	resp, err := do(t, newTransport(Options{}), rs)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("%v %v", resp, err)
	}
	if len(as.authQs) != 3 {
		t.Fatalf("%d authorizations, want 3", len(as.authQs))
	}
}

// TestRefresh: an expired token is refreshed, without a new authorization,
// and the refresh carries the resource.
func TestRefresh(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.expiresIn, a.refresh = 10, true })
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	tr := newTransport(Options{})
	for i := 0; i < 2; i++ {
		if resp, err := do(t, tr, rs); err != nil || resp.StatusCode != 200 {
			t.Fatalf("request %d: %v %v", i, resp, err)
		}
	}
	if len(as.authQs) != 1 || len(as.tokenReqs) != 2 {
		t.Fatalf("authorizations %d, token requests %d", len(as.authQs), len(as.tokenReqs))
	}
	f := as.tokenReqs[1].form
	if f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != "rt-at-1" || f.Get("resource") != rs.srv.URL+"/mcp" {
		t.Fatalf("refresh form %v", f)
	}
	if got := rs.auths[len(rs.auths)-1]; got != "Bearer at-2" {
		t.Fatalf("last request sent %q", got)
	}
}

// TestMigration: when the resource's authorization server changes, the
// client registers again there and never presents the old client id.
func TestMigration(t *testing.T) {
	as1 := newFakeAS(t, func(a *fakeAS) { a.clientID, a.secret = "as1-client", "as1-secret" })
	as2 := newFakeAS(t, func(a *fakeAS) { a.clientID = "as2-client" })
	cur := as1
	rs := newFakeRS(t, func() *fakeAS { return cur }, nil)
	store := NewMemoryStore()
	tr := newTransport(Options{Store: store})
	if resp, err := do(t, tr, rs); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	cur = as2 // the old tokens are unknown to it
	if resp, err := do(t, tr, rs); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if len(as2.regBodies) != 1 || as2.authQs[0].Get("client_id") != "as2-client" || as2.tokenReqs[0].basic[0] == "as1-client" {
		t.Fatalf("as2: registrations %d, %v", len(as2.regBodies), as2.authQs)
	}
	for _, iss := range []string{as1.url(), as2.url()} {
		if c, _ := store.LoadClient(context.Background(), iss); c == nil {
			t.Fatalf("no registration stored for %s", iss)
		}
		if tok, _ := store.LoadToken(context.Background(), Key{iss, rs.srv.URL + "/mcp"}); tok == nil {
			t.Fatalf("no token stored for %s", iss)
		}
	}
}

// TestNoSecretsInErrors: the errors and the printed forms of tokens and
// clients never carry secrets.
func TestNoSecretsInErrors(t *testing.T) {
	const secret = "very-secret-value"
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)
	// An authorizer that hands back a code the server will not take, with a
	// verifier mismatch echoed by the server's error_description.
	tr := newTransport(Options{ClientID: "c", ClientSecret: secret, Authorizer: AuthorizerFunc(func(ctx context.Context, u string) (string, error) {
		redirected, err := (&HeadlessAuthorizer{}).Authorize(ctx, u)
		as.challenge = "tampered"
		return redirected, err
	})})
	_, err := do(t, tr, rs)
	if !errors.Is(err, ErrTokenEndpoint) {
		t.Fatalf("err = %v, want ErrTokenEndpoint", err)
	}
	verifier := as.tokenReqs[0].form.Get("code_verifier")
	for _, s := range []string{secret, verifier, "the-code"} {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("error %q contains a secret", err)
		}
	}
	tok := Token{AccessToken: "at-" + secret, RefreshToken: "rt-" + secret, Expiry: time.Now()}
	ci := ClientInfo{ClientID: "c", ClientSecret: secret}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s", tok, tok, tok, &tok), fmt.Sprintf("%v %+v %#v", ci, ci, ci)} {
		if strings.Contains(s, secret) {
			t.Fatalf("%q shows a secret", s)
		}
	}
	noSecretsInGrants(t)
}

// TestAuthorizationServerChoice: of the authorization servers protected
// resource metadata lists, the first served over HTTPS (or plain HTTP on
// loopback) with usable metadata is used; one whose endpoints are plain
// HTTP elsewhere is refused, so no code or token crosses the network in
// clear text.
func TestAuthorizationServerChoice(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.authMethods = []string{"none"} })
	gone := newFakeAS(t, func(a *fakeAS) { a.noMetadata = true; a.prefix = "/gone" })
	rs := newFakeRS(t, func() *fakeAS { return as }, func(s *fakeRS) {
		s.before = []string{"http://as.example", gone.url()}
	})
	if resp, err := do(t, newTransport(Options{}), rs); err != nil || resp.StatusCode != 200 {
		t.Fatalf("with a usable third server: %v %v", resp, err)
	}
	if len(as.tokenReqs) != 1 || len(gone.tokenReqs) != 0 {
		t.Errorf("token requests: %d to the usable server, %d to the one without metadata", len(as.tokenReqs), len(gone.tokenReqs))
	}

	insecure := newFakeAS(t, func(a *fakeAS) { a.tokenURL = "http://as.example/token" })
	plain := newFakeRS(t, func() *fakeAS { return insecure }, nil)
	if _, err := do(t, newTransport(Options{}), plain); !errors.Is(err, ErrInsecureEndpoint) || len(insecure.authQs) != 0 {
		t.Errorf("a plain-HTTP token endpoint: err %v, %d authorizations", err, len(insecure.authQs))
	}
}
