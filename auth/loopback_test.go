package auth

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/oauthtest"
)

// userAgent stands for a user reading the printed instructions: it follows
// the authorization URL it finds in what is written to it, redirects
// included, as a browser would.
type userAgent struct {
	t    *testing.T
	mu   sync.Mutex
	buf  strings.Builder
	done chan struct{}
	body string
}

func newUserAgent(t *testing.T) *userAgent { return &userAgent{t: t, done: make(chan struct{})} }

func (u *userAgent) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	before := u.buf.String()
	u.buf.Write(p)
	if !strings.Contains(before, "\n    http") {
		sc := bufio.NewScanner(strings.NewReader(u.buf.String()))
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "    http") {
				go u.visit(strings.TrimSpace(l))
				break
			}
		}
	}
	return len(p), nil
}

func (u *userAgent) visit(authURL string) {
	defer close(u.done)
	resp, err := http.Get(authURL)
	if err != nil {
		u.t.Errorf("browser: %v", err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	u.body = string(b)
}

func (u *userAgent) String() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.buf.String()
}

func protectedEndpoint(t *testing.T, as *oauthtest.Server) string {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	rs := httptest.NewServer(as.Protect(ok, "/mcp"))
	t.Cleanup(rs.Close)
	return rs.URL + "/mcp"
}

func get(t *testing.T, tr http.RoundTripper, u string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLoopbackAuthorizer: the redirect comes back to a port the authorizer
// picked, the same redirect_uri goes to the token endpoint (the server
// checks), the browser gets a page, and the tokens land in a FileStore
// that a later Transport reuses without authorizing again.
func TestLoopbackAuthorizer(t *testing.T) {
	as := oauthtest.NewServer(oauthtest.Config{Refresh: true, ExpiresIn: 3600})
	defer as.Close()
	endpoint := protectedEndpoint(t, as)
	store := NewFileStore(filepath.Join(t.TempDir(), "cfg", "auth.json"))
	ua := newUserAgent(t)
	la := &LoopbackAuthorizer{Out: ua, NoBrowser: true, Getenv: func(string) string { return "" }}
	tr := NewTransport(&Options{Authorizer: la, Store: store})
	if code := get(t, tr, endpoint); code != 200 {
		t.Fatalf("status %d; printed:\n%s", code, ua)
	}
	<-ua.done
	if !strings.Contains(ua.body, "You can close this tab") {
		t.Errorf("browser page = %q", ua.body)
	}
	if !strings.Contains(ua.String(), "Waiting for the authorization server to redirect to http://127.0.0.1:") {
		t.Errorf("printed:\n%s", ua)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.CodeExchanges != 1 || c.Registrations != 1 {
		t.Fatalf("counts %+v", c)
	}
	// A new Transport (a later run) finds the token and the registration.
	tr2 := NewTransport(&Options{Authorizer: AuthorizerFunc(func(context.Context, string) (string, error) {
		t.Fatal("authorized again")
		return "", nil
	}), Store: store})
	if code := get(t, tr2, endpoint); code != 200 {
		t.Fatalf("second transport: status %d", code)
	}
	// Expired at the server: the stored refresh token is used.
	as.Revoke()
	tr3 := NewTransport(&Options{Authorizer: AuthorizerFunc(func(context.Context, string) (string, error) {
		t.Fatal("authorized again")
		return "", nil
	}), Store: store})
	if code := get(t, tr3, endpoint); code != 200 {
		t.Fatalf("third transport: status %d", code)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Refreshes != 1 || c.Registrations != 1 {
		t.Fatalf("counts %+v", c)
	}
}

// TestLoopbackIgnoresStrangers: a request without the authorization's
// state does not end the wait; the context bounds it.
func TestLoopbackIgnoresStrangers(t *testing.T) {
	la := &LoopbackAuthorizer{Out: io.Discard, NoBrowser: true}
	p, err := la.Listen(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ru := p.RedirectURL()
	if !strings.HasPrefix(ru, "http://127.0.0.1:") || !strings.HasSuffix(ru, "/callback") || ru == "http://127.0.0.1:0/callback" {
		t.Fatalf("redirect URL %q", ru)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	go func() {
		resp, err := http.Get(ru + "?code=x&state=forged")
		if err == nil {
			if resp.StatusCode != 400 {
				t.Errorf("forged redirect: status %d", resp.StatusCode)
			}
			resp.Body.Close()
		}
	}()
	_, err = p.Authorize(ctx, "http://as.example/authorize?state=right")
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err = %v", err)
	}
	if _, err := la.Listen(context.Background(), "http://192.0.2.1/cb"); err == nil {
		t.Fatal("listened for a non-loopback redirect URL")
	}
}

func TestBrowserCommand(t *testing.T) {
	const u = "http://as.example/authorize?a=1&b=2"
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name string
		env  func(string) string
		goos string
		want []string
	}{
		{"browser appended", env("BROWSER", "firefox --new-tab"), "linux", []string{"firefox", "--new-tab", u}},
		{"browser %s", env("BROWSER", `'/opt/my browser/run' --url=%s -x`), "linux", []string{"/opt/my browser/run", "--url=" + u, "-x"}},
		{"browser quoting", env("BROWSER", `a\ b "c \"d\"" e''f`), "darwin", []string{"a b", `c "d"`, "ef", u}},
		{"no display", env(), "linux", nil},
		{"x11", env("DISPLAY", ":0"), "linux", []string{"xdg-open", u}},
		{"wayland", env("WAYLAND_DISPLAY", "wayland-0"), "freebsd", []string{"xdg-open", u}},
		{"darwin", env(), "darwin", []string{"open", u}},
		{"windows", env(), "windows", []string{"rundll32", "url.dll,FileProtocolHandler", u}},
	}
	for _, tt := range tests {
		if got := browserCommand(u, tt.env, tt.goos); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLoopbackOpener runs $BROWSER: a shell script that fetches the URL it
// is given, as a browser would.
func TestLoopbackOpener(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell script opener")
	}
	curl := lookPath(t, "curl")
	dir := t.TempDir()
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+curl+" -s -L -o /dev/null \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	as := oauthtest.NewServer(oauthtest.Config{})
	defer as.Close()
	endpoint := protectedEndpoint(t, as)
	la := &LoopbackAuthorizer{Out: io.Discard, Getenv: func(k string) string {
		if k == "BROWSER" {
			return script
		}
		return ""
	}}
	tr := NewTransport(&Options{Authorizer: la})
	if code := get(t, tr, endpoint); code != 200 {
		t.Fatalf("status %d", code)
	}
}

func lookPath(t *testing.T, name string) string {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Skipf("no %s in PATH", name)
	return ""
}

// TestLoopbackExactRedirect: against an authorization server that compares
// redirect URIs exactly, port included, the client registers the redirect
// URI with the port it listens on, later logins listen on that port again
// with the same registration, and a login that cannot have the port
// registers again with another.
func TestLoopbackExactRedirect(t *testing.T) {
	as := oauthtest.NewServer(oauthtest.Config{ExactRedirect: true})
	defer as.Close()
	endpoint := protectedEndpoint(t, as)
	store := NewFileStore(filepath.Join(t.TempDir(), "auth.json"))
	login := func() *ClientInfo {
		t.Helper()
		ua := newUserAgent(t)
		la := &LoopbackAuthorizer{Out: ua, NoBrowser: true, Getenv: func(string) string { return "" }}
		if code := get(t, NewTransport(&Options{Authorizer: la, Store: store}), endpoint); code != 200 {
			t.Fatalf("status %d; printed:\n%s", code, ua)
		}
		<-ua.done
		list, err := store.Tokens(context.Background())
		if err != nil || len(list) != 1 {
			t.Fatalf("tokens %v %v", list, err)
		}
		c, err := store.LoadClient(context.Background(), list[0].Key.Issuer)
		if err != nil || c == nil {
			t.Fatalf("client %v %v", c, err)
		}
		// Forget the token, as auth logout does: the next run logs in.
		if err := store.SaveToken(context.Background(), list[0].Key, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := login()
	ru, err := url.Parse(first.RedirectURI)
	if err != nil || ru.Hostname() != "127.0.0.1" || ru.Port() == "" || ru.Path != "/callback" {
		t.Fatalf("registered redirect URI %q", first.RedirectURI)
	}
	if c := as.Counts(); c.Registrations != 1 || c.Authorizations != 1 {
		t.Fatalf("first login: %+v", c)
	}

	again := login()
	if *again != *first {
		t.Fatalf("second login registered %+v, had %+v", again, first)
	}
	if c := as.Counts(); c.Registrations != 1 || c.Authorizations != 2 {
		t.Fatalf("second login: %+v", c)
	}

	// Something else holds the port: a new registration, another port.
	ln, err := net.Listen("tcp", ru.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	third := login()
	if third.ClientID == first.ClientID || third.RedirectURI == first.RedirectURI {
		t.Fatalf("third login kept %+v", third)
	}
	if c := as.Counts(); c.Registrations != 2 || c.Authorizations != 3 {
		t.Fatalf("third login: %+v", c)
	}
}

func TestRedirectFits(t *testing.T) {
	for _, tt := range []struct {
		registered, configured string
		want                   bool
	}{
		{"http://127.0.0.1:5000/callback", "http://127.0.0.1/callback", true},
		{"http://127.0.0.1:5000/callback", "http://127.0.0.1:5000/callback", true},
		{"http://127.0.0.1:5000/", "http://127.0.0.1", true},
		{"http://localhost:5000/callback", "http://localhost/callback", true},
		{"http://127.0.0.1/callback", "http://127.0.0.1/callback", true},
		{"http://127.0.0.1:5000/callback", "http://127.0.0.1:6000/callback", false},
		{"http://127.0.0.1:5000/other", "http://127.0.0.1/callback", false},
		{"http://localhost:5000/callback", "http://127.0.0.1/callback", false},
		{"https://127.0.0.1:5000/callback", "http://127.0.0.1/callback", false},
	} {
		if got := redirectFits(tt.registered, tt.configured); got != tt.want {
			t.Errorf("redirectFits(%q, %q) = %t", tt.registered, tt.configured, got)
		}
	}
}
