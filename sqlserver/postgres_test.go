package sqlserver

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// postgresEnv seeds a schema of its own on the server named by
// MCPKIT_TEST_POSTGRES_DSN (a superuser's, in CI) and serves it through
// two least-privilege roles made as the README's Security section says: a
// reader and, for execute, a writer. All three go when the test ends.
func postgresEnv(t testing.TB) *env {
	t.Helper()
	dsn := adminDSN(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	b := make([]byte, 6)
	rand.Read(b)
	suffix := hex.EncodeToString(b)
	schema := "mcpkit_test_" + suffix
	reader, writer := "mcpkit_reader_"+suffix, "mcpkit_writer_"+suffix
	mustExec(t, admin, "CREATE SCHEMA "+schema)
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP SCHEMA " + schema + " CASCADE", "DROP OWNED BY " + reader + ", " + writer,
			"DROP ROLE IF EXISTS " + reader, "DROP ROLE IF EXISTS " + writer} {
			if _, err := admin.Exec(stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	w, err := sql.Open("pgx", withDSN(t, dsn, "", schema))
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
		"COMMENT ON TABLE t IS 'Things with names'",
		"COMMENT ON COLUMN t.name IS 'The display name'",
	} {
		mustExec(t, w, stmt)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range roleSQL(strings.TrimPrefix(u.Path, "/"), schema, reader, writer) {
		mustExec(t, admin, stmt)
	}
	return &env{
		name:      "postgres",
		opts:      Options{DSN: withDSN(t, dsn, reader, schema), PollInterval: -1},
		writerDSN: withDSN(t, dsn, writer, schema),
		adminDSN:  withDSN(t, dsn, "", schema),
		write:     w,
		series:    func(n int) string { return fmt.Sprintf("SELECT x FROM generate_series(1, %d) AS x", n) },
		slow:      "SELECT pg_sleep(5)",
		refusal:   "read-only transaction",
		multi:     "cannot insert multiple commands",
	}
}

// roleSQL is the README's recipe for the two roles (passwords aside: the
// test server trusts loopback connections).
func roleSQL(db, schema, reader, writer string) []string {
	return []string{
		"CREATE ROLE " + reader + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS",
		"GRANT CONNECT ON DATABASE " + db + " TO " + reader,
		"GRANT USAGE ON SCHEMA " + schema + " TO " + reader,
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + schema + " TO " + reader,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA " + schema + " GRANT SELECT ON TABLES TO " + reader,
		"ALTER ROLE " + reader + " SET temp_file_limit = '1GB'",
		"CREATE ROLE " + writer + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS",
		"GRANT CONNECT ON DATABASE " + db + " TO " + writer,
		"GRANT USAGE ON SCHEMA " + schema + " TO " + writer,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + writer,
		"GRANT USAGE ON ALL SEQUENCES IN SCHEMA " + schema + " TO " + writer,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA " + schema + " GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO " + writer,
		"ALTER ROLE " + writer + " SET temp_file_limit = '1GB'",
	}
}

// adminDSN returns MCPKIT_TEST_POSTGRES_DSN, failing in CI and skipping
// elsewhere when it is not set.
func adminDSN(t testing.TB) string {
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
	return dsn
}

// withDSN returns dsn logging in as user (when not "") with search_path
// set to schema.
func withDSN(t testing.TB, dsn, user, schema string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		u.User = url.User(user)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func mustExec(t testing.TB, db *sql.DB, stmt string, args ...any) {
	t.Helper()
	if _, err := db.Exec(stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
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
