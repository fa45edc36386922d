package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/internal/oauthtest"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// browserHelperEnv, when set, makes the test binary a stand-in browser
// (see TestMain): "visit" fetches the URL it is given, following redirects
// as a browser would (to the loopback port mcpkit listens on);
// "forbid:PATH" records that it ran in PATH and fails.
const browserHelperEnv = "MCPKIT_TEST_BROWSER"

func browserHelper(mode string, args []string) int {
	if mark, ok := strings.CutPrefix(mode, "forbid:"); ok {
		_ = os.WriteFile(mark, []byte(strings.Join(args, " ")), 0o600)
		return 1
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "browser helper: want one URL, got", len(args))
		return 2
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser helper:", err)
		return 1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "You can close this tab") {
		fmt.Fprintf(os.Stderr, "browser helper: status %d: %s\n", resp.StatusCode, b)
		return 1
	}
	return 0
}

// TestOAuthLogin logs in to an OAuth-protected server through a stand-in
// browser, then reuses the stored token (no browser), refreshes it once
// expired, shows it with auth status and forgets it with auth logout; no
// secret ever shows in what mcpkit prints.
func TestOAuthLogin(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in browser is the test binary run through $BROWSER")
	}
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg) // os.UserConfigDir on Unix
	t.Setenv("HOME", cfg)            // and on macOS
	storePath, err := auth.DefaultFileStorePath()
	if err != nil || !strings.HasPrefix(storePath, cfg) {
		t.Fatalf("token file %q (%v) is not under %s", storePath, err, cfg)
	}

	const clientSecret = "CLIENT-SECRET-4f1d9a"
	// Every code, access and refresh token the server issues starts with
	// "ISSUED-SECRET-".
	as := oauthtest.NewServer(oauthtest.Config{ClientID: "mcpkit-test", ClientSecret: clientSecret,
		NoRegistration: true, Refresh: true, ExpiresIn: 3600, Secret: "ISSUED-SECRET-", Scopes: []string{"mcp:tools"}})
	t.Cleanup(as.Close)
	core := everything.New(nil)
	both := legacy.New(core, nil)
	srv := httptest.NewServer(as.Protect(streamable.NewHandler(both, nil), "/mcp"))
	t.Cleanup(func() {
		core.Close()
		both.Close()
		srv.Close()
	})
	url := srv.URL + "/mcp"

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", "'"+strings.ReplaceAll(exe, "'", `'\''`)+"'")
	t.Setenv(clientSecretEnv, clientSecret)
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")

	var outputs []string
	runOK := func(args ...string) result {
		t.Helper()
		r := mcpkit(t, args...)
		outputs = append(outputs, r.stdout, r.stderr)
		if r.code != exitOK {
			t.Fatalf("mcpkit %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}

	// Without a login the server refuses; the first run logs in.
	t.Setenv(browserHelperEnv, "visit")
	r := runOK("tools", url, "--client-id", "mcpkit-test")
	t.Logf("the login's stderr:\n%s", r.stderr)
	if !strings.Contains(r.stdout, "echo") {
		t.Errorf("tools output:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "To authorize, open this URL in a browser:") || !strings.Contains(r.stderr, "/authorize?") {
		t.Errorf("stderr does not show the authorization URL:\n%s", r.stderr)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.CodeExchanges != 1 {
		t.Fatalf("after the login: %+v", c)
	}
	if fi, err := os.Stat(storePath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(storePath)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("token directory: %v %v", fi, err)
	}

	// A later run uses the stored token: no browser, no authorization.
	mark := filepath.Join(t.TempDir(), "browser-ran")
	t.Setenv(browserHelperEnv, "forbid:"+mark)
	r = runOK("call", url, "echo", "text=hi", "--json", "--client-id", "mcpkit-test")
	if !strings.Contains(r.stdout, "hi") || strings.Contains(r.stderr, "To authorize") {
		t.Errorf("second run:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the browser was opened though a token was stored")
	}

	// Once the stored token has expired, the refresh token gets a new one.
	store := auth.NewFileStore(storePath)
	list, err := store.Tokens(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("stored: %v %v", list, err)
	}
	if list[0].Key.Resource != url || list[0].Key.Issuer != as.URL {
		t.Errorf("stored key %+v, want resource %s issuer %s", list[0].Key, url, as.URL)
	}
	expired := list[0].Token
	expired.Expiry = time.Now().Add(-time.Hour)
	if err := store.SaveToken(context.Background(), list[0].Key, &expired); err != nil {
		t.Fatal(err)
	}
	as.Revoke()
	r = runOK("call", url, "echo", "text=again", "--client-id", "mcpkit-test")
	if c := as.Counts(); c.Authorizations != 1 || c.Refreshes != 1 {
		t.Fatalf("after expiry: %+v", c)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the browser was opened though the token could be refreshed")
	}

	// auth status shows the entry, not the tokens.
	for _, args := range [][]string{{"auth", "status"}, {"auth", "status", url}, {"auth", "status", "--json"}} {
		r = runOK(args...)
		if !strings.Contains(r.stdout, url) || !strings.Contains(r.stdout, as.URL) {
			t.Errorf("%s:\n%s", strings.Join(args, " "), r.stdout)
		}
	}
	var st struct {
		File   string `json:"file"`
		Tokens []struct {
			Resource, Issuer, Scope string
			Refreshable, Expired    bool
			Expiry                  *time.Time
		} `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.File != storePath || len(st.Tokens) != 1 ||
		!st.Tokens[0].Refreshable || st.Tokens[0].Expired || st.Tokens[0].Expiry == nil || st.Tokens[0].Scope != "mcp:tools" {
		t.Errorf("auth status --json: %v\n%s", err, r.stdout)
	}
	r = runOK("auth", "status", "http://127.0.0.1:1/elsewhere")
	if strings.Contains(r.stdout, as.URL) {
		t.Errorf("status of another target lists this one:\n%s", r.stdout)
	}

	// auth logout forgets the tokens; the next run logs in again, and a
	// wrong secret given on the command line is not echoed in the error.
	r = runOK("auth", "logout", url+"/")
	if !strings.Contains(r.stdout, "Forgot the tokens of "+url) {
		t.Errorf("logout:\n%s", r.stdout)
	}
	if list, _ := store.Tokens(context.Background()); len(list) != 0 {
		t.Fatalf("after logout: %v", list)
	}
	const wrongSecret = "WRONG-SECRET-77c2"
	t.Setenv(browserHelperEnv, "visit")
	bad := mcpkit(t, "tools", url, "--client-id", "mcpkit-test", "--client-secret", wrongSecret, "--json")
	outputs = append(outputs, bad.stdout, bad.stderr)
	if bad.code == exitOK || !strings.Contains(bad.stderr, "invalid_client") {
		t.Errorf("wrong secret: exit %d\nstderr: %s", bad.code, bad.stderr)
	}

	issued := as.Issued()
	if len(issued) < 2 {
		t.Fatalf("issued %v", issued)
	}
	for _, out := range outputs {
		for _, secret := range append([]string{clientSecret, wrongSecret, "ISSUED-SECRET-"}, issued...) {
			if strings.Contains(out, secret) {
				t.Errorf("a secret (%.12s...) shows in the output:\n%s", secret, out)
			}
		}
	}
	// The file holds them (it is the store), readable by the user only.
	b, err := os.ReadFile(storePath)
	if err != nil || strings.Contains(string(b), wrongSecret) {
		t.Errorf("token file: %v", err)
	}
}

func TestResourceMatches(t *testing.T) {
	tests := []struct {
		resource, target string
		want             bool
	}{
		{"https://mcp.example/mcp", "https://mcp.example/mcp", true},
		{"https://mcp.example/mcp", "HTTPS://MCP.example:443/mcp/", true},
		{"https://mcp.example", "https://mcp.example/mcp", true},
		{"https://mcp.example/mcp", "https://mcp.example/", false},
		{"https://mcp.example/mcp", "https://mcp.example/mcpx", false},
		{"https://mcp.example/mcp", "http://mcp.example/mcp", false},
		{"https://mcp.example:8443/mcp", "https://mcp.example/mcp", false},
	}
	for _, tt := range tests {
		if got := resourceMatches(tt.resource, tt.target); got != tt.want {
			t.Errorf("resourceMatches(%q, %q) = %t", tt.resource, tt.target, got)
		}
	}
}
