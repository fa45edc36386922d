package auth

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Token is an access token with what came with it.
type Token struct {
	AccessToken  string
	TokenType    string
	RefreshToken string
	// Expiry is when the access token expires; zero means unknown.
	Expiry time.Time
	// Scope is the granted scope, space-separated, when the server said.
	Scope string
}

// expirySkew is how long before its expiry a token is treated as expired.
const expirySkew = 30 * time.Second

// usable reports whether the access token can still be sent.
func (t *Token) usable(now time.Time) bool {
	return t != nil && t.AccessToken != "" && (t.Expiry.IsZero() || now.Add(expirySkew).Before(t.Expiry))
}

// String describes the token without its secrets.
func (t Token) String() string {
	exp := "unknown"
	if !t.Expiry.IsZero() {
		exp = t.Expiry.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("auth.Token{type=%q scope=%q expiry=%s refreshable=%t}", t.TokenType, t.Scope, exp, t.RefreshToken != "")
}

// GoString is String, so that %#v does not print the secrets either.
func (t Token) GoString() string { return t.String() }

// LogValue logs the token without its secrets.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("type", t.TokenType), slog.String("scope", t.Scope),
		slog.Time("expiry", t.Expiry), slog.Bool("refreshable", t.RefreshToken != ""))
}

// ClientInfo is a client identity at one authorization server.
type ClientInfo struct {
	ClientID     string
	ClientSecret string
	// AuthMethod is the token endpoint authentication method:
	// client_secret_basic, client_secret_post or none.
	AuthMethod string
	// RedirectURI is the redirect URI a dynamic registration registered,
	// exactly (a loopback one with its port); "" when unknown or when the
	// client has none. Authorizations of the client use it, since
	// authorization servers may compare redirect URIs exactly.
	RedirectURI string
}

// String describes the client without its secret.
func (c ClientInfo) String() string {
	return fmt.Sprintf("auth.ClientInfo{id=%q method=%q secret=%t}", c.ClientID, c.AuthMethod, c.ClientSecret != "")
}

// GoString is String, so that %#v does not print the secret either.
func (c ClientInfo) GoString() string { return c.String() }

// LogValue logs the client without its secret.
func (c ClientInfo) LogValue() slog.Value {
	return slog.GroupValue(slog.String("client_id", c.ClientID), slog.String("method", c.AuthMethod))
}

// Key identifies stored tokens: the authorization server that issued them
// and the resource (the MCP server) they are for.
type Key struct {
	Issuer   string
	Resource string
}

// TokenStore keeps tokens per (issuer, resource) and client registrations
// per issuer, so that credentials of one authorization server are never
// used with another. Load methods return nil, nil when nothing is stored.
// Implementations must be safe for concurrent use.
type TokenStore interface {
	LoadToken(ctx context.Context, key Key) (*Token, error)
	SaveToken(ctx context.Context, key Key, tok *Token) error
	LoadClient(ctx context.Context, issuer string) (*ClientInfo, error)
	SaveClient(ctx context.Context, issuer string, c *ClientInfo) error
}

// MemoryStore is a TokenStore in memory, the default.
type MemoryStore struct {
	mu      sync.Mutex
	tokens  map[Key]Token
	clients map[string]ClientInfo
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{tokens: map[Key]Token{}, clients: map[string]ClientInfo{}}
}

var _ TokenStore = (*MemoryStore)(nil)

// LoadToken implements TokenStore.
func (m *MemoryStore) LoadToken(_ context.Context, key Key) (*Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[key]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

// SaveToken implements TokenStore; a nil token deletes.
func (m *MemoryStore) SaveToken(_ context.Context, key Key, tok *Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if tok == nil {
		delete(m.tokens, key)
	} else {
		m.tokens[key] = *tok
	}
	return nil
}

// LoadClient implements TokenStore.
func (m *MemoryStore) LoadClient(_ context.Context, issuer string) (*ClientInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.clients[issuer]
	if !ok {
		return nil, nil
	}
	return &c, nil
}

// SaveClient implements TokenStore; a nil client deletes.
func (m *MemoryStore) SaveClient(_ context.Context, issuer string, c *ClientInfo) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c == nil {
		delete(m.clients, issuer)
	} else {
		m.clients[issuer] = *c
	}
	return nil
}
