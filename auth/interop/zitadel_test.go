package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/oauthtest/zitadel"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

const (
	clientID     = "mcpkit-interop"
	clientSecret = "interop-secret"
	// redirectURL is registered at the provider; nothing listens there:
	// the test's browser stops when it is redirected to it.
	redirectURL = "http://127.0.0.1/callback"

	scopeRead  = "mcp:read"  // every MCP request
	scopeWrite = "mcp:write" // the publish tool: the step-up
)

// provider is the zitadel OpenID Provider on loopback, with counters of
// what its token endpoint was asked.
type provider struct {
	issuer     string
	introspect string // introspection endpoint, from its discovery document

	codeGrants    atomic.Int32
	refreshGrants atomic.Int32
	otherGrants   atomic.Int32
	// resourceParams counts token requests that carried a resource
	// indicator (RFC 8707); the provider ignores it.
	resourceParams atomic.Int32
}

// startProvider starts the provider with the example login UI, a
// confidential web client for mcpkit (client_secret_basic; PKCE is checked
// when the authorization request has a challenge) allowed the MCP scopes,
// and the example users.
func startProvider(t *testing.T) *provider {
	t.Helper()
	p := &provider{}
	zp := zitadel.Start(t, &zitadel.Config{
		Clients: []zitadel.Client{{ID: clientID, Secret: clientSecret, RedirectURI: redirectURL}},
		Scopes:  []string{scopeRead, scopeWrite},
		Wrap:    p.count,
	})
	p.issuer = zp.Issuer
	disc := zp.Discover(t)
	if disc.Issuer != p.issuer || disc.IntrospectionEndpoint == "" {
		t.Fatalf("provider discovery: issuer %q, introspection %q", disc.Issuer, disc.IntrospectionEndpoint)
	}
	// What mcpkit relies on: S256, offline_access for a refresh token.
	if !slices.Contains(disc.CodeChallengeMethods, "S256") || !slices.Contains(disc.ScopesSupported, "offline_access") {
		t.Fatalf("provider discovery: code_challenge_methods_supported %v, scopes_supported %v", disc.CodeChallengeMethods, disc.ScopesSupported)
	}
	p.introspect = disc.IntrospectionEndpoint
	return p
}

// count counts the token requests before router serves them.
func (p *provider) count(router http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/oauth/token" {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
			r.Body = io.NopCloser(bytes.NewReader(body))
			form, _ := url.ParseQuery(string(body))
			switch form.Get("grant_type") {
			case "authorization_code":
				p.codeGrants.Add(1)
			case "refresh_token":
				p.refreshGrants.Add(1)
			default:
				p.otherGrants.Add(1)
			}
			if form.Has("resource") {
				p.resourceParams.Add(1)
			}
		}
		router.ServeHTTP(w, r)
	})
}

// browser is the user agent and the user: it follows the provider's
// redirects to its login page, submits the login form with the example
// user's credentials, and stops at the redirect URL, which it returns.
type browser struct {
	username, password string
	redirect           *url.URL
	hc                 *http.Client

	mu       sync.Mutex
	authURLs []*url.URL // the authorization requests, in order
}

func newBrowser(t *testing.T, issuer string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ru, _ := url.Parse(redirectURL)
	b := &browser{
		// The example user store names its user after the issuer's host.
		username: "test-user@127.0.0.1",
		password: "verysecure",
		redirect: ru,
	}
	b.hc = &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme == ru.Scheme && req.URL.Host == ru.Host && req.URL.Path == ru.Path {
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 {
				return errors.New("too many redirects")
			}
			return nil
		}}
	return b
}

func (b *browser) logins() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.authURLs)
}

func (b *browser) lastScopes() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.authURLs) == 0 {
		return nil
	}
	s := strings.Fields(b.authURLs[len(b.authURLs)-1].Query().Get("scope"))
	slices.Sort(s)
	return s
}

var (
	formRE  = regexp.MustCompile(`(?is)<form[^>]*\baction="([^"]*)"`)
	inputRE = regexp.MustCompile(`(?is)<input\b[^>]*>`)
	attrRE  = regexp.MustCompile(`(?is)\b(name|value)="([^"]*)"`)
)

// Authorize implements auth.Authorizer.
func (b *browser) Authorize(ctx context.Context, authURL string) (string, error) {
	au, err := url.Parse(authURL)
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	b.authURLs = append(b.authURLs, au)
	b.mu.Unlock()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return "", err
	}
	page, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("login page: %s: %s", resp.Status, page)
	}
	m := formRE.FindSubmatch(page)
	if m == nil {
		return "", fmt.Errorf("no form on the login page: %s", page)
	}
	action, err := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
	if err != nil {
		return "", err
	}
	form := url.Values{}
	for _, in := range inputRE.FindAll(page, -1) {
		var name, value string
		for _, a := range attrRE.FindAllSubmatch(in, -1) {
			if strings.EqualFold(string(a[1]), "name") {
				name = html.UnescapeString(string(a[2]))
			} else {
				value = html.UnescapeString(string(a[2]))
			}
		}
		if name != "" {
			form.Set(name, value)
		}
	}
	form.Set("username", b.username)
	form.Set("password", b.password)

	req, err = http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = b.hc.Do(req)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 3 {
		return "", fmt.Errorf("login: %s: %s", resp.Status, body)
	}
	loc, err := resp.Location()
	if err != nil {
		return "", err
	}
	return loc.String(), nil
}

// resourceServer protects an MCP handler: it publishes protected resource
// metadata (RFC 9728), validates access tokens at the provider's
// introspection endpoint (RFC 7662), requires mcp:read for every request
// and mcp:write for the publish tool.
type resourceServer struct {
	resource string // the MCP endpoint's URL
	issuer   string
	p        *provider
	next     http.Handler

	unauthorized atomic.Int32 // 401 answers
	forbidden    atomic.Int32 // 403 insufficient_scope answers
}

type clientKey struct{}

func (rs *resourceServer) metadataURL() string {
	u, _ := url.Parse(rs.resource)
	return u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + u.Path
}

func (rs *resourceServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u, _ := url.Parse(rs.resource)
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource" + u.Path:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"resource":                 rs.resource,
			"authorization_servers":    []string{rs.issuer},
			"scopes_supported":         []string{scopeRead, scopeWrite},
			"bearer_methods_supported": []string{"header"},
		})
		return
	case u.Path:
	default:
		http.NotFound(w, r)
		return
	}

	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		rs.challenge(w, http.StatusUnauthorized, fmt.Sprintf(`scope="%s"`, scopeRead))
		return
	}
	info, err := rs.introspect(r.Context(), token)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if !info.Active {
		rs.challenge(w, http.StatusUnauthorized, `error="invalid_token"`)
		return
	}
	need := []string{scopeRead}
	if r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && msg.Params.Name == "publish" {
			need = []string{scopeWrite}
		}
	}
	granted := strings.Fields(info.Scope)
	for _, s := range need {
		if !slices.Contains(granted, s) {
			rs.forbidden.Add(1)
			rs.challenge(w, http.StatusForbidden, fmt.Sprintf(`error="insufficient_scope", scope="%s"`, strings.Join(need, " ")))
			return
		}
	}
	rs.next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, info.ClientID)))
}

func (rs *resourceServer) challenge(w http.ResponseWriter, status int, params string) {
	if status == http.StatusUnauthorized {
		rs.unauthorized.Add(1)
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s", %s`, rs.metadataURL(), params))
	w.WriteHeader(status)
}

type introspection struct {
	Active   bool   `json:"active"`
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
}

// introspect asks the provider about token. The example storage issues
// tokens whose audience is the client they were issued to, and answers
// introspection only to a client of the audience: the resource server
// authenticates as that client.
func (rs *resourceServer) introspect(ctx context.Context, token string) (*introspection, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rs.p.introspect, strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, clientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("introspection: %s: %s", resp.Status, b)
	}
	var info introspection
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return nil, err
	}
	return &info, nil
}

// startMCP serves an mcpkit server with the tools whoami and publish
// behind the resource server at <url>/mcp.
func startMCP(t *testing.T, p *provider) *resourceServer {
	t.Helper()
	s := server.New(protocol.Implementation{Name: "interop", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "whoami", Description: "The client the token was issued to"},
		func(ctx context.Context, _ *server.CallRequest, _ struct{}) (string, error) {
			c, _ := ctx.Value(clientKey{}).(string)
			return "client " + c, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "publish", Description: "Needs mcp:write"},
		func(ctx context.Context, _ *server.CallRequest, _ struct{}) (string, error) {
			return "published", nil
		})
	h := streamable.NewHandler(s, nil)
	rs := &resourceServer{issuer: p.issuer, p: p, next: h}
	srv := httptest.NewServer(rs)
	rs.resource = srv.URL + "/mcp"
	t.Cleanup(func() {
		srv.Close()
		s.Close()
	})
	return rs
}

// connect opens an MCP session through a new auth.Transport over store,
// as a new client process would.
func connect(ctx context.Context, t *testing.T, rs *resourceServer, b *browser, store auth.TokenStore) *client.Session {
	t.Helper()
	tr := auth.NewTransport(&auth.Options{
		ClientID:     clientID,
		ClientSecret: clientSecret,
		ClientIssuer: rs.issuer,
		RedirectURL:  redirectURL,
		Authorizer:   b,
		Store:        store,
	})
	conn := streamable.NewClient(rs.resource, &streamable.ClientOptions{HTTPClient: &http.Client{Transport: tr}})
	c := client.New(protocol.Implementation{Name: "interop-client", Version: "1.0.0"}, nil)
	s, err := c.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callText(ctx context.Context, t *testing.T, s *client.Session, tool string) string {
	t.Helper()
	res, err := s.CallTool(ctx, tool, map[string]any{}, nil)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("call %s: %+v", tool, res)
	}
	tc, ok := res.Content[0].(*protocol.TextContent)
	if !ok {
		t.Fatalf("call %s: content %T", tool, res.Content[0])
	}
	return tc.Text
}

func TestZitadelLoginRefreshStepUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := startProvider(t)
	rs := startMCP(t, p)
	b := newBrowser(t, p.issuer)
	store := auth.NewMemoryStore()
	key := auth.Key{Issuer: p.issuer, Resource: rs.resource}

	expect := func(step string, logins, codes, refreshes int32) {
		t.Helper()
		if got := int32(b.logins()); got != logins {
			t.Errorf("%s: %d logins, want %d", step, got, logins)
		}
		if got := p.codeGrants.Load(); got != codes {
			t.Errorf("%s: %d authorization_code grants, want %d", step, got, codes)
		}
		if got := p.refreshGrants.Load(); got != refreshes {
			t.Errorf("%s: %d refresh_token grants, want %d", step, got, refreshes)
		}
		if got := p.otherGrants.Load(); got != 0 {
			t.Errorf("%s: %d other grants", step, got)
		}
	}

	// Login: the first request is answered 401; the transport discovers
	// the provider through the protected resource metadata, the user logs
	// in through the provider's form, and the code is redeemed.
	first := connect(ctx, t, rs, b, store)
	if got := callText(ctx, t, first, "whoami"); got != "client "+clientID {
		t.Errorf("whoami = %q", got)
	}
	expect("login", 1, 1, 0)
	if got, want := b.lastScopes(), []string{scopeRead, "offline_access"}; !slices.Equal(got, want) {
		t.Errorf("login scopes %v, want %v", got, want)
	}
	b.mu.Lock()
	au := b.authURLs[0].Query()
	b.mu.Unlock()
	if au.Get("code_challenge_method") != "S256" || au.Get("code_challenge") == "" || au.Get("resource") != rs.resource || au.Get("client_id") != clientID {
		t.Errorf("authorization request: %v", au)
	}
	tok, err := store.LoadToken(ctx, key)
	if err != nil || tok == nil {
		t.Fatalf("stored token: %v, %v", tok, err)
	}
	if tok.RefreshToken == "" || tok.Expiry.IsZero() {
		t.Fatalf("stored token %v: want a refresh token and an expiry", tok)
	}

	// Refresh: the stored token expires; a client started again over the
	// store refreshes it instead of sending the user to log in.
	tok.Expiry = time.Now().Add(-time.Minute)
	if err := store.SaveToken(ctx, key, tok); err != nil {
		t.Fatal(err)
	}
	second := connect(ctx, t, rs, b, store)
	if got := callText(ctx, t, second, "whoami"); got != "client "+clientID {
		t.Errorf("whoami after refresh = %q", got)
	}
	expect("refresh", 1, 1, 1)
	refreshed, err := store.LoadToken(ctx, key)
	if err != nil || refreshed == nil || refreshed.AccessToken == tok.AccessToken || !refreshed.Expiry.After(time.Now()) {
		t.Fatalf("token after refresh: %v, %v", refreshed, err)
	}
	// The provider rotated the refresh token and revoked the access token
	// the first session holds: it is answered 401 and picks the refreshed
	// token from the store, with neither a login nor another refresh.
	if got := callText(ctx, t, first, "whoami"); got != "client "+clientID {
		t.Errorf("whoami of the first session = %q", got)
	}
	expect("first session after refresh", 1, 1, 1)

	// Step-up: publish needs mcp:write, which no token has; the server
	// answers 403 insufficient_scope and the transport authorizes again,
	// asking for the union of the scopes.
	unauth := rs.unauthorized.Load()
	if got := callText(ctx, t, first, "publish"); got != "published" {
		t.Errorf("publish = %q", got)
	}
	expect("step-up", 2, 2, 1)
	if got, want := b.lastScopes(), []string{scopeRead, scopeWrite, "offline_access"}; !slices.Equal(got, want) {
		t.Errorf("step-up scopes %v, want %v", got, want)
	}
	if rs.forbidden.Load() != 1 || rs.unauthorized.Load() != unauth {
		t.Errorf("step-up: %d 403 and %d more 401 answers, want 1 and 0", rs.forbidden.Load(), rs.unauthorized.Load()-unauth)
	}
	// The stepped-up token serves both tools.
	if got := callText(ctx, t, first, "whoami"); got != "client "+clientID {
		t.Errorf("whoami after step-up = %q", got)
	}
	if got := callText(ctx, t, first, "publish"); got != "published" {
		t.Errorf("publish again = %q", got)
	}
	expect("after step-up", 2, 2, 1)

	// A client started again adopts a stored token granted mcp:read only;
	// its step-up keeps what that token was granted, so that whoami still
	// works after publish with no further login.
	other := auth.NewMemoryStore()
	third := connect(ctx, t, rs, b, other)
	if got := callText(ctx, t, third, "whoami"); got != "client "+clientID {
		t.Errorf("whoami of the third session = %q", got)
	}
	expect("third session", 3, 3, 1)
	fourth := connect(ctx, t, rs, b, other)
	forbidden := rs.forbidden.Load()
	if got := callText(ctx, t, fourth, "publish"); got != "published" {
		t.Errorf("publish of the fourth session = %q", got)
	}
	if got, want := b.lastScopes(), []string{scopeRead, scopeWrite, "offline_access"}; !slices.Equal(got, want) {
		t.Errorf("step-up scopes of an adopted token %v, want %v", got, want)
	}
	if got := callText(ctx, t, fourth, "whoami"); got != "client "+clientID {
		t.Errorf("whoami after the adopted step-up = %q", got)
	}
	expect("adopted step-up", 4, 4, 1)
	if got := rs.forbidden.Load() - forbidden; got != 1 {
		t.Errorf("adopted step-up: %d 403 answers, want 1", got)
	}
	t.Logf("token endpoint requests with a resource parameter: %d (the provider ignores RFC 8707)", p.resourceParams.Load())
}
