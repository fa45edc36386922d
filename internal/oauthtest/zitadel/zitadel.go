// Package zitadel is for tests only. It runs the OpenID Provider of
// github.com/zitadel/oidc (its op package over the example storage and
// login UI) as a loopback authorization server, with the knobs mcpkit's
// tests need beyond the example storage: service clients of the client
// credentials grant with JWT or opaque access tokens, their audiences and
// claims, introspection of their tokens, extra scopes for the registered
// clients, and signing keys that can be rotated.
package zitadel

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client is a registered web client of the example storage: the
// authorization code and refresh token grants, opaque access tokens.
type Client struct {
	ID, Secret, RedirectURI string
}

// Service is a client of the client credentials grant.
type Service struct {
	// JWT makes its access tokens JWTs; they are opaque otherwise.
	JWT bool
	// Audience is the aud of its tokens.
	Audience []string
	// Claims are claims of its JWT access tokens besides scope.
	Claims map[string]any
	// Subject, when set, is the sub of its tokens instead of its client
	// ID: two service clients with one Subject are one principal.
	Subject string
	// Lifetime, when not zero, is how long after they are issued its
	// tokens expire instead of the provider's default; a negative one
	// issues tokens already expired.
	Lifetime time.Duration
}

// Config configures a Provider.
type Config struct {
	// Clients are the registered web clients.
	Clients []Client
	// Scopes are allowed to the registered clients besides the example
	// storage's (which drops others silently).
	Scopes []string
	// Services, when set, names the service clients: it returns the
	// service client of an ID, and false for other IDs. Service clients
	// authenticate with ServiceSecret; their JWT access tokens carry the
	// scope claim (RFC 9068), and the provider answers introspection of
	// their tokens to the clients of their audience.
	Services      func(clientID string) (Service, bool)
	ServiceSecret string
	// KeyID, when set, is the ID of an RS256 key the provider signs with
	// instead of the example storage's; Rotate replaces it.
	KeyID string
	// Logger is passed to the example server, which makes it the
	// process's default logger; nil leaves the default alone.
	Logger *slog.Logger
	// Wrap, when set, wraps the provider's handler.
	Wrap func(http.Handler) http.Handler
}

// Provider is a running OpenID Provider.
type Provider struct {
	// Issuer is its issuer URL, http://127.0.0.1:port.
	Issuer string
	st     *store
}

// Start starts a provider that is closed when t ends.
func Start(t testing.TB, cfg *Config) *Provider {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	p := &Provider{Issuer: "http://" + srv.Listener.Addr().String()}
	clients := map[string]*storage.Client{}
	for _, c := range cfg.Clients {
		clients[c.ID] = storage.WebClient(c.ID, c.Secret, c.RedirectURI)
	}
	p.st = &store{
		Storage: storage.NewStorageWithClients(storage.NewUserStore(p.Issuer), clients),
		cfg:     cfg,
		tokens:  map[string]tokenInfo{},
	}
	if cfg.KeyID != "" {
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		p.st.keys = []*sigKey{{id: cfg.KeyID, alg: jose.RS256, key: rk}}
	}
	var h http.Handler = exampleop.SetupServer(p.Issuer, p.st, cfg.Logger, false)
	if cfg.Wrap != nil {
		h = cfg.Wrap(h)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// Discovery is what the tests read of the provider's discovery document.
type Discovery struct {
	Issuer                string   `json:"issuer"`
	TokenEndpoint         string   `json:"token_endpoint"`
	IntrospectionEndpoint string   `json:"introspection_endpoint"`
	JWKSURI               string   `json:"jwks_uri"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
	ScopesSupported       []string `json:"scopes_supported"`
}

// Discover gets the provider's discovery document.
func (p *Provider) Discover(t testing.TB) Discovery {
	t.Helper()
	u := p.Issuer + "/.well-known/openid-configuration"
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	var d Discovery
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return d
}

// Rotate makes a new ES256 key the signing key; the old keys stay
// published. It needs Config.KeyID.
func (p *Provider) Rotate(t testing.TB) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	if p.st.keys == nil {
		t.Fatal("zitadel: Rotate without Config.KeyID")
	}
	p.st.keys = append(p.st.keys, &sigKey{id: "es256-" + time.Now().Format("150405.000000"), alg: jose.ES256, key: k})
}

// store is the example storage with the Config's clients and keys.
type store struct {
	*storage.Storage
	cfg *Config

	mu     sync.Mutex
	keys   []*sigKey // the last one signs; nil for the example's key
	tokens map[string]tokenInfo
}

type tokenInfo struct {
	clientID string
	audience []string
	scopes   []string
	exp      time.Time
}

func (s *store) service(clientID string) (Service, bool) {
	if s.cfg.Services == nil {
		return Service{}, false
	}
	return s.cfg.Services(clientID)
}

// sigKey is a signing key of the provider (op.SigningKey and op.Key).
type sigKey struct {
	id  string
	alg jose.SignatureAlgorithm
	key any // *rsa.PrivateKey or *ecdsa.PrivateKey
}

func (k *sigKey) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k *sigKey) Key() any                                    { return k.key }
func (k *sigKey) ID() string                                  { return k.id }

type pubKey struct{ *sigKey }

func (k pubKey) Algorithm() jose.SignatureAlgorithm { return k.alg }
func (k pubKey) Use() string                        { return "sig" }
func (k pubKey) Key() any {
	switch p := k.key.(type) {
	case *rsa.PrivateKey:
		return &p.PublicKey
	case *ecdsa.PrivateKey:
		return &p.PublicKey
	}
	return nil
}

func (s *store) SigningKey(ctx context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		return s.Storage.SigningKey(ctx)
	}
	return s.keys[len(s.keys)-1], nil
}

func (s *store) SignatureAlgorithms(ctx context.Context) ([]jose.SignatureAlgorithm, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		return s.Storage.SignatureAlgorithms(ctx)
	}
	var algs []jose.SignatureAlgorithm
	for _, k := range s.keys {
		algs = append(algs, k.alg)
	}
	return algs, nil
}

func (s *store) KeySet(ctx context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		return s.Storage.KeySet(ctx)
	}
	var out []op.Key
	for _, k := range s.keys {
		out = append(out, pubKey{k})
	}
	return out, nil
}

// GetClientByClientID allows the registered clients the Config's scopes.
func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil || len(s.cfg.Scopes) == 0 {
		return c, err
	}
	return scopesClient{c, s.cfg.Scopes}, nil
}

type scopesClient struct {
	op.Client
	scopes []string
}

func (c scopesClient) IsScopeAllowed(scope string) bool {
	return slices.Contains(c.scopes, scope) || c.Client.IsScopeAllowed(scope)
}

// svcClient is a service client: a web client with the client
// credentials grant and the access token type of its Service.
type svcClient struct {
	op.Client
	jwt bool
}

func (c svcClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}

func (c svcClient) AccessTokenType() op.AccessTokenType {
	if c.jwt {
		return op.AccessTokenTypeJWT
	}
	return op.AccessTokenTypeBearer
}

func (s *store) ClientCredentials(ctx context.Context, clientID, secret string) (op.Client, error) {
	svc, ok := s.service(clientID)
	if !ok {
		return s.Storage.ClientCredentials(ctx, clientID, secret)
	}
	if secret != s.cfg.ServiceSecret {
		return nil, oidc.ErrInvalidClient()
	}
	return svcClient{storage.WebClient(clientID, secret, "http://127.0.0.1/cb"), svc.JWT}, nil
}

func (s *store) ClientCredentialsTokenRequest(ctx context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	svc, ok := s.service(clientID)
	if !ok {
		return s.Storage.ClientCredentialsTokenRequest(ctx, clientID, scopes)
	}
	sub := clientID
	if svc.Subject != "" {
		sub = svc.Subject
	}
	return &svcTokenRequest{JWTTokenRequest: oidc.JWTTokenRequest{Subject: sub, Audience: svc.Audience, Scopes: scopes}, clientID: clientID}, nil
}

// svcTokenRequest is a service client's token request, which remembers
// the client when its Subject is another.
type svcTokenRequest struct {
	oidc.JWTTokenRequest
	clientID string
}

func (s *store) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	clientID := req.GetSubject()
	if r, ok := req.(*svcTokenRequest); ok {
		clientID = r.clientID
	}
	if svc, ok := s.service(clientID); ok && err == nil {
		if svc.Lifetime != 0 {
			exp = time.Now().Add(svc.Lifetime)
		}
		s.mu.Lock()
		s.tokens[id] = tokenInfo{clientID: clientID, audience: req.GetAudience(), scopes: req.GetScopes(), exp: exp}
		s.mu.Unlock()
	}
	return id, exp, err
}

// GetPrivateClaimsFromScopes puts the scope claim, which the provider
// leaves out, and the Service's claims into service clients' JWT access
// tokens.
func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	svc, ok := s.service(clientID)
	if !ok {
		return s.Storage.GetPrivateClaimsFromScopes(ctx, userID, clientID, scopes)
	}
	claims := map[string]any{"scope": strings.Join(scopes, " ")}
	maps.Copy(claims, svc.Claims)
	return claims, nil
}

// SetIntrospectionFromToken answers for the tokens of the service
// clients, to a client of their audience.
func (s *store) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	ti, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok {
		return s.Storage.SetIntrospectionFromToken(ctx, resp, tokenID, subject, clientID)
	}
	if time.Now().After(ti.exp) || !slices.Contains(ti.audience, clientID) {
		return oidc.ErrInvalidRequest()
	}
	resp.Scope = ti.scopes
	resp.ClientID = ti.clientID
	resp.Subject = subject
	resp.Audience = ti.audience
	resp.Expiration = oidc.FromTime(ti.exp)
	resp.Issuer = op.IssuerFromContext(ctx)
	resp.TokenType = "Bearer"
	return nil
}
