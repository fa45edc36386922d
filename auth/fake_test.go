package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeAS is an authorization server over loopback that records what it is
// sent.
type fakeAS struct {
	srv          *httptest.Server
	prefix       string // issuer path, e.g. "/tenant1"
	metadataPath string // "" means /.well-known/oauth-authorization-server+prefix
	noMetadata   bool
	issuer       string // overrides the metadata issuer
	issSupported *bool
	issMode      string // "correct" (default), "omit", "wrong", "slash"
	authMethods  []string
	scopes       []string
	cimd         bool
	noDCR        bool
	noPKCE       bool
	expiresIn    int
	refresh      bool
	clientID     string // returned by registration; "" means "dyn-client"
	tokenURL     string // overrides the metadata token_endpoint
	secret       string // returned by registration

	mu        sync.Mutex
	paths     []string
	authQs    []url.Values
	tokenReqs []*tokenReq
	regBodies []map[string]any
	challenge string
	tokens    map[string][]string // issued token -> scopes
	n         int
}

type tokenReq struct {
	form  url.Values
	basic [2]string // decoded Basic credentials, if any
}

func newFakeAS(t *testing.T, configure func(*fakeAS)) *fakeAS {
	a := &fakeAS{tokens: map[string][]string{}}
	if configure != nil {
		configure(a)
	}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAS) url() string { return a.srv.URL + a.prefix }

func (a *fakeAS) metadata() map[string]any {
	iss := a.url()
	if a.issuer != "" {
		iss = a.issuer
	}
	m := map[string]any{
		"issuer":                   iss,
		"authorization_endpoint":   a.url() + "/authorize",
		"token_endpoint":           a.url() + "/token",
		"response_types_supported": []string{"code"},
	}
	if a.tokenURL != "" {
		m["token_endpoint"] = a.tokenURL
	}
	if !a.noPKCE {
		m["code_challenge_methods_supported"] = []string{"S256"}
	}
	if !a.noDCR {
		m["registration_endpoint"] = a.url() + "/register"
	}
	if a.authMethods != nil {
		m["token_endpoint_auth_methods_supported"] = a.authMethods
	}
	if a.scopes != nil {
		m["scopes_supported"] = a.scopes
	}
	if a.cimd {
		m["client_id_metadata_document_supported"] = true
	}
	if a.issSupported != nil {
		m["authorization_response_iss_parameter_supported"] = *a.issSupported
	}
	return m
}

func (a *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.paths = append(a.paths, r.URL.Path)
	mp := a.metadataPath
	if mp == "" {
		mp = "/.well-known/oauth-authorization-server" + a.prefix
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == mp && !a.noMetadata:
		_ = json.NewEncoder(w).Encode(a.metadata())
	case r.Method == http.MethodGet && r.URL.Path == a.prefix+"/authorize":
		q := r.URL.Query()
		a.authQs = append(a.authQs, q)
		a.challenge = q.Get("code_challenge")
		ru, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", 400)
			return
		}
		rq := ru.Query()
		rq.Set("code", "the-code-"+q.Get("scope"))
		rq.Set("state", q.Get("state"))
		switch a.issMode {
		case "", "correct":
			if a.issSupported != nil && *a.issSupported {
				rq.Set("iss", a.url())
			}
		case "wrong":
			rq.Set("iss", "https://evil.example.com")
		case "slash":
			rq.Set("iss", a.url()+"/")
		}
		ru.RawQuery = rq.Encode()
		http.Redirect(w, r, ru.String(), http.StatusFound)
	case r.Method == http.MethodPost && r.URL.Path == a.prefix+"/token":
		_ = r.ParseForm()
		tr := &tokenReq{form: r.PostForm}
		if id, sec, ok := r.BasicAuth(); ok {
			id, _ = url.QueryUnescape(id)
			sec, _ = url.QueryUnescape(sec)
			tr.basic = [2]string{id, sec}
		}
		a.tokenReqs = append(a.tokenReqs, tr)
		var scopes []string
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if base64.RawURLEncoding.EncodeToString(sum[:]) != a.challenge {
				w.WriteHeader(400)
				_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"verifier ` + r.PostForm.Get("code_verifier") + `"}`))
				return
			}
			scopes = strings.Fields(strings.TrimPrefix(r.PostForm.Get("code"), "the-code-"))
		case "refresh_token":
			if !strings.HasPrefix(r.PostForm.Get("refresh_token"), "rt-") {
				w.WriteHeader(400)
				_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
				return
			}
			scopes = a.tokens[strings.TrimPrefix(r.PostForm.Get("refresh_token"), "rt-")]
		}
		a.n++
		tok := fmt.Sprintf("at-%d", a.n)
		a.tokens[tok] = scopes
		resp := map[string]any{"access_token": tok, "token_type": "Bearer", "scope": strings.Join(scopes, " ")}
		if a.expiresIn != 0 {
			resp["expires_in"] = a.expiresIn
		}
		if a.refresh {
			resp["refresh_token"] = "rt-" + tok
		}
		_ = json.NewEncoder(w).Encode(resp)
	case r.Method == http.MethodPost && r.URL.Path == a.prefix+"/register" && !a.noDCR:
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		a.regBodies = append(a.regBodies, body)
		id := a.clientID
		if id == "" {
			id = "dyn-client"
		}
		resp := map[string]any{"client_id": id}
		if a.secret != "" {
			resp["client_secret"] = a.secret
		}
		w.WriteHeader(201)
		_ = json.NewEncoder(w).Encode(resp)
	default:
		http.NotFound(w, r)
	}
}

// fakeRS is an MCP endpoint at /mcp that wants a token the AS issued.
type fakeRS struct {
	srv         *httptest.Server
	as          func() *fakeAS // the current authorization server
	prmPath     string         // "" means /.well-known/oauth-protected-resource/mcp; "-" none
	prmInHeader bool
	resource    string   // overrides the PRM resource
	scopes      []string // PRM scopes_supported
	challenge   string   // scope in the 401 challenge
	need        []string // scopes a request needs, else 403 insufficient_scope
	stepScope   string   // scope named in the 403 challenge
	before      []string // authorization servers listed before the AS

	mu    sync.Mutex
	paths []string
	auths []string // Authorization headers of /mcp requests
}

func newFakeRS(t *testing.T, as func() *fakeAS, configure func(*fakeRS)) *fakeRS {
	s := &fakeRS{as: as, prmInHeader: true}
	if configure != nil {
		configure(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeRS) prm() string {
	if s.prmPath == "" {
		return "/.well-known/oauth-protected-resource/mcp"
	}
	return s.prmPath
}

func (s *fakeRS) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	if r.Method == http.MethodGet && r.URL.Path == s.prm() && s.prmPath != "-" {
		res := s.srv.URL + "/mcp"
		if s.prm() == "/.well-known/oauth-protected-resource" {
			res = s.srv.URL
		}
		if s.resource != "" {
			res = s.resource
		}
		m := map[string]any{"resource": res, "authorization_servers": append(append([]string(nil), s.before...), s.as().url())}
		if s.scopes != nil {
			m["scopes_supported"] = s.scopes
		}
		_ = json.NewEncoder(w).Encode(m)
		return
	}
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	h := r.Header.Get("Authorization")
	s.mu.Lock()
	s.auths = append(s.auths, h)
	s.mu.Unlock()
	as := s.as()
	as.mu.Lock()
	scopes, ok := as.tokens[strings.TrimPrefix(h, "Bearer ")]
	as.mu.Unlock()
	if !ok || !strings.HasPrefix(h, "Bearer ") {
		var params []string
		if s.challenge != "" {
			params = append(params, `scope="`+s.challenge+`"`)
		}
		if s.prmInHeader && s.prmPath != "-" {
			params = append(params, `resource_metadata="`+s.srv.URL+s.prm()+`"`)
		}
		params = append(params, `error="invalid_token"`)
		w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	for _, n := range s.need {
		if !slices.Contains(scopes, n) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+s.stepScope+`", resource_metadata="`+s.srv.URL+s.prm()+`"`)
			w.WriteHeader(http.StatusForbidden)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"ok":true}`))
}

// do posts a body to the RS's /mcp through tr.
func do(t *testing.T, tr *Transport, rs *fakeRS) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, rs.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

func newTransport(o Options) *Transport {
	if o.Authorizer == nil {
		o.Authorizer = &HeadlessAuthorizer{}
	}
	return NewTransport(&o)
}

func ptr[T any](v T) *T { return &v }
