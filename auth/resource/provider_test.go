package resource

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// The tests run the zitadel/oidc example OpenID Provider on loopback and
// obtain real access tokens from its token endpoint with the client
// credentials grant. The example storage is wrapped (asStorage) where it
// has no knob for what the tests need: service clients whose tokens are
// JWTs or opaque, audiences, the scope claim, a cnf.jkt claim, signing
// keys that can be rotated, and the introspection answer.

const (
	rsClientID = "mcp-rs" // the resource server, at the introspection endpoint
	rsSecret   = "rs-secret"
	svcSecret  = "svc-secret"

	scopeRead  = "mcp:read"
	scopeWrite = "mcp:write"

	otherAudience = "https://other.example/mcp"
)

// Service clients of the provider, with the kind of token they get.
const (
	svcJWT      = "svc-jwt"      // JWT, aud = the resource
	svcOther    = "svc-other"    // JWT, aud = another resource
	svcOpaque   = "svc-opaque"   // opaque, aud = the resource and mcp-rs
	svcOpaqueRS = "svc-opaque-x" // opaque, aud = another resource and mcp-rs
	svcDPoP     = "svc-dpop"     // JWT bound to the test's DPoP key
)

type provider struct {
	issuer, tokenURL, introspectURL, jwksURL string
	st                                       *asStorage
}

type asStorage struct {
	*storage.Storage
	resource string
	jkt      string // cnf.jkt of svcDPoP's tokens

	mu     sync.Mutex
	keys   []*sigKey // the last one signs
	tokens map[string]tokenInfo
}

type tokenInfo struct {
	clientID string
	audience []string
	scopes   []string
	exp      time.Time
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

func (s *asStorage) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1], nil
}

func (s *asStorage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var algs []jose.SignatureAlgorithm
	for _, k := range s.keys {
		algs = append(algs, k.alg)
	}
	return algs, nil
}

func (s *asStorage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []op.Key
	for _, k := range s.keys {
		out = append(out, pubKey{k})
	}
	return out, nil
}

// rotate makes a new ES256 key the signing key; the old keys stay
// published.
func (s *asStorage) rotate(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, &sigKey{id: "es256-" + time.Now().Format("150405.000000"), alg: jose.ES256, key: k})
}

// svcClient is a service client: the example's web client with the
// client credentials grant and the access token type the test wants.
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

func (s *asStorage) ClientCredentials(ctx context.Context, clientID, secret string) (op.Client, error) {
	switch clientID {
	case svcJWT, svcOther, svcOpaque, svcOpaqueRS, svcDPoP:
	default:
		return s.Storage.ClientCredentials(ctx, clientID, secret)
	}
	if secret != svcSecret {
		return nil, oidc.ErrInvalidClient()
	}
	return svcClient{storage.WebClient(clientID, secret, "http://127.0.0.1/cb"), clientID != svcOpaque && clientID != svcOpaqueRS}, nil
}

func (s *asStorage) ClientCredentialsTokenRequest(ctx context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	aud := []string{s.resource}
	switch clientID {
	case svcOther:
		aud = []string{otherAudience}
	case svcOpaque:
		aud = []string{s.resource, rsClientID}
	case svcOpaqueRS:
		aud = []string{otherAudience, rsClientID}
	}
	return &oidc.JWTTokenRequest{Subject: clientID, Audience: aud, Scopes: scopes}, nil
}

func (s *asStorage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	if err == nil {
		s.mu.Lock()
		s.tokens[id] = tokenInfo{clientID: req.GetSubject(), audience: req.GetAudience(), scopes: req.GetScopes(), exp: exp}
		s.mu.Unlock()
	}
	return id, exp, err
}

// GetPrivateClaimsFromScopes puts the scope claim (RFC 9068) into JWT
// access tokens, which the provider leaves out, and cnf.jkt into
// svcDPoP's.
func (s *asStorage) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	claims := map[string]any{"scope": strings.Join(scopes, " ")}
	if clientID == svcDPoP {
		claims["cnf"] = map[string]any{"jkt": s.jkt}
	}
	return claims, nil
}

// SetIntrospectionFromToken answers for the tokens of the service
// clients, to the resource server when it is in their audience.
func (s *asStorage) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	ti, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(ti.exp) {
		return oidc.ErrInvalidRequest()
	}
	for _, a := range ti.audience {
		if a == clientID {
			resp.Scope = ti.scopes
			resp.ClientID = ti.clientID
			resp.Subject = subject
			resp.Audience = ti.audience
			resp.Expiration = oidc.FromTime(ti.exp)
			resp.Issuer = op.IssuerFromContext(ctx)
			resp.TokenType = "Bearer"
			return nil
		}
	}
	return oidc.ErrInvalidRequest()
}

// startProvider starts the provider for resource, its service tokens
// bound (for svcDPoP) to jkt.
func startProvider(t *testing.T, resource, jkt string) *provider {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	p := &provider{issuer: "http://" + srv.Listener.Addr().String()}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*storage.Client{rsClientID: storage.WebClient(rsClientID, rsSecret, "http://127.0.0.1/cb")}
	p.st = &asStorage{
		Storage:  storage.NewStorageWithClients(storage.NewUserStore(p.issuer), clients),
		resource: resource,
		jkt:      jkt,
		keys:     []*sigKey{{id: "rs256-1", alg: jose.RS256, key: rk}},
		tokens:   map[string]tokenInfo{},
	}
	srv.Config.Handler = exampleop.SetupServer(p.issuer, p.st, nil, false)
	srv.Start()
	t.Cleanup(srv.Close)

	var disc struct {
		Issuer                string `json:"issuer"`
		TokenEndpoint         string `json:"token_endpoint"`
		IntrospectionEndpoint string `json:"introspection_endpoint"`
		JWKSURI               string `json:"jwks_uri"`
	}
	if err := getJSON(context.Background(), http.DefaultClient, p.issuer+"/.well-known/openid-configuration", &disc); err != nil {
		t.Fatal(err)
	}
	if disc.Issuer != p.issuer || disc.TokenEndpoint == "" || disc.IntrospectionEndpoint == "" || disc.JWKSURI == "" {
		t.Fatalf("provider discovery: %+v", disc)
	}
	p.tokenURL, p.introspectURL, p.jwksURL = disc.TokenEndpoint, disc.IntrospectionEndpoint, disc.JWKSURI
	return p
}

// token gets an access token for client with the client credentials
// grant.
func (p *provider) token(t *testing.T, client string, scopes ...string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {strings.Join(scopes, " ")}}
	req, _ := http.NewRequest(http.MethodPost, p.tokenURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, svcSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != http.StatusOK || tr.AccessToken == "" {
		t.Fatalf("token for %s: %s %v %s %s", client, resp.Status, err, tr.Error, tr.Description)
	}
	return tr.AccessToken
}
