package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/oauthtest/zitadel"
	"github.com/mcpkit/mcpkit/sqlserver"
)

// TestServeSQLSSEAuthorizesEachPOST: over HTTP+SSE each POSTed message is
// authorized with the POST's own access token, not the stream's. On a
// stream opened with a read-write token, a POST of the same principal with
// a read-only token does not see or run execute, and a POST with an
// expired token is refused with 401.
func TestServeSQLSSEAuthorizesEachPOST(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	resourceURL := "http://" + addr + "/mcp"
	sseURL := "http://" + addr + "/sse"
	op := zitadel.Start(t, &zitadel.Config{
		ServiceSecret: opSvcSecret,
		KeyID:         "serve-sse-test",
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Services: func(clientID string) (zitadel.Service, bool) {
			svc := zitadel.Service{JWT: true, Audience: []string{resourceURL, sseURL}}
			switch clientID {
			case "svc-alice":
			case "svc-alice-stale": // alice's, issued already expired
				svc.Subject, svc.Lifetime = "svc-alice", -time.Minute
			default:
				return svc, false
			}
			return svc, true
		},
	})
	dbPath := t.TempDir() + "/demo.db"
	if err := sqlserver.EnsureDemo(dbPath); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inv := start(ctx, terminal{}, "", "serve", "sql", "--addr", addr, "--db", dbPath, "--allow-writes",
		"--auth-issuer", op.Issuer, "--auth-scope", "mcp:read")
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
	tokenURL := op.Discover(t).TokenEndpoint
	rw := clientCredentials(t, tokenURL, "svc-alice", "mcp:read mcp:write")
	ro := clientCredentials(t, tokenURL, "svc-alice", "mcp:read")
	stale := clientCredentials(t, tokenURL, "svc-alice-stale", "mcp:read mcp:write")

	// The stream, opened with the read-write token.
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	req, _ := http.NewRequestWithContext(sctx, http.MethodGet, sseURL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+rw)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET with the read-write token: %s", resp.Status)
	}
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the stream ended")
			}
			return ev
		case <-sctx.Done():
			t.Fatal("no event")
		}
		return ""
	}
	endpoint, err := url.Parse(next())
	if err != nil {
		t.Fatal(err)
	}
	messages := (&url.URL{Scheme: "http", Host: addr}).ResolveReference(endpoint).String()
	post := func(token, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(sctx, http.MethodPost, messages, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	call := func(token, body string) string {
		t.Helper()
		if resp := post(token, body); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %s", body, resp.Status)
		}
		return next()
	}
	if m := call(rw, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`); !strings.Contains(m, `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize: %s", m)
	}
	if resp := post(rw, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s", resp.Status)
	}

	// The read-only token: execute is neither listed nor run.
	if m := call(ro, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); !strings.Contains(m, `"name":"query"`) || strings.Contains(m, `"name":"execute"`) {
		t.Errorf("tools/list with the read-only token: %.300s", m)
	}
	if m := call(ro, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute","arguments":{"sql":"CREATE TABLE pwned (x)"}}}`); !strings.Contains(m, "nsufficient scope") {
		t.Errorf("execute with the read-only token: %.300s", m)
	}
	// The read-write token on the same stream: listed.
	if m := call(rw, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); !strings.Contains(m, `"name":"execute"`) {
		t.Errorf("tools/list with the read-write token: %.300s", m)
	}
	// An expired token of the same principal is refused before anything.
	resp = post(stale, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
		t.Errorf("POST with an expired token: %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	// Nothing was created.
	if m := call(ro, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"query","arguments":{"sql":"select count(*) as n from sqlite_master where name = 'pwned'"}}}`); !strings.Contains(m, `"id":6`) || !strings.Contains(m, `"text":"n\n-\n0\n`) {
		t.Errorf("after the refusals: %.300s", m)
	}
}

// clientCredentials gets an access token for clientID with the scopes
// from the provider's token endpoint.
func clientCredentials(t *testing.T, tokenURL, clientID, scope string) string {
	t.Helper()
	resp, err := http.PostForm(tokenURL, url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {opSvcSecret}, "scope": {scope}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token for %s: %s %v", clientID, resp.Status, err)
	}
	return tok.AccessToken
}
