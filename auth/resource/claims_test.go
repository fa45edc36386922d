package resource

import (
	"context"
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
	if len(v.cache) > 2 {
		t.Errorf("%d answers kept, over CacheSize", len(v.cache))
	}
}
