package resource_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth/resource"
)

// Refusals reach Options.Logger, structured, without the token.
func TestRefusalsLogged(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := resource.Protect(http.NotFoundHandler(), &resource.Options{
		Resource:             "https://mcp.example/mcp",
		AuthorizationServers: []string{"https://issuer.example"},
		Verifier:             &resource.JWTVerifier{Issuer: "https://issuer.example", Resource: "https://mcp.example/mcp"},
		Logger:               logger,
	})
	req := httptest.NewRequest(http.MethodPost, "https://mcp.example/mcp", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer not-a-jwt-secret-value")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("status %d", w.Code)
	}
	out := buf.String()
	if !strings.Contains(out, "resource: request refused") || !strings.Contains(out, "status=401") || !strings.Contains(out, "error=invalid_token") {
		t.Errorf("log: %q", out)
	}
	if strings.Contains(out, "not-a-jwt-secret-value") {
		t.Errorf("the token was logged: %q", out)
	}
}
