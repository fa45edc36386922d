package sqlserver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth/resource"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// RLSDatabase is a database of a test's own holding the README's example
// of row-level security by the caller's identity:
//
//	notes(id, owner, body): alice's 1 and 2, bob's 3
//
// readable under a policy on the caller's claims (request.jwt.claims
// sub) and one on the role a call runs as (rls_alice_..., rls_bob_...),
// with set_config() and DO blocks revoked from PUBLIC as the README says.
type rlsDatabase struct {
	readerDSN          string
	aliceRole, bobRole string
}

func newRLSDatabase(t *testing.T) *rlsDatabase {
	t.Helper()
	admin := adminDSN(t)
	b := make([]byte, 5)
	rand.Read(b)
	sfx := hex.EncodeToString(b)
	name := "mcpkit_rls_" + sfx
	reader, writer := "mcpkit_rls_reader_"+sfx, "mcpkit_rls_writer_"+sfx
	alice, bob := "rls_alice_"+sfx, "rls_bob_"+sfx
	root, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, root, "CREATE DATABASE "+name)
	t.Cleanup(func() {
		defer root.Close()
		for _, stmt := range []string{"DROP DATABASE " + name + " WITH (FORCE)", "DROP ROLE IF EXISTS " + reader,
			"DROP ROLE IF EXISTS " + writer, "DROP ROLE IF EXISTS " + alice, "DROP ROLE IF EXISTS " + bob} {
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
	stmts := []string{
		"REVOKE EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) FROM PUBLIC",
		"REVOKE USAGE ON LANGUAGE plpgsql FROM PUBLIC",
		"CREATE TABLE notes (id integer PRIMARY KEY, owner text NOT NULL, body text NOT NULL)",
		"INSERT INTO notes VALUES (1, 'alice', 'a1'), (2, 'alice', 'a2'), (3, 'bob', 'b1')",
		"ALTER TABLE notes ENABLE ROW LEVEL SECURITY",
		"CREATE POLICY by_claims ON notes FOR SELECT USING (owner = nullif(current_setting('request.jwt.claims', true), '')::json->>'sub')",
	}
	stmts = append(stmts, roleSQL(name, "public", reader, writer)...)
	stmts = append(stmts,
		"CREATE ROLE "+alice+" NOLOGIN", "CREATE ROLE "+bob+" NOLOGIN",
		"GRANT SELECT ON notes TO "+alice+", "+bob, "GRANT "+alice+", "+bob+" TO "+reader,
		fmt.Sprintf("CREATE POLICY by_role ON notes FOR SELECT TO %s, %s USING ('rls_' || owner || '_%s' = current_user)", alice, bob, sfx),
	)
	for _, stmt := range stmts {
		mustExec(t, db, stmt)
	}
	u.User = url.User(reader)
	return &rlsDatabase{readerDSN: u.String(), aliceRole: alice, bobRole: bob}
}

func asCaller(sub string) context.Context {
	return resource.WithPrincipal(context.Background(), &resource.Principal{Subject: sub, Issuer: "https://issuer.example",
		Claims: map[string]any{"sub": sub, "iss": "https://issuer.example"}})
}

// noteIDs reads the notes a caller sees, by the query tool and by the
// table's sample rows.
func noteIDs(t *testing.T, s *server.Server, ctx context.Context) string {
	t.Helper()
	r, jerr := handle(t, ctx, s, nil, "tools/call", map[string]any{"name": "query", "arguments": map[string]any{"sql": "SELECT id FROM notes ORDER BY id"}})
	if jerr != nil {
		t.Fatalf("query: %v", jerr)
	}
	if r.IsError {
		return "error: " + r.text()
	}
	q := decodeQuery(t, r)
	var ids []string
	for _, row := range q.Rows {
		ids = append(ids, fmt.Sprint(row[0]))
	}
	return strings.Join(ids, ",")
}

// TestPostgresCallerClaims: with CallerClaims, two callers see their own
// rows of one table through one server, a call without a token sees none,
// and a statement cannot change the claims it is checked against.
func TestPostgresCallerClaims(t *testing.T) {
	rls := newRLSDatabase(t)
	d, err := Open(context.Background(), &Options{DSN: rls.readerDSN, PollInterval: -1, CallerClaims: true, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	s := server.New(protocol.Implementation{Name: "rls-test", Version: "1"}, nil)
	d.Register(s)
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{{asCaller("alice"), "1,2"}, {asCaller("bob"), "3"}, {context.Background(), ""}, {asCaller("alice"), "1,2"}} {
		if got := noteIDs(t, s, c.ctx); got != c.want {
			t.Errorf("caller sees %q, want %q", got, c.want)
		}
	}
	for _, spoof := range []string{
		`SELECT id FROM notes, set_config('request.jwt.claims', '{"sub":"bob"}', true) AS s`,
		`DO $$ BEGIN SET LOCAL request.jwt.claims = '{"sub":"bob"}'; RAISE EXCEPTION '%', (SELECT string_agg(body, ',') FROM notes); END $$`,
	} {
		r, _ := handle(t, asCaller("alice"), s, nil, "tools/call", map[string]any{"name": "query", "arguments": map[string]any{"sql": spoof}})
		if !r.IsError || strings.Contains(r.text(), "b1") || !strings.Contains(r.text(), "permission denied") {
			t.Errorf("%s: want a refusal, got %q", spoof, r.text())
		}
	}
	// The claims end with their call: a statement alone cannot keep them.
	handle(t, asCaller("bob"), s, nil, "tools/call", map[string]any{"name": "query", "arguments": map[string]any{"sql": `SET request.jwt.claims = '{"sub":"bob"}'`}})
	if got := noteIDs(t, s, context.Background()); got != "" {
		t.Errorf("after a SET, a call without a token sees %q", got)
	}
}

// TestPostgresCallerRole: with RoleClaim, each call runs as the role its
// caller's claim maps to; a caller mapped to none is refused, and a
// statement cannot take another role.
func TestPostgresCallerRole(t *testing.T) {
	rls := newRLSDatabase(t)
	d, err := Open(context.Background(), &Options{DSN: rls.readerDSN, PollInterval: -1, RoleClaim: "sub", MaxConcurrent: 1,
		Roles: map[string]string{"alice": rls.aliceRole, "bob": rls.bobRole}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	s := server.New(protocol.Implementation{Name: "rls-test", Version: "1"}, nil)
	d.Register(s)
	if got := noteIDs(t, s, asCaller("alice")); got != "1,2" {
		t.Errorf("alice sees %q", got)
	}
	if got := noteIDs(t, s, asCaller("bob")); got != "3" {
		t.Errorf("bob sees %q", got)
	}
	for _, ctx := range []context.Context{asCaller("carol"), context.Background()} {
		if got := noteIDs(t, s, ctx); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "role") {
			t.Errorf("a caller mapped to no role: %q", got)
		}
	}
	r, _ := handle(t, asCaller("alice"), s, nil, "tools/call", map[string]any{"name": "query", "arguments": map[string]any{
		"sql": "SELECT id FROM notes, set_config('role', '" + rls.bobRole + "', true) AS s"}})
	if !r.IsError || !strings.Contains(r.text(), "permission denied") {
		t.Errorf("taking another role: %q", r.text())
	}
}

// TestPostgresCallerIdentityRefused: Open refuses the identity options
// where the role may execute set_config() or run DO blocks, naming the
// REVOKE that fixes each.
func TestPostgresCallerIdentityRefused(t *testing.T) {
	e := postgresEnv(t)
	o := e.opts
	o.CallerClaims = true
	_, err := Open(context.Background(), &o)
	if err == nil {
		t.Fatal("Open served CallerClaims with a role that may execute set_config()")
	}
	for _, want := range []string{"set_config", "REVOKE EXECUTE ON FUNCTION pg_catalog.set_config", "REVOKE USAGE ON LANGUAGE plpgsql"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
	if _, err := Open(context.Background(), &Options{Path: t.TempDir() + "/x.db", CallerClaims: true}); err == nil {
		t.Error("CallerClaims accepted on SQLite")
	}
}
