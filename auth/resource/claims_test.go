package resource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRepeatedClaims: a token payload or introspection response that
// repeats a member is refused, not read one way or the other.
func TestRepeatedClaims(t *testing.T) {
	if _, err := decodeClaims([]byte(`{"sub":"alice","aud":"https://a.example/mcp","sub":"admin"}`)); err == nil {
		t.Error("a payload with two sub claims was decoded")
	}
	if c, err := decodeClaims([]byte(`{"sub":"alice","n":12345678901234567890}`)); err != nil || c["sub"] != "alice" {
		t.Errorf("a plain payload: %v %v", c, err)
	}

	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"active":false,"active":true,"sub":"mallory","aud":"https://rs.example/mcp","scope":"mcp"}`))
	}))
	defer as.Close()
	v := &IntrospectionVerifier{Endpoint: as.URL, ClientID: "rs", ClientSecret: "s", Resource: "https://rs.example/mcp"}
	req := httptest.NewRequest(http.MethodPost, "https://rs.example/mcp", strings.NewReader("{}"))
	if p, err := v.Verify(context.Background(), "opaque", req); err == nil {
		t.Errorf("an introspection response with two active members was taken: %+v", p)
	}
}

// TestIntrospectionCache: with CacheTTL an active token's answer is kept
// (never past its exp, within CacheSize); without, every request asks.
func TestIntrospectionCache(t *testing.T) {
	var asked atomic.Int32
	now := time.Unix(1_800_000_000, 0)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"active":true,"sub":%q,"aud":"https://rs.example/mcp","exp":%d}`, r.PostForm.Get("token"), now.Add(90*time.Second).Unix())
	}))
	defer as.Close()
	clock := now
	verify := func(v *IntrospectionVerifier, token string) *Principal {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "https://rs.example/mcp", strings.NewReader("{}"))
		p, err := v.Verify(context.Background(), token, req)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	newVerifier := func(ttl time.Duration, size int) *IntrospectionVerifier {
		return &IntrospectionVerifier{Endpoint: as.URL, ClientID: "rs", ClientSecret: "s", Resource: "https://rs.example/mcp",
			Now: func() time.Time { return clock }, CacheTTL: ttl, CacheSize: size}
	}

	v := newVerifier(0, 0)
	verify(v, "t1")
	verify(v, "t1")
	if n := asked.Swap(0); n != 2 {
		t.Errorf("without a cache: %d introspections for two requests", n)
	}

	v = newVerifier(time.Minute, 2)
	if p := verify(v, "t1"); p.Subject != "t1" {
		t.Fatalf("subject %q", p.Subject)
	}
	verify(v, "t1")
	if n := asked.Swap(0); n != 1 {
		t.Errorf("a kept answer: %d introspections", n)
	}
	clock = now.Add(61 * time.Second) // past CacheTTL
	verify(v, "t1")
	clock = now.Add(89 * time.Second) // kept till exp (90 s), not a minute more
	verify(v, "t1")
	if n := asked.Swap(0); n != 1 {
		t.Errorf("after CacheTTL: %d introspections, want 1", n)
	}
	clock = now.Add(91 * time.Second) // past exp (within the leeway): asked again
	verify(v, "t1")
	if n := asked.Swap(0); n != 1 {
		t.Errorf("past exp: %d introspections, want 1", n)
	}
	clock = now
	verify(v, "t2")
	verify(v, "t3") // evicts one of the two kept
	if len(v.active) > 2 {
		t.Errorf("%d answers kept, over CacheSize", len(v.active))
	}
}

// TestIntrospectionAudienceRequired: an active answer without aud is
// refused unless AllowMissingAudience says the server never sends it.
func TestIntrospectionAudienceRequired(t *testing.T) {
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"active":true,"sub":"alice","scope":"mcp"}`))
	}))
	defer as.Close()
	req := httptest.NewRequest(http.MethodPost, "https://rs.example/mcp", nil)
	v := &IntrospectionVerifier{Endpoint: as.URL, ClientID: "rs", ClientSecret: "s", Resource: "https://rs.example/mcp"}
	_, err := v.Verify(context.Background(), "for-another-api", req)
	wantInvalid(t, err, ErrInvalidToken, "no aud", "for-another-api")
	v = &IntrospectionVerifier{Endpoint: as.URL, ClientID: "rs", ClientSecret: "s", Resource: "https://rs.example/mcp", AllowMissingAudience: true}
	if p, err := v.Verify(context.Background(), "for-another-api", req); err != nil || p.Subject != "alice" {
		t.Errorf("AllowMissingAudience: %+v %v", p, err)
	}
}

// TestIntrospectionUnknownTokens: refusals are kept for NegativeCacheTTL,
// and calls for tokens not seen active are rate-limited (ErrBusy, 503),
// while tokens seen active are still checked.
func TestIntrospectionUnknownTokens(t *testing.T) {
	var asked atomic.Int32
	now := time.Unix(1_800_000_000, 0)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if tok := r.PostForm.Get("token"); strings.HasPrefix(tok, "good") {
			fmt.Fprintf(w, `{"active":true,"sub":%q,"aud":"https://rs.example/mcp","exp":%d}`, tok, now.Add(time.Hour).Unix())
			return
		}
		w.Write([]byte(`{"active":false}`))
	}))
	defer as.Close()
	clock := now
	v := &IntrospectionVerifier{Endpoint: as.URL, ClientID: "rs", ClientSecret: "s", Resource: "https://rs.example/mcp",
		Now: func() time.Time { return clock }}
	verify := func(token string) error {
		req := httptest.NewRequest(http.MethodPost, "https://rs.example/mcp", nil)
		_, err := v.Verify(context.Background(), token, req)
		return err
	}

	if err := verify("good-1"); err != nil {
		t.Fatal(err)
	}
	// A refusal is kept: asking again within NegativeCacheTTL costs no call.
	asked.Store(0)
	for range 3 {
		wantInvalid(t, verify("made-up"), ErrInvalidToken, "not active", "made-up")
	}
	if n := asked.Swap(0); n != 1 {
		t.Errorf("one made-up token three times: %d introspections, want 1", n)
	}
	clock = clock.Add(11 * time.Second)
	wantInvalid(t, verify("made-up"), ErrInvalidToken, "not active", "made-up")
	if n := asked.Swap(0); n != 1 {
		t.Errorf("past NegativeCacheTTL: %d introspections, want 1", n)
	}

	// 300 made-up tokens at once: 20 calls (the burst), the rest busy.
	clock = clock.Add(time.Minute)
	busy := 0
	for i := range 300 {
		err := verify(fmt.Sprintf("random-%d", i))
		if errors.Is(err, ErrBusy) {
			busy++
		} else if !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("random token: %v", err)
		}
	}
	if n := asked.Swap(0); n != 20 || busy != 280 {
		t.Errorf("300 made-up tokens: %d introspections, %d busy; want 20 and 280", n, busy)
	}
	// A token seen active is not limited (and, without CacheTTL, asked
	// about every time).
	if err := verify("good-1"); err != nil {
		t.Errorf("a known token while the limit is reached: %v", err)
	}
	if n := asked.Swap(0); n != 1 {
		t.Errorf("known token: %d introspections, want 1", n)
	}
	if err := verify("good-2"); !errors.Is(err, ErrBusy) || errors.Is(err, ErrInvalidToken) {
		t.Errorf("a new token while the limit is reached: %v, want ErrBusy", err)
	}
	// The limit refills at UnknownTokenRate per second.
	clock = clock.Add(time.Second)
	if err := verify("good-2"); err != nil {
		t.Errorf("a new token a second later: %v", err)
	}
	if len(v.refused) != 21 { // made-up and the 20 random tokens asked about
		t.Errorf("%d refusals kept, want 21", len(v.refused))
	}

	// Behind Protect, ErrBusy is a 503 with Retry-After, not a 401.
	h := Protect(http.NotFoundHandler(), &Options{Resource: "https://rs.example/mcp", AuthorizationServers: []string{"https://as.example"}, Verifier: v})
	for i := range 30 {
		r := httptest.NewRequest(http.MethodPost, "https://rs.example/mcp", nil)
		r.Header.Set("Authorization", fmt.Sprintf("Bearer flood-%d", i))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if i >= 20 && (w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "") {
			t.Errorf("flood request %d: %d %v", i, w.Code, w.Header())
		}
	}
}

// TestIntrospectionRefusalsBounded: the refusals kept are at most
// CacheSize, whatever the number of tokens refused.
func TestIntrospectionRefusalsBounded(t *testing.T) {
	var asked atomic.Int32
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"active":false}`))
	}))
	defer as.Close()
	v := &IntrospectionVerifier{Endpoint: as.URL, ClientID: "rs", ClientSecret: "s", Resource: "https://rs.example/mcp",
		CacheSize: 2, UnknownTokenRate: -1}
	for i := range 5 {
		req := httptest.NewRequest(http.MethodPost, "https://rs.example/mcp", nil)
		tok := fmt.Sprintf("t%d", i)
		_, err := v.Verify(context.Background(), tok, req)
		wantInvalid(t, err, ErrInvalidToken, "not active", tok)
	}
	if n := asked.Load(); n != 5 || len(v.refused) != 2 {
		t.Errorf("%d introspections (want 5, no limit), %d refusals kept (want CacheSize, 2)", n, len(v.refused))
	}
}
