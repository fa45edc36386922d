package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "127.0.0.2:8080": true, "[::1]:0": true, "localhost:8080": true, "LOCALHOST:1": true,
		"0.0.0.0:0": false, ":0": false, "[::]:0": false, "192.0.2.1:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := isLoopbackAddr(addr); got != want {
			t.Errorf("isLoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestServeSQLRefusesPublicWithoutAuth: a non-loopback address without
// authorization is a usage error, found before anything is opened or
// listened on.
func TestServeSQLRefusesPublicWithoutAuth(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		r := mcpkit(t, "serve", "sql", "--addr", addr, "--db", "/nonexistent/db.sqlite")
		if r.code != exitUsage || !strings.Contains(r.stderr, "refusing to serve") || !strings.Contains(r.stderr, "--insecure-no-auth") {
			t.Errorf("%s: %d %q", addr, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "serving") {
			t.Errorf("%s: it served: %q", addr, r.stderr)
		}
	}
}

// TestServeSQLSecurityFlags checks the security flags against each other;
// every case is refused before the database is opened (it does not exist).
func TestServeSQLSecurityFlags(t *testing.T) {
	const iss = "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth-introspection-url", iss + "/introspect"}, "needs --auth-issuer"},
		{[]string{"--auth-scope", "mcp:read"}, "needs --auth-issuer"},
		{[]string{"--auth-write-scope", "w"}, "needs --auth-issuer"},
		{[]string{"--auth-issuer", "not a url"}, "not an absolute http(s) URL"},
		{[]string{"--auth-issuer", iss, "--auth-introspection-url", iss + "/introspect"}, "needs --auth-client-id"},
		{[]string{"--auth-issuer", iss, "--auth-client-id", "rs"}, "are for --auth-introspection-url"},
		{[]string{"--auth-issuer", iss, "--auth-introspection-cache", "1m"}, "are for --auth-introspection-url"},
		{[]string{"--auth-introspection-cache", "1m"}, "needs --auth-issuer"},
		{[]string{"--auth-issuer", iss, "--auth-introspection-allow-no-audience"}, "are for --auth-introspection-url"},
		{[]string{"--auth-introspection-allow-no-audience"}, "needs --auth-issuer"},
		{[]string{"--auth-issuer", iss, "--auth-introspection-url", iss + "/introspect", "--auth-client-id", "rs", "--auth-client-secret", "s", "--auth-introspection-cache", "-1s"}, "must not be negative"},
		{[]string{"--auth-issuer", iss, "--auth-scope", "two words"}, "not an OAuth scope"},
		{[]string{"--auth-issuer", iss, "--insecure-no-auth"}, "not both"},
		{[]string{"--tls-cert", "c.pem"}, "both --tls-cert and --tls-key"},
		{[]string{"--public-url", "ftp://x/mcp"}, "not an absolute http(s) URL"},
		{[]string{"--stdio", "--auth-issuer", iss}, "--auth-issuer is for HTTP"},
		{[]string{"--addr", "0.0.0.0:0", "--auth-issuer", iss}, "needs --public-url"},
		{[]string{"--addr", "0.0.0.0:0", "--auth-issuer", iss, "--public-url", "http://db.example.com/mcp"}, "clear text"},
	} {
		args := append([]string{"serve", "sql", "--db", "/nonexistent/db.sqlite"}, tc.args...)
		r := mcpkit(t, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: %d %q, want a usage error with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	// An https --public-url (a TLS-terminating proxy) passes the checks;
	// the unreachable issuer then fails the start.
	r := mcpkit(t, "serve", "sql", "--db", "/nonexistent/db.sqlite", "--addr", "0.0.0.0:0", "--auth-issuer", iss, "--public-url", "https://db.example.com/mcp")
	if r.code != exitUnreachable || !strings.Contains(r.stderr, "discovering the authorization server") {
		t.Errorf("behind a proxy: %d %q", r.code, r.stderr)
	}
}

func TestServeSQLHelpMentionsAuth(t *testing.T) {
	r := mcpkit(t, "serve", "sql", "--help")
	for _, want := range []string{"--auth-issuer", "--auth-introspection-url", "--auth-scope", "--auth-write-scope", "--public-url", "--insecure-no-auth", "--tls-cert", "--tls-key"} {
		if r.code != exitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %s: %d %s", want, r.code, r.stdout)
		}
	}
}

// TestDiscoverIssuerReadsStrictly: the authorization server's metadata is
// read as all peer JSON is: an "issuer" repeated, or spelt in another case,
// does not pass for the issuer serve sql was given.
func TestDiscoverIssuerReadsStrictly(t *testing.T) {
	var body string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, strings.ReplaceAll(body, "ISS", "http://"+r.Host))
	}))
	defer as.Close()
	for doc, ok := range map[string]bool{
		`{"issuer":"ISS"}`:                     true,
		`{"issuer":"http://elsewhere"}`:        false,
		`{"Issuer":"ISS"}`:                     false,
		`{"issuer":"http://x","issuer":"ISS"}`: false,
		`{"issuer":"ISS","issuer":"ISS"}`:      false,
		"{\"issuer\":\"ISS\",\"n\":\"\xff\"}":  false,
		`{"issuer":"ISS"} {}`:                  false,
	} {
		body = doc
		err := discoverIssuer(context.Background(), as.URL)
		if (err == nil) != ok {
			t.Errorf("metadata %s: %v", doc, err)
		}
	}
}
