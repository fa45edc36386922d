package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// TestConformanceTypeScriptAuthRouter: the mcpkit command logs in to a
// server whose authorization server is the TypeScript SDK's authorization
// router over its in-memory demo provider (sdk/auth-server.mjs), which
// takes a redirect URI only when it was registered exactly, port included.
// The server is `mcpkit serve sql` checking the opaque tokens at the
// router's side by introspection. mcpkit registers, logs in through a
// stand-in browser (sdk/browser.mjs), lists the tools and calls one; later
// runs use the stored token without a browser; a login after logout
// listens on the registered port again, with the same registration; and
// when that port is taken, mcpkit registers again with another.
func TestConformanceTypeScriptAuthRouter(t *testing.T) {
	bin := suiteBin(t)
	node := filepath.Join(bin, "node")
	sdkDir, err := filepath.Abs("sdk")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mcpkit := filepath.Join(dir, "mcpkit")
	build := exec.Command("go", "build", "-o", mcpkit, "github.com/mcpkit/mcpkit/cmd/mcpkit")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building mcpkit: %v\n%s", err, out)
	}

	const rsSecret = "resource-server-secret"
	asPort := startNodeServer(t, bin, "auth-server.mjs", "RS_CLIENT_ID=mcp-resource", "RS_CLIENT_SECRET="+rsSecret)
	issuer := "http://127.0.0.1:" + asPort + "/"

	db := filepath.Join(dir, "demo.db")
	if err := sqlserver.EnsureDemo(db); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	endpoint := "http://" + addr + "/mcp"
	serve := exec.Command(mcpkit, "serve", "sql", "--addr", addr, "--db", db,
		"--auth-issuer", issuer, "--auth-introspection-url", issuer+"introspect",
		"--auth-client-id", "mcp-resource", "--auth-scope", "mcp:tools")
	serve.Env = append(os.Environ(), "MCPKIT_AUTH_CLIENT_SECRET="+rsSecret)
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	serveErr := &syncBuffer{}
	serve.Stderr = serveErr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-serve.Process.Pid, syscall.SIGKILL) // the group this test started
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("serve sql stderr:\n%s", serveErr.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(serveErr.String(), "on http://"+addr); {
		if time.Now().After(deadline) {
			t.Fatalf("serve sql did not start: %s", serveErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	config := filepath.Join(dir, "config")
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	visit := quote(node) + " " + quote(filepath.Join(sdkDir, "browser.mjs"))
	mark := filepath.Join(dir, "browser-ran")
	forbid := visit + " --forbid " + quote(mark)
	run := func(browser string, args ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, mcpkit, args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "HOME="+config, "BROWSER="+browser,
			"DISPLAY=", "WAYLAND_DISPLAY=")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("mcpkit %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	type state struct {
		Registrations []struct {
			ClientID     string   `json:"client_id"`
			RedirectURIs []string `json:"redirect_uris"`
		} `json:"registrations"`
		Authorizations []string `json:"authorizations"`
	}
	asState := func() state {
		t.Helper()
		resp, err := http.Get(issuer + "test/state")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s state
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	// The first run registers and logs in.
	out, errOut := run(visit, "tools", endpoint)
	if !strings.Contains(out, "query") || !strings.Contains(errOut, "To authorize") {
		t.Fatalf("tools:\nstdout: %s\nstderr: %s", out, errOut)
	}
	st := asState()
	if len(st.Registrations) != 1 || len(st.Registrations[0].RedirectURIs) != 1 || len(st.Authorizations) != 1 {
		t.Fatalf("after the first login: %+v", st)
	}
	registered := st.Registrations[0].RedirectURIs[0]
	ru, err := url.Parse(registered)
	if err != nil || ru.Hostname() != "127.0.0.1" || ru.Port() == "" || st.Authorizations[0] != registered {
		t.Fatalf("registered %q, authorized %q", registered, st.Authorizations)
	}

	// Later runs call with the stored token: no browser.
	for range 2 {
		out, errOut = run(forbid, "call", endpoint, "query", "sql=select 40 + 2 as answer")
		if !strings.Contains(out, "42") || strings.Contains(errOut, "To authorize") {
			t.Fatalf("call:\nstdout: %s\nstderr: %s", out, errOut)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the browser was opened though a token was stored")
	}

	// After logout, the next login listens on the registered port again
	// and uses the same registration.
	run(forbid, "auth", "logout", endpoint)
	run(visit, "call", endpoint, "query", "sql=select 1")
	st = asState()
	if len(st.Registrations) != 1 || !slices.Equal(st.Authorizations, []string{registered, registered}) {
		t.Fatalf("after the second login: %+v", st)
	}

	// With the port taken, mcpkit registers again, on another.
	held, err := net.Listen("tcp", ru.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	run(forbid, "auth", "logout", endpoint)
	out, _ = run(visit, "tools", endpoint)
	st = asState()
	if !strings.Contains(out, "query") || len(st.Registrations) != 2 || len(st.Authorizations) != 3 ||
		st.Authorizations[2] == registered || !slices.Equal(st.Registrations[1].RedirectURIs, st.Authorizations[2:]) {
		t.Fatalf("after the third login: %+v\n%s", st, out)
	}
}

// syncBuffer is a buffer a process writes to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
