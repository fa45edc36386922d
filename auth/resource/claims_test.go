package resource

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
