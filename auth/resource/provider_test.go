package resource

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/oauthtest/zitadel"
)

// The tests run the zitadel/oidc example OpenID Provider on loopback and
// obtain real access tokens from its token endpoint with the client
// credentials grant: service clients whose tokens are JWTs or opaque, with
// audiences, the scope claim and a cnf.jkt claim, signing keys that can be
// rotated, and introspection.

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
	st                                       asStorage
}

// asStorage is what the tests change in the provider.
type asStorage struct{ *zitadel.Provider }

// rotate makes a new ES256 key the signing key; the old keys stay
// published.
func (s asStorage) rotate(t *testing.T) { s.Rotate(t) }

// startProvider starts the provider for resource, its service tokens
// bound (for svcDPoP) to jkt.
func startProvider(t *testing.T, resource, jkt string) *provider {
	t.Helper()
	zp := zitadel.Start(t, &zitadel.Config{
		Clients:       []zitadel.Client{{ID: rsClientID, Secret: rsSecret, RedirectURI: "http://127.0.0.1/cb"}},
		ServiceSecret: svcSecret,
		KeyID:         "rs256-1",
		Services: func(clientID string) (zitadel.Service, bool) {
			svc := zitadel.Service{JWT: true, Audience: []string{resource}}
			switch clientID {
			case svcJWT:
			case svcOther:
				svc.Audience = []string{otherAudience}
			case svcOpaque:
				svc = zitadel.Service{Audience: []string{resource, rsClientID}}
			case svcOpaqueRS:
				svc = zitadel.Service{Audience: []string{otherAudience, rsClientID}}
			case svcDPoP:
				svc.Claims = map[string]any{"cnf": map[string]any{"jkt": jkt}}
			default:
				return svc, false
			}
			return svc, true
		},
	})
	p := &provider{issuer: zp.Issuer, st: asStorage{zp}}
	disc := zp.Discover(t)
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
