package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestServeSQLRowLevelSecurity: two OAuth principals (service clients of
// the zitadel provider, their subjects svc-alice and svc-bob) see
// different rows of one table through one `serve sql --caller-claims`,
// under the README's policy on request.jwt.claims.
func TestServeSQLRowLevelSecurity(t *testing.T) {
	admin := os.Getenv("MCPKIT_TEST_POSTGRES_DSN")
	if admin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("MCPKIT_TEST_POSTGRES_DSN is not set in CI")
		}
		t.Skip("MCPKIT_TEST_POSTGRES_DSN is not set")
	}
	reader := rlsDatabase(t, admin)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	resourceURL := "http://" + addr + "/mcp"
	issuer := startOP(t, resourceURL)
	ctx, cancel := context.WithCancel(context.Background())
	inv := start(ctx, terminal{}, "", "serve", "sql", "--addr", addr, "--dsn", reader, "--poll", "-1s",
		"--auth-issuer", issuer, "--caller-claims", "--log-requests")
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
	notes := func(clientID string) string {
		tr := auth.NewTransport(&auth.Options{Grant: auth.GrantClientCredentials, ClientID: clientID, ClientSecret: opSvcSecret})
		c := client.New(protocol.Implementation{Name: "test", Version: "1"}, nil)
		cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer ccancel()
		s, err := c.ConnectURL(cctx, resourceURL, &streamable.ClientOptions{HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatalf("%s: %v", clientID, err)
		}
		defer s.Close()
		res, err := s.CallTool(cctx, "query", map[string]any{"sql": "SELECT body FROM notes ORDER BY id"}, nil)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", clientID, err, res)
		}
		var out struct {
			Rows [][]string `json:"rows"`
		}
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for _, r := range out.Rows {
			bodies = append(bodies, r[0])
		}
		return strings.Join(bodies, ",")
	}
	if got := notes("svc-alice"); got != "a1,a2" {
		t.Errorf("svc-alice sees %q, want a1,a2", got)
	}
	if got := notes("svc-bob"); got != "b1" {
		t.Errorf("svc-bob sees %q, want b1", got)
	}
	if got := notes("svc-alice"); got != "a1,a2" {
		t.Errorf("svc-alice, again, sees %q", got)
	}
	log := inv.stderr.String()
	if !strings.Contains(log, `"tool":"query"`) || !strings.Contains(log, "svc-alice") || strings.Contains(log, "SELECT body") {
		t.Errorf("request log:\n%s", log)
	}
}

// rlsDatabase makes a database of the test's own with the README's
// row-level security example and returns its reader's DSN.
func rlsDatabase(t *testing.T, admin string) string {
	t.Helper()
	b := make([]byte, 5)
	rand.Read(b)
	sfx := hex.EncodeToString(b)
	name, reader := "mcpkit_rlscli_"+sfx, "mcpkit_rlscli_reader_"+sfx
	root, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(db *sql.DB, stmt string) {
		t.Helper()
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec(root, "CREATE DATABASE "+name)
	t.Cleanup(func() {
		defer root.Close()
		for _, stmt := range []string{"DROP DATABASE " + name + " WITH (FORCE)", "DROP ROLE IF EXISTS " + reader} {
			if _, err := root.Exec(stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	u, _ := url.Parse(admin)
	u.Path = "/" + name
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{
		"REVOKE EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) FROM PUBLIC",
		"REVOKE USAGE ON LANGUAGE plpgsql FROM PUBLIC",
		"CREATE TABLE notes (id integer PRIMARY KEY, owner text NOT NULL, body text NOT NULL)",
		"INSERT INTO notes VALUES (1, 'svc-alice', 'a1'), (2, 'svc-alice', 'a2'), (3, 'svc-bob', 'b1')",
		"ALTER TABLE notes ENABLE ROW LEVEL SECURITY",
		"CREATE POLICY by_subject ON notes FOR SELECT USING (owner = nullif(current_setting('request.jwt.claims', true), '')::json->>'sub')",
		"CREATE ROLE " + reader + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS",
		fmt.Sprintf("GRANT CONNECT ON DATABASE %s TO %s", name, reader),
		"GRANT USAGE ON SCHEMA public TO " + reader,
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + reader,
	} {
		exec(db, stmt)
	}
	u.User = url.User(reader)
	return u.String()
}
