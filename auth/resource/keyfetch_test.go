package resource

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	testIssuer  = "https://as.example"
	testJWKSURL = "https://as.example/jwks"
)

// signingKey is an authorization server's ES256 key named kid.
type signingKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newSigningKey(t *testing.T, kid string) *signingKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &signingKey{kid: kid, priv: k}
}

func (k *signingKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: string(jose.ES256), Use: "sig"}
}

// sign makes an access token of claims (iss, aud and exp filled in when
// absent) signed by k.
func (k *signingKey) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	c := map[string]any{"iss": testIssuer, "aud": testResource, "exp": time.Now().Add(time.Hour).Unix()}
	for n, v := range claims {
		c[n] = v
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.priv},
		(&jose.SignerOptions{}).WithType("at+jwt").WithHeader(jose.HeaderKey("kid"), k.kid))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(c)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keyServer is an authorization server's key set endpoint, in process: it
// answers after delay (unless the request's context ends first) and
// counts the requests.
type keyServer struct {
	mu    sync.Mutex
	keys  []jose.JSONWebKey
	delay time.Duration
	hits  int
}

func (ks *keyServer) set(delay time.Duration, keys ...*signingKey) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.delay, ks.keys = delay, nil
	for _, k := range keys {
		ks.keys = append(ks.keys, k.public())
	}
}

func (ks *keyServer) requests() int {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.hits
}

func (ks *keyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ks.mu.Lock()
	ks.hits++
	delay, set := ks.delay, jose.JSONWebKeySet{Keys: ks.keys}
	ks.mu.Unlock()
	if delay > 0 {
		tm := time.NewTimer(delay)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-r.Context().Done():
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(set)
}

// handlerTransport serves an http.Client's requests with a handler, in
// process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return w.Result(), nil
}

// TestKeyFetchNeverStallsKnownKeys: a token naming an unknown key makes
// the verifier fetch the key set, and the key server is slow; tokens
// signed with known keys are verified meanwhile without waiting, the one
// that asked waits at most FetchTimeout, one fetch runs at a time, and
// the next fetch starts no sooner than MinRefreshInterval after the last
// one ended.
func TestKeyFetchNeverStallsKnownKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b, c, unknown := newSigningKey(t, "a"), newSigningKey(t, "b"), newSigningKey(t, "c"), newSigningKey(t, "x")
		ks := &keyServer{}
		ks.set(0, a)
		v := &JWTVerifier{Issuer: testIssuer, Resource: testResource, JWKSURL: testJWKSURL,
			HTTPClient: &http.Client{Transport: handlerTransport{ks}}}
		good := a.sign(t, map[string]any{"sub": "alice"})
		verify := func(ctx context.Context, tok string) (time.Duration, error) {
			start := time.Now()
			_, err := v.Verify(ctx, tok, request("POST", "Bearer", tok, ""))
			return time.Since(start), err
		}
		if _, err := verify(t.Context(), good); err != nil {
			t.Fatal(err)
		}

		// A slow key server (40 s) and a token naming an unknown key.
		time.Sleep(11 * time.Second)
		ks.set(40*time.Second, a)
		type result struct {
			took time.Duration
			err  error
		}
		stalled := make(chan result, 1)
		go func() {
			took, err := verify(context.Background(), unknown.sign(t, map[string]any{"sub": "mallory"}))
			stalled <- result{took, err}
		}()
		synctest.Wait() // the fetch has started and hangs
		if n := ks.requests(); n != 2 {
			t.Fatalf("%d key set requests, want 2", n)
		}
		for range 3 {
			if took, err := verify(t.Context(), good); err != nil || took != 0 {
				t.Fatalf("a token with a known key during the fetch: %v after %v, want verified at once", err, took)
			}
		}
		r := <-stalled
		if r.err == nil || errors.Is(r.err, ErrInvalidToken) || r.took != 10*time.Second {
			t.Errorf("the unknown key's request: %v after %v; want a fetch error after FetchTimeout (10s)", r.err, r.took)
		}

		// The fetch has just ended: another unknown key starts none.
		if took, err := verify(t.Context(), unknown.sign(t, nil)); !errors.Is(err, ErrInvalidToken) || took != 0 {
			t.Errorf("unknown key right after a fetch: %v after %v", err, took)
		}
		time.Sleep(9 * time.Second)
		if _, err := verify(t.Context(), unknown.sign(t, nil)); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("unknown key 9s after a fetch: %v", err)
		}
		if n := ks.requests(); n != 2 {
			t.Errorf("%d key set requests within MinRefreshInterval of the last end, want 2", n)
		}

		// Rotation: many requests with the new key share one fetch.
		time.Sleep(time.Second)
		ks.set(2*time.Second, a, b)
		tokB := b.sign(t, map[string]any{"sub": "bob"})
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if took, err := verify(t.Context(), tokB); err != nil || took != 2*time.Second {
					t.Errorf("new key: %v after %v, want verified after the 2s fetch", err, took)
				}
			})
		}
		wg.Wait()
		if n := ks.requests(); n != 3 {
			t.Errorf("%d key set requests, want 3 (20 requests share one fetch)", n)
		}

		// The request that starts a fetch goes away: the fetch goes on.
		time.Sleep(10 * time.Second)
		ks.set(5*time.Second, a, b, c)
		ctx, cancel := context.WithCancel(t.Context())
		gone := make(chan result, 1)
		tokC := c.sign(t, map[string]any{"sub": "carol"})
		go func() {
			took, err := verify(ctx, tokC)
			gone <- result{took, err}
		}()
		synctest.Wait()
		cancel()
		if r := <-gone; !errors.Is(r.err, context.Canceled) || r.took != 0 {
			t.Errorf("cancelled request: %v after %v", r.err, r.took)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if _, err := verify(t.Context(), tokC); err != nil {
			t.Errorf("the key fetched for a request that went away: %v", err)
		}
		if n := ks.requests(); n != 4 {
			t.Errorf("%d key set requests, want 4", n)
		}

		// A stale set (past KeySetTTL) is refreshed in the background:
		// known keys are not made to wait.
		time.Sleep(time.Hour)
		ks.set(40*time.Second, a, b, c)
		if took, err := verify(t.Context(), a.sign(t, map[string]any{"sub": "alice"})); err != nil || took != 0 {
			t.Errorf("known key, stale set: %v after %v", err, took)
		}
		synctest.Wait()
		if n := ks.requests(); n != 5 {
			t.Errorf("%d key set requests, want 5 (a background refresh)", n)
		}
		time.Sleep(10 * time.Second) // the refresh times out
		synctest.Wait()
	})
}
