package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/oauthtest/zitadel"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/sqlserver"
	"github.com/mcpkit/mcpkit/transport/sse"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// The end-to-end test runs the zitadel/oidc example OpenID Provider on
// loopback, with service clients that get JWT access tokens through the
// client credentials grant, for the audience of the served endpoint and
// with the scope claim the resource server reads.

const opSvcSecret = "svc-secret"

// startOP starts the provider, issuing tokens for the audience to every
// client whose ID starts with svc-, and returns its issuer.
func startOP(t *testing.T, audience ...string) string {
	t.Helper()
	return zitadel.Start(t, &zitadel.Config{
		ServiceSecret: opSvcSecret,
		KeyID:         "serve-test",
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Services: func(clientID string) (zitadel.Service, bool) {
			return zitadel.Service{JWT: true, Audience: audience}, strings.HasPrefix(clientID, "svc-")
		},
	}).Issuer
}

var servingAddr = regexp.MustCompile(`on http://(\S+)/mcp`)

// TestServeSQLProtected serves the demo database protected by the
// provider and lists the tools as a read-only and as a read-write
// service client (client credentials grant through auth.Transport).
func TestServeSQLProtected(t *testing.T) {
	// The audience must be known before the server starts: reserve a
	// port, and use it as --addr.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	resourceURL := "http://" + addr + "/mcp"
	sseURL := "http://" + addr + "/sse"
	issuer := startOP(t, resourceURL, sseURL)

	dbPath := t.TempDir() + "/demo.db"
	if err := sqlserver.EnsureDemo(dbPath); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inv := start(ctx, terminal{}, "", "serve", "sql", "--addr", addr, "--db", dbPath, "--allow-writes",
		"--auth-issuer", issuer, "--auth-scope", "mcp:read")
	t.Cleanup(func() {
		cancel()
		if r := inv.wait(t); r.code != exitOK {
			t.Errorf("serve sql ended with %d: %s", r.code, r.stderr)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for servingAddr.FindString(inv.stderr.String()) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("serve sql did not start: %s", inv.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Without a token: 401 with a challenge naming the metadata.
	resp, err := http.Post(resourceURL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "/.well-known/oauth-protected-resource/mcp") {
		t.Fatalf("no token: %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	// The HTTP+SSE endpoint is protected as /mcp is.
	if _, err := sse.Dial(context.Background(), sseURL, nil); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("HTTP+SSE without a token: %v", err)
	}

	var tokensMu sync.Mutex
	var tokens []string // every Authorization value sent, to look for in the server's output
	record := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if a := r.Header.Get("Authorization"); a != "" {
			tokensMu.Lock()
			tokens = append(tokens, strings.TrimPrefix(a, "Bearer "))
			tokensMu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	connect := func(t *testing.T, cctx context.Context, clientID string, scopes ...string) (*client.Session, error) {
		tr := auth.NewTransport(&auth.Options{Grant: auth.GrantClientCredentials, ClientID: clientID, ClientSecret: opSvcSecret, Scopes: scopes, Base: record})
		c := client.New(protocol.Implementation{Name: "test", Version: "1"}, nil)
		return c.ConnectURL(cctx, resourceURL, &streamable.ClientOptions{HTTPClient: &http.Client{Transport: tr}})
	}
	tools := func(t *testing.T, clientID string, scopes ...string) ([]string, error) {
		tr := auth.NewTransport(&auth.Options{Grant: auth.GrantClientCredentials, ClientID: clientID, ClientSecret: opSvcSecret, Scopes: scopes, Base: record})
		c := client.New(protocol.Implementation{Name: "test", Version: "1"}, nil)
		cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer ccancel()
		s, err := c.ConnectURL(cctx, resourceURL, &streamable.ClientOptions{HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			return nil, err
		}
		defer s.Close()
		res, err := s.ListTools(cctx, nil)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names, nil
	}
	ro, err := tools(t, "svc-reader", "mcp:read")
	if err != nil {
		t.Fatalf("read-only client: %v", err)
	}
	if !slices.Contains(ro, "query") || slices.Contains(ro, "execute") {
		t.Errorf("read-only client sees %v", ro)
	}
	rw, err := tools(t, "svc-writer", "mcp:read", "mcp:write")
	if err != nil {
		t.Fatalf("read-write client: %v", err)
	}
	if !slices.Contains(rw, "query") || !slices.Contains(rw, "execute") {
		t.Errorf("read-write client sees %v", rw)
	}
	// Over HTTP+SSE, the messages are served with the GET's token: its
	// principal and scopes.
	{
		tr := auth.NewTransport(&auth.Options{Grant: auth.GrantClientCredentials, ClientID: "svc-reader", ClientSecret: opSvcSecret, Scopes: []string{"mcp:read"}, Base: record})
		cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
		conn, err := sse.Dial(cctx, sseURL, &sse.ClientOptions{HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			ccancel()
			t.Fatalf("HTTP+SSE with a token: %v", err)
		}
		c := client.New(protocol.Implementation{Name: "test", Version: "1"}, &client.Options{Era: client.EraLegacy, ProtocolVersion: protocol.Version2024_11_05})
		s, err := c.Connect(cctx, conn, nil)
		if err != nil {
			ccancel()
			t.Fatalf("HTTP+SSE session: %v", err)
		}
		res, err := s.ListTools(cctx, nil)
		s.Close()
		ccancel()
		if err != nil {
			t.Fatalf("HTTP+SSE tools: %v", err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Contains(names, "query") || slices.Contains(names, "execute") {
			t.Errorf("read-only client over HTTP+SSE sees %v", names)
		}
	}
	// A token without the required scope is refused.
	if _, err := tools(t, "svc-other", "mcp:write"); err == nil {
		t.Errorf("a token without mcp:read was accepted")
	}
	// A read-only principal that calls execute anyway is refused.
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	s, err := connect(t, cctx, "svc-reader", "mcp:read")
	if err != nil {
		t.Fatalf("read-only client: %v", err)
	}
	_, err = s.CallTool(cctx, "execute", map[string]any{"sql": "DELETE FROM t"}, nil)
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "nsufficient scope") {
		t.Errorf("execute by a read-only principal: %v", err)
	}
	// No token, and not the client secret, appears in what the server wrote.
	out := inv.stderr.String()
	tokensMu.Lock()
	defer tokensMu.Unlock()
	if len(tokens) == 0 {
		t.Fatal("no token was sent")
	}
	for _, tok := range append(tokens, opSvcSecret) {
		if len(tok) > 8 && strings.Contains(out, tok) {
			t.Errorf("the server's output contains a token or the secret")
		}
	}
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestEverythingServerProtected runs the everything-server with
// -auth-issuer and lists its tools with and without a token.
func TestEverythingServerProtected(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	resourceURL := "http://" + addr + "/mcp"
	issuer := startOP(t, resourceURL)
	stderr := &lockedBuffer{}
	cmd := exec.Command(everythingServer, "-addr", addr, "-auth-issuer", issuer, "-auth-scope", "mcp:read")
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(stderr.String(), "serving http://") {
		if time.Now().After(deadline) {
			t.Fatalf("everything-server did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get("http://" + addr + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if err != nil || md.Resource != resourceURL || !slices.Equal(md.AuthorizationServers, []string{issuer}) {
		t.Fatalf("metadata: %v %+v", err, md)
	}
	// HTTP+SSE at /sse, a protected resource of its own.
	resp, err = http.Get("http://" + addr + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "/.well-known/oauth-protected-resource/sse") {
		t.Fatalf("HTTP+SSE without a token: %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	c := client.New(protocol.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if s, err := c.ConnectURL(ctx, resourceURL, nil); err == nil {
		s.Close()
		t.Fatal("connected without a token")
	}
	tr := auth.NewTransport(&auth.Options{Grant: auth.GrantClientCredentials, ClientID: "svc-everything", ClientSecret: opSvcSecret, Scopes: []string{"mcp:read"}})
	s, err := c.ConnectURL(ctx, resourceURL, &streamable.ClientOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.ListTools(ctx, nil)
	if err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools: %v %v", err, res)
	}
}
