package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Principal is the authenticated caller of a request, as the access token
// describes it.
type Principal struct {
	// Subject is the token's sub claim (the resource owner, or the client
	// for the client credentials grant).
	Subject string
	// ClientID is the client the token was issued to (client_id claim).
	ClientID string
	// Issuer is the token's iss; for an introspection answer without
	// iss, the verifier's Issuer.
	Issuer string
	// Audience is the token's aud.
	Audience []string
	// Scopes are the scopes granted (the scope claim, or scp).
	Scopes []string
	// Expiry is when the token expires; zero when unknown.
	Expiry time.Time
	// JKT is the JWK SHA-256 thumbprint the token is bound to (cnf.jkt,
	// RFC 9449), or "" for a bearer token.
	JKT string
	// Claims are all the claims of the token (JWT payload or introspection
	// response), numbers as json.Number.
	Claims map[string]any
}

// ID identifies the principal for binding state to it, and is what
// Protect sets with server.WithPrincipal: legacy sessions, HTTP+SSE
// streams, sealed requestState and cursors are bound to it. It names the
// issuer and the kind of identity, so that two issuers' "alice" are two
// principals, and so are a subject "alice" and a client "alice" (a
// token without sub, known by its client_id):
//
//	<issuer>#sub=<sub>
//	<issuer>#client_id=<client_id>
//
// with the value query-escaped (so the last "#" ends the issuer, and no
// two principals have one ID). It is "" when the token names neither a
// subject nor a client; Protect refuses such a token.
func (p *Principal) ID() string {
	switch {
	case p.Subject != "":
		return p.Issuer + "#sub=" + url.QueryEscape(p.Subject)
	case p.ClientID != "":
		return p.Issuer + "#client_id=" + url.QueryEscape(p.ClientID)
	}
	return ""
}

// HasScopes reports whether every scope in want was granted.
func (p *Principal) HasScopes(want ...string) bool {
	for _, s := range want {
		if !slices.Contains(p.Scopes, s) {
			return false
		}
	}
	return true
}

type principalKey struct{}

// WithPrincipal returns a context carrying p. Protect sets it; it is
// exported for tests of handlers.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the Principal that Protect put on the context, or
// nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Verifier validates an access token presented with req and describes
// its holder. Errors that say the token is not acceptable wrap
// ErrInvalidToken (answered 401 invalid_token) or ErrInvalidDPoPProof;
// any other error means the token could not be checked (the authorization
// server is unreachable, say) and is answered 503. Errors never contain
// the token.
type Verifier interface {
	Verify(ctx context.Context, token string, req *http.Request) (*Principal, error)
}

var (
	// ErrInvalidToken is wrapped by the errors of a token that is
	// malformed, expired, revoked, for another audience or issuer, or
	// otherwise unacceptable.
	ErrInvalidToken = errors.New("invalid token")
	// ErrInvalidDPoPProof is wrapped by the errors of a missing or bad DPoP
	// proof for a sender-constrained token.
	ErrInvalidDPoPProof = errors.New("invalid DPoP proof")
	// ErrBusy is wrapped by the errors of a token that could not be
	// checked for lack of capacity (introspection calls for unknown
	// tokens beyond IntrospectionVerifier.UnknownTokenRate, a DPoP replay
	// cache that cannot take the proof): not the token's fault; Protect
	// answers 503 with Retry-After, and the client may try again.
	ErrBusy = errors.New("resource: busy")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, args...))
}

func invalidProof(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidDPoPProof, fmt.Sprintf(format, args...))
}

// claimSet is the decoded payload of a token (or an introspection
// response), with accessors that tolerate the shapes found in practice.
type claimSet map[string]any

func decodeClaims(b []byte) (claimSet, error) {
	// Read as all peer input is (jsonrpc.Unmarshal): a repeated claim is
	// refused, not resolved, since two "aud" or "sub" members are read
	// differently by different parsers; names are exact, and numbers keep
	// their text.
	var v jsonrpc.Any
	if err := jsonrpc.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	m, ok := v.Value.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

func (c claimSet) str(name string) (string, bool) {
	s, ok := c[name].(string)
	return s, ok
}

// time returns a NumericDate claim; ok is false when absent, err non-nil
// when malformed.
func (c claimSet) time(name string) (t time.Time, ok bool, err error) {
	v, present := c[name]
	if !present {
		return time.Time{}, false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return time.Time{}, false, fmt.Errorf("claim %s is not a number", name)
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, false, fmt.Errorf("claim %s is not a number", name)
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), true, nil
}

// strings returns a claim that is a string or an array of strings.
func (c claimSet) strings(name string) []string {
	switch v := c[name].(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// scopes returns the scope claim (space-separated string, RFC 9068 and
// RFC 7662) or else scp (array or space-separated string).
func (c claimSet) scopes() []string {
	if s, ok := c["scope"].(string); ok {
		return strings.Fields(s)
	}
	switch v := c["scp"].(type) {
	case string:
		return strings.Fields(v)
	case []any:
		return c.strings("scp")
	}
	return nil
}

// jkt returns cnf.jkt, or "".
func (c claimSet) jkt() string {
	cnf, _ := c["cnf"].(map[string]any)
	s, _ := cnf["jkt"].(string)
	return s
}

// checkTimes checks exp (required when requireExp) and nbf against now
// with leeway.
func (c claimSet) checkTimes(now time.Time, leeway time.Duration, requireExp bool) (time.Time, error) {
	exp, ok, err := c.time("exp")
	if err != nil {
		return time.Time{}, invalid("%v", err)
	}
	if !ok && requireExp {
		return time.Time{}, invalid("no exp claim")
	}
	if ok && !now.Before(exp.Add(leeway)) {
		return time.Time{}, invalid("token expired")
	}
	nbf, ok, err := c.time("nbf")
	if err != nil {
		return time.Time{}, invalid("%v", err)
	}
	if ok && now.Add(leeway).Before(nbf) {
		return time.Time{}, invalid("token not valid yet")
	}
	return exp, nil
}

// principal builds the Principal of c.
func (c claimSet) principal(exp time.Time) *Principal {
	p := &Principal{Audience: c.strings("aud"), Scopes: c.scopes(), Expiry: exp, JKT: c.jkt(), Claims: c}
	p.Subject, _ = c.str("sub")
	p.ClientID, _ = c.str("client_id")
	p.Issuer, _ = c.str("iss")
	return p
}
