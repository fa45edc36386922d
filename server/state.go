package server

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// sealedState is what a requestState carries between MRTR rounds.
type sealedState struct {
	Answers map[string]json.RawMessage `json:"a,omitempty"`
	State   []byte                     `json:"s,omitempty"`
	// Expect names the input requests the round that sealed this state
	// issued (key → method): only answers under these keys are taken from
	// the retry's inputResponses.
	Expect map[string]string `json:"e,omitempty"`
	// Once, with its random ID, makes the state single-use: the retry
	// that presents it consumes ID in the server's OnceStore.
	Once bool   `json:"o,omitempty"`
	ID   string `json:"i,omitempty"`
}

// statePayload binds sealedState to the request it belongs to.
type statePayload struct {
	Method    string `json:"m"`
	Digest    string `json:"d"`
	Principal string `json:"p,omitempty"`
	Expires   int64  `json:"x"`
	sealedState
}

// sealer protects requestState with AES-256-GCM: clients can neither read
// nor alter it, and it is rejected once expired or when presented on
// another request or by another principal.
type sealer struct {
	aead cipher.AEAD   // seals, and opens first
	old  []cipher.AEAD // open what was sealed before a rotation
	ttl  time.Duration
	now  func() time.Time
}

// MaxPreviousStateKeys bounds Options.PreviousStateKeys: a token that opens
// under none of the keys costs one AES-GCM open per key.
const MaxPreviousStateKeys = 4

const stateVersion = "s1."

func newSealer(key []byte, previous [][]byte, ttl time.Duration) (*sealer, error) {
	if len(previous) > MaxPreviousStateKeys {
		return nil, errors.New("more than 4 PreviousStateKeys")
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	s := &sealer{aead: aead, ttl: ttl, now: time.Now}
	for _, k := range previous {
		a, err := newAEAD(k)
		if err != nil {
			return nil, err
		}
		s.old = append(s.old, a)
	}
	return s, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, errors.New("StateKey and PreviousStateKeys must be 32 bytes each")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

var stateAAD = []byte("mcpkit requestState v1")

func (s *sealer) seal(method, digest, principal string, st sealedState) (string, error) {
	p := statePayload{Method: method, Digest: digest, Principal: principal, Expires: s.now().Add(s.ttl).Unix(), sealedState: st}
	plain, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	return s.box(plain, stateVersion, stateAAD)
}

// box seals plain under a fresh random nonce and encodes it after version.
func (s *sealer) box(plain []byte, version string, aad []byte) (string, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := s.aead.Seal(nonce, nonce, plain, aad)
	return version + base64.RawURLEncoding.EncodeToString(sealed), nil
}

var (
	errStateMalformed = errors.New("malformed or tampered")
	errStateExpired   = errors.New("expired")
	errStateRequest   = errors.New("issued for a different request")
	errStatePrincipal = errors.New("issued to a different principal")
)

func (s *sealer) open(token, method, digest, principal string) (*sealedState, time.Time, error) {
	plain, err := s.unseal(token, stateVersion, stateAAD)
	if err != nil {
		return nil, time.Time{}, err
	}
	var p statePayload
	if err := json.Unmarshal(plain, &p); err != nil {
		return nil, time.Time{}, errStateMalformed
	}
	switch {
	case s.now().Unix() > p.Expires:
		return nil, time.Time{}, errStateExpired
	case p.Method != method || p.Digest != digest:
		return nil, time.Time{}, errStateRequest
	case p.Principal != principal:
		return nil, time.Time{}, errStatePrincipal
	}
	return &p.sealedState, time.Unix(p.Expires+1, 0), nil
}

// unseal checks token's version prefix and opens its AEAD box.
func (s *sealer) unseal(token, version string, aad []byte) ([]byte, error) {
	if len(token) <= len(version) || token[:len(version)] != version {
		return nil, errStateMalformed
	}
	raw, err := base64.RawURLEncoding.DecodeString(token[len(version):])
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return nil, errStateMalformed
	}
	nonce, box := raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, box, aad)
	for _, a := range s.old {
		if err == nil {
			break
		}
		plain, err = a.Open(nil, nonce, box, aad)
	}
	if err != nil {
		return nil, errStateMalformed
	}
	return plain, nil
}

// canonical re-encodes JSON with sorted object keys (RFC 8785's order),
// no white space and strings in their shortest form, so that a client
// that re-serialises its arguments on retry still matches the digest.
// Numbers keep their text: 9007199254740993 and 9007199254740992 differ
// here, though they are the same float64. raw is read as all peer JSON is
// (jsontext's defaults): a repeated member name or invalid UTF-8 is not
// canonicalized but kept as it is, which no other encoding matches.
func canonical(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	v := jsontext.Value(bytes.Clone(raw)) // Format works in place
	if err := v.Format(jsontext.ReorderRawObjects(true)); err != nil {
		return raw
	}
	return v
}

func digestOf(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		l := len(p)
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write(p)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
