package server

import (
	"encoding/json"
	"errors"
	"time"
)

// Tokens that handlers seal (Request.Seal) use their own version prefix and
// additional data, so that neither a requestState nor a token sealed for
// another purpose opens as one.
const tokenVersion = "t1."

// maxTokenLen bounds what Unseal decodes: far above any continuation a
// handler seals, far below a request body.
const maxTokenLen = 64 << 10

type tokenPayload struct {
	Principal string `json:"p,omitempty"`
	Expires   int64  `json:"x"`
	Data      []byte `json:"d"`
}

func tokenAAD(purpose string) []byte {
	return append([]byte("mcpkit sealed token v1\x00"), purpose...)
}

// Errors of Unseal.
var (
	// ErrTokenInvalid is returned for a token that was altered, is not a
	// token, or was sealed for another purpose or principal.
	ErrTokenInvalid = errors.New("server: invalid token")
	// ErrTokenExpired is returned for a token past its expiry.
	ErrTokenExpired = errors.New("server: token expired")
)

// Seal returns data sealed with the server's state key (AES-256-GCM under
// Options.StateKey), bound to purpose and to the request's principal and
// valid for ttl (0 means Options.StateTTL). Handlers use it for opaque
// continuations — a cursor into a tool's results, say — that a client hands
// back on a later request: the client can neither read nor alter them, and
// replicas sharing the state key open each other's tokens.
func (r *Request) Seal(purpose string, data []byte, ttl time.Duration) (string, error) {
	sl := r.server.sealer
	if ttl <= 0 {
		ttl = sl.ttl
	}
	plain, err := json.Marshal(tokenPayload{Principal: r.Principal, Expires: sl.now().Add(ttl).Unix(), Data: data})
	if err != nil {
		return "", err
	}
	return sl.box(plain, tokenVersion, tokenAAD(purpose))
}

// Unseal returns the data of a token Seal made for the same purpose and
// principal. It returns ErrTokenInvalid for anything else, and
// ErrTokenExpired once the token's time has passed.
func (r *Request) Unseal(purpose, token string) ([]byte, error) {
	sl := r.server.sealer
	if len(token) > maxTokenLen {
		return nil, ErrTokenInvalid
	}
	plain, err := sl.unseal(token, tokenVersion, tokenAAD(purpose))
	if err != nil {
		return nil, ErrTokenInvalid
	}
	var p tokenPayload
	if err := json.Unmarshal(plain, &p); err != nil || p.Principal != r.Principal {
		return nil, ErrTokenInvalid
	}
	if sl.now().Unix() > p.Expires {
		return nil, ErrTokenExpired
	}
	return p.Data, nil
}
