package sqlserver

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// postgresEnv seeds a schema of its own on the server named by
// MCPKIT_TEST_POSTGRES_DSN and drops it when the test ends.
func postgresEnv(t *testing.T) *env {
	t.Helper()
	dsn := os.Getenv("MCPKIT_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			// CI starts a server (.ci/run): skipping there would hide the
			// PostgreSQL half of the tests.
			t.Fatal("MCPKIT_TEST_POSTGRES_DSN is not set in CI")
		}
		t.Skip("MCPKIT_TEST_POSTGRES_DSN is not set; set it to a postgres:// URL to run the PostgreSQL tests")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	b := make([]byte, 6)
	rand.Read(b)
	schema := "mcpkit_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	w, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for _, stmt := range []string{
		"CREATE TABLE t (id serial PRIMARY KEY, name text NOT NULL)",
		"INSERT INTO t (id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three')",
		"CREATE TABLE u (id integer PRIMARY KEY, t_id integer REFERENCES t (id))",
		"CREATE INDEX u_t ON u (t_id)",
		"INSERT INTO u VALUES (1, 1)",
	} {
		if _, err := w.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	return &env{
		name:    "postgres",
		opts:    Options{DSN: u.String(), PollInterval: -1},
		write:   w,
		series:  func(n int) string { return fmt.Sprintf("SELECT x FROM generate_series(1, %d) AS x", n) },
		slow:    "SELECT pg_sleep(5)",
		refusal: "read-only transaction",
		multi:   "cannot insert multiple commands",
	}
}

func TestPostgres(t *testing.T) {
	runShared(t, postgresEnv(t))
}

// assertIdlePostgres checks that no backend still runs the slow statement.
func (e *env) assertIdlePostgres(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		var n int
		err := e.write.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'mcpkit-sql' AND state = 'active' AND query LIKE '%pg_sleep%'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends still run the cancelled query", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
