package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// sink is a loopback server that records every request it gets and
// answers with status (and, for 401, a challenge naming metadata of its
// own, which a client must not follow).
type sink struct {
	srv    *httptest.Server
	status int

	mu   sync.Mutex
	reqs []sunk
}

type sunk struct {
	method, path, authorization, dpop, body string
}

func newSink(t *testing.T, status int) *sink {
	s := &sink{status: status}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, sunk{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("DPoP"), string(b)})
		s.mu.Unlock()
		if s.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.srv.URL+`/.well-known/oauth-protected-resource"`)
		}
		w.WriteHeader(s.status)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) requests() []sunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sunk(nil), s.reqs...)
}

// localhostURL names the server at u by "localhost" instead of
// 127.0.0.1: another origin on the same machine.
func localhostURL(u string) string { return strings.Replace(u, "127.0.0.1", "localhost", 1) }

// issueDPoP makes the fake AS bind its tokens (token_type DPoP) and the
// fake RS take them as it takes bearer tokens.
func issueDPoP(as *fakeAS, rs *fakeRS) {
	wrapAS(as, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/token" {
			return false
		}
		rec := &recorder{header: http.Header{}}
		as.serve(rec, r)
		var body map[string]any
		_ = json.Unmarshal(rec.body, &body)
		body["token_type"] = "DPoP"
		_ = json.NewEncoder(w).Encode(body)
		return true
	})
	inner := rs.srv.Config.Handler
	rs.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "DPoP "); ok && r.Header.Get("DPoP") != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		inner.ServeHTTP(w, r)
	})
}

// TestNoCredentialsAcrossRedirect: once logged in, an MCP server that
// redirects the client elsewhere gets neither the token nor a DPoP proof
// sent there — not to another host, not to another port of the same host —
// and a 401 from there starts no authorization; a redirect within the
// server's origin keeps them.
func TestNoCredentialsAcrossRedirect(t *testing.T) {
	for _, bound := range []bool{false, true} {
		name := "bearer"
		if bound {
			name = "dpop"
		}
		t.Run(name, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.authMethods = []string{"none"} })
			rs := newFakeRS(t, func() *fakeAS { return as }, nil)
			if bound {
				issueDPoP(as, rs)
			}
			tr := newTransport(Options{DPoP: bound})
			if resp, err := do(t, tr, rs); err != nil || resp.StatusCode != 200 {
				t.Fatalf("login: %v %v", resp, err)
			}
			ok, unauthorized := newSink(t, http.StatusOK), newSink(t, http.StatusUnauthorized)
			var location string
			inner := rs.srv.Config.Handler
			rs.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/mcp" && location != "" {
					http.Redirect(w, r, location, http.StatusTemporaryRedirect)
					return
				}
				if r.URL.Path == "/moved" {
					r.URL.Path = "/mcp"
				}
				inner.ServeHTTP(w, r)
			})
			paths := len(as.paths)

			for _, target := range []struct {
				to   string
				sink *sink
				want int
			}{
				{"http://evil.example/steal", nil, 0}, // never reached: see below
				{ok.srv.URL + "/steal", ok, http.StatusOK},
				{localhostURL(ok.srv.URL) + "/steal", ok, http.StatusOK},
				{localhostURL(rs.srv.URL) + "/mcp", nil, 0},
				{unauthorized.srv.URL + "/steal", unauthorized, http.StatusUnauthorized},
			} {
				location = target.to
				if target.sink == nil {
					// Another host name or another port: route it to a sink
					// through the base transport, so that the test sees
					// what would have left the machine.
					s := newSink(t, http.StatusOK)
					u, _ := url.Parse(target.to)
					tr.base = routeTo(u.Host, s.srv.URL)
					target.sink, target.want = s, http.StatusOK
				} else {
					tr.base = http.DefaultTransport
				}
				resp, err := do(t, tr, rs)
				if err != nil || resp.StatusCode != target.want {
					t.Fatalf("redirect to %s: %v %v", target.to, resp, err)
				}
				got := target.sink.requests()
				if len(got) == 0 {
					t.Fatalf("redirect to %s: not followed", target.to)
				}
				for _, r := range got {
					if r.authorization != "" || r.dpop != "" {
						t.Errorf("redirect to %s carried Authorization %q, DPoP %q", target.to, r.authorization, r.dpop)
					}
				}
			}
			if len(as.paths) != paths {
				t.Errorf("the redirects reached the authorization server: %q", as.paths[paths:])
			}
			if got := unauthorized.requests(); len(got) != 1 {
				t.Errorf("the server redirected to was asked %d times (its metadata or a retry): %+v", len(got), got)
			}

			// Sent on purpose to another server, a request does not carry
			// the token either (the 401 there would start that server's
			// own authorization).
			tr.base = http.DefaultTransport
			req, _ := http.NewRequest(http.MethodPost, localhostURL(ok.srv.URL)+"/direct", strings.NewReader("{}"))
			if resp, err := (&http.Client{Transport: tr}).Do(req); err != nil || resp.StatusCode != 200 {
				t.Fatalf("another server: %v %v", resp, err)
			}
			for _, r := range ok.requests() {
				if r.path == "/direct" && (r.authorization != "" || r.dpop != "") {
					t.Errorf("a request to another server carried Authorization %q, DPoP %q", r.authorization, r.dpop)
				}
			}

			// Within the origin the credentials follow.
			tr.base = http.DefaultTransport
			location = rs.srv.URL + "/moved"
			if resp, err := do(t, tr, rs); err != nil || resp.StatusCode != 200 {
				t.Fatalf("same-origin redirect: %v %v", resp, err)
			}
		})
	}
}

// routeTo returns a RoundTripper that sends requests for host to the
// server at target and the others on as usual.
func routeTo(host, target string) http.RoundTripper {
	tu, _ := url.Parse(target)
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == host {
			r = r.Clone(r.Context())
			r.URL.Host = tu.Host
			r.Host = tu.Host
		}
		return http.DefaultTransport.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAuthorizationServerRedirects: the registration and token endpoints
// answering 307 get nothing re-sent to where they point (client secret,
// code, verifier, refresh token), with or without a client of the
// caller's, which is not changed.
func TestAuthorizationServerRedirects(t *testing.T) {
	for _, endpoint := range []string{"/register", "/token"} {
		for _, own := range []bool{false, true} {
			sink := newSink(t, http.StatusOK)
			as := newFakeAS(t, func(a *fakeAS) { a.authMethods = []string{AuthMethodPost}; a.secret = "reg-secret" })
			wrapAS(as, func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != endpoint {
					return false
				}
				http.Redirect(w, r, localhostURL(sink.srv.URL)+"/collect", http.StatusTemporaryRedirect)
				return true
			})
			rs := newFakeRS(t, func() *fakeAS { return as }, nil)
			o := Options{}
			var hc *http.Client
			if own {
				hc = &http.Client{}
				o.HTTPClient = hc
			}
			_, err := do(t, newTransport(o), rs)
			want := ErrTokenEndpoint
			if endpoint == "/register" {
				want = ErrNoRegistration
			}
			if !errors.Is(err, want) || !strings.Contains(err.Error(), "307") {
				t.Errorf("%s redirected (own client %t): err %v, want %v naming the 307", endpoint, own, err, want)
			}
			if got := sink.requests(); len(got) != 0 {
				t.Errorf("%s redirected (own client %t): the redirect was followed: %+v", endpoint, own, got)
			}
			if own && hc.CheckRedirect != nil {
				t.Errorf("the caller's HTTPClient was changed")
			}
		}
	}
}

// TestIDJAGRedirect: the token exchange at the identity provider, which
// carries the user's ID token, does not follow a redirect.
func TestIDJAGRedirect(t *testing.T) {
	sink := newSink(t, http.StatusOK)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, localhostURL(sink.srv.URL)+"/collect", http.StatusTemporaryRedirect)
	}))
	defer idp.Close()
	assert := IDJAGAssertion(IDJAGConfig{TokenEndpoint: idp.URL + "/token", ClientID: "idp-c",
		IDToken: func(context.Context) (string, error) { return "the-id-token", nil }})
	_, err := assert(context.Background(), AssertionRequest{Issuer: "https://as.example", Resource: "https://mcp.example/mcp"})
	if !errors.Is(err, ErrAssertion) || !strings.Contains(err.Error(), "307") {
		t.Errorf("err %v, want ErrAssertion naming the 307", err)
	}
	if got := sink.requests(); len(got) != 0 {
		t.Errorf("the redirect was followed: %+v", got)
	}
}

// TestMetadataRedirects: metadata fetches follow a redirect to where
// tokens could go (HTTPS, or plain HTTP on loopback), and refuse one
// anywhere else.
func TestMetadataRedirects(t *testing.T) {
	as := newFakeAS(t, nil)
	moved := newFakeAS(t, nil) // serves the metadata the AS redirects to
	moved.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(as.metadata())
	})
	var to string
	wrapAS(as, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/.well-known/oauth-authorization-server" {
			return false
		}
		http.Redirect(w, r, to, http.StatusFound)
		return true
	})
	rs := newFakeRS(t, func() *fakeAS { return as }, nil)

	to = localhostURL(moved.srv.URL) + "/metadata"
	if resp, err := do(t, newTransport(Options{}), rs); err != nil || resp.StatusCode != 200 {
		t.Fatalf("metadata moved on loopback: %v %v", resp, err)
	}

	// http on another host: refused before it is asked.
	var asked []string
	var mu sync.Mutex
	hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		asked = append(asked, r.URL.Host)
		mu.Unlock()
		if r.URL.Host == "metadata.example" {
			r = r.Clone(r.Context())
			r.URL.Host = moved.srv.Listener.Addr().String()
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	to = "http://metadata.example/metadata"
	_, err := do(t, newTransport(Options{HTTPClient: hc}), rs)
	if !errors.Is(err, ErrInsecureEndpoint) {
		t.Errorf("metadata redirected to plain http elsewhere: err %v, want ErrInsecureEndpoint", err)
	}
	for _, h := range asked {
		if h == "metadata.example" {
			t.Errorf("the insecure redirect was followed")
		}
	}
	if hc.CheckRedirect != nil {
		t.Errorf("the caller's HTTPClient was changed")
	}
}
