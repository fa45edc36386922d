package sqlserver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// TestPostgresRole: Open refuses a role that can do more than read, and
// names what it can do and the way out.
func TestPostgresRole(t *testing.T) {
	e := postgresEnv(t)
	admin, err := sql.Open("pgx", e.adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	// The CI server's role is a superuser.
	_, err = Open(context.Background(), &Options{DSN: e.adminDSN, PollInterval: -1})
	var pe *PrivilegeError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "superuser") || !strings.Contains(err.Error(), "COPY ... TO PROGRAM") ||
		!strings.Contains(err.Error(), "--allow-privileged-role") || !strings.Contains(err.Error(), "CREATE ROLE") {
		t.Fatalf("superuser: want a PrivilegeError naming it and the fix, got %v", err)
	}
	// Served anyway when asked, with a warning.
	var logs bytes.Buffer
	d, err := Open(context.Background(), &Options{DSN: e.adminDSN, PollInterval: -1, AllowPrivilegedRole: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if !strings.Contains(logs.String(), "superuser") || !strings.Contains(logs.String(), "allow-privileged-role") {
		t.Errorf("no warning when serving a superuser: %q", logs.String())
	}

	// A role with one of the dangerous memberships, or owning a table.
	u, err := url.Parse(e.opts.DSN)
	if err != nil {
		t.Fatal(err)
	}
	reader := u.User.Username()
	cases := []struct {
		grant, revoke, want string
	}{
		{"GRANT pg_signal_backend TO " + reader, "REVOKE pg_signal_backend FROM " + reader, "pg_signal_backend"},
		{"GRANT pg_read_server_files TO " + reader, "REVOKE pg_read_server_files FROM " + reader, "pg_read_server_files"},
		{"GRANT pg_write_server_files TO " + reader, "REVOKE pg_write_server_files FROM " + reader, "pg_write_server_files"},
		{"GRANT pg_execute_server_program TO " + reader, "REVOKE pg_execute_server_program FROM " + reader, "pg_execute_server_program"},
		{"ALTER ROLE " + reader + " BYPASSRLS", "ALTER ROLE " + reader + " NOBYPASSRLS", "BYPASSRLS"},
		{"ALTER TABLE u OWNER TO " + reader, "ALTER TABLE u OWNER TO CURRENT_USER", "owns"},
	}
	for _, c := range cases {
		mustExec(t, admin, c.grant)
		_, err := Open(context.Background(), &Options{DSN: e.opts.DSN, PollInterval: -1})
		mustExec(t, admin, c.revoke)
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want a refusal naming %q, got %v", c.grant, c.want, err)
		}
	}
	// The least-privilege role is served.
	d, err = Open(context.Background(), &Options{DSN: e.opts.DSN, PollInterval: -1})
	if err != nil {
		t.Fatalf("least-privilege role refused: %v", err)
	}
	d.Close()
}

// TestPostgresLeastPrivilege: what the superuser could do through the
// query tool, the README's reader role cannot.
func TestPostgresLeastPrivilege(t *testing.T) {
	e := postgresEnv(t)
	_, s := e.open(t, nil)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, q := range []string{
		"COPY (SELECT 1) TO PROGRAM 'touch " + marker + "'",
		"SELECT pg_read_file('/etc/passwd')",
		"SELECT pg_ls_dir('/')",
		"SELECT pg_reload_conf()",
		"SELECT pg_switch_wal()",
		"CHECKPOINT",
	} {
		r := callTool(t, s, "query", map[string]any{"sql": q})
		if !r.IsError || !strings.Contains(r.text(), "database error") {
			t.Errorf("%q: want the database's refusal, got %q", q, r.text())
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("COPY ... TO PROGRAM ran a program")
	}
}

// TestPostgresNoLastingEffects: a call leaves its connection as it found
// it: no advisory lock held, no setting or prepared statement kept, no
// transaction open.
func TestPostgresNoLastingEffects(t *testing.T) {
	e := postgresEnv(t)
	_, s := e.open(t, func(o *Options) { o.MaxConcurrent = 1 })
	for _, q := range []string{
		"SELECT pg_advisory_lock(4242)",
		"SELECT pg_advisory_lock_shared(4243)",
		"SELECT set_config('work_mem', '1MB', false)",
		"PREPARE kept AS SELECT 1",
		"PREPARE mcpkit_rollback AS SELECT 1", // the name of one of the envelope's own
		"LISTEN somewhere",
	} {
		callTool(t, s, "query", map[string]any{"sql": q})
	}
	var free bool
	if err := e.write.QueryRow("SELECT pg_try_advisory_lock(4242) AND pg_try_advisory_lock(4243)").Scan(&free); err != nil || !free {
		t.Errorf("an advisory lock taken through the tool is still held (%v)", err)
	}
	e.write.Exec("SELECT pg_advisory_unlock_all()")
	for _, q := range []string{"SELECT current_setting('work_mem') = '1MB'", "SELECT count(*) > 0 FROM pg_prepared_statements", "SELECT count(*) > 0 FROM pg_listening_channels()"} {
		q2 := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": q}))
		if q2.Rows[0][0] != false {
			t.Errorf("%s: %v, a later call sees what an earlier one left", q, q2.Rows[0][0])
		}
	}
	if n := busySessions(t, e.write, "mcpkit-sql"); n != 0 {
		t.Errorf("%d of the server's sessions are not idle between calls", n)
	}
}

// TestPostgresValues: jsonb, arrays, bytea and numeric come back as JSON
// values of their kind, not strings.
func TestPostgresValues(t *testing.T) {
	e := postgresEnv(t)
	_, s := e.open(t, nil)
	q := decodeQuery(t, callTool(t, s, "query", map[string]any{"sql": `SELECT '{"a":[1,2,{"b":null}]}'::jsonb AS j,
		'[true]'::json AS js, ARRAY[1,2,3] AS ints, ARRAY['x','y z',NULL] AS texts, '\x00ff'::bytea AS bin,
		12.50::numeric AS price, 'NaN'::numeric AS nan, '2024-01-02 03:04:05+00'::timestamptz AS at,
		ARRAY['2024-01-02'::date] AS dates, '7d1e2f3a-0000-4000-8000-000000000001'::uuid AS id`}))
	got, _ := json.Marshal(q.Rows[0])
	want := `[{"a":[1,2,{"b":null}]},[true],[1,2,3],["x","y z",null],{"base64":"AP8="},12.5,"NaN","2024-01-02T03:04:05Z",["2024-01-02"],"7d1e2f3a-0000-4000-8000-000000000001"]`
	if string(got) != want {
		t.Errorf("values:\n got %s\nwant %s", got, want)
	}
}

// TestPostgresDefinerFunctions: a role that can call a SECURITY DEFINER
// function owned by a privileged role does through it what that role can:
// Open refuses it, naming the function and its owner, whether EXECUTE
// comes from PUBLIC (every function's default) or from a group role, and
// serves it once the grant is revoked. The functions live in a database of
// the test's own, so that a function executable by PUBLIC never reaches
// the other tests' roles.
func TestPostgresDefinerFunctions(t *testing.T) {
	e := postgresEnv(t)
	u, err := url.Parse(e.opts.DSN)
	if err != nil {
		t.Fatal(err)
	}
	reader := u.User.Username()
	suffix := strings.TrimPrefix(reader, "mcpkit_reader_")
	dbName := "mcpkit_test_fn_" + suffix
	group, rlsOwner, plain, super := "mcpkit_group_"+suffix, "mcpkit_rls_"+suffix, "mcpkit_plain_"+suffix, "mcpkit_su_"+suffix
	mustExec(t, e.write, "CREATE DATABASE "+dbName)
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP DATABASE " + dbName + " WITH (FORCE)",
			"DROP ROLE IF EXISTS " + group, "DROP ROLE IF EXISTS " + rlsOwner, "DROP ROLE IF EXISTS " + plain, "DROP ROLE IF EXISTS " + super} {
			if _, err := e.write.Exec(stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	inDB := func(dsn string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + dbName
		q := u.Query()
		q.Set("search_path", "public")
		u.RawQuery = q.Encode()
		return u.String()
	}
	admin, err := sql.Open("pgx", inDB(e.adminDSN))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, stmt := range []string{
		"CREATE ROLE " + group + " NOLOGIN",
		"CREATE ROLE " + rlsOwner + " NOLOGIN BYPASSRLS",
		"CREATE ROLE " + plain + " NOLOGIN",
		"CREATE ROLE " + super + " NOLOGIN SUPERUSER",
		// What the attacker used: a superuser's function that reads files,
		// created the usual way (EXECUTE granted to PUBLIC).
		"CREATE FUNCTION peek(path text) RETURNS text LANGUAGE sql SECURITY DEFINER AS $$ SELECT pg_read_file(path) $$",
		// Neither of these lends the role a privilege it lacks.
		"CREATE FUNCTION invoker(path text) RETURNS text LANGUAGE sql AS $$ SELECT pg_read_file(path) $$",
		"CREATE FUNCTION harmless() RETURNS int LANGUAGE sql SECURITY DEFINER AS $$ SELECT 1 $$",
		"ALTER FUNCTION harmless() OWNER TO " + plain,
	} {
		mustExec(t, admin, stmt)
	}
	dsn := inDB(e.opts.DSN)
	refused := func(step string, want ...string) {
		t.Helper()
		_, err := Open(context.Background(), &Options{DSN: dsn, PollInterval: -1})
		var pe *PrivilegeError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: want a PrivilegeError, got %v", step, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the refusal does not say %q:\n%v", step, w, err)
			}
		}
	}
	refused("PUBLIC", "SECURITY DEFINER function public.peek(path text)", "its owner mcpkit (a superuser)",
		"granted to PUBLIC", "REVOKE EXECUTE ON FUNCTION public.peek(path text) FROM PUBLIC", "--allow-privileged-role")

	// The danger is real: served anyway, the reader reads the server's files.
	var logs bytes.Buffer
	d, err := Open(context.Background(), &Options{DSN: dsn, PollInterval: -1, AllowPrivilegedRole: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(protocol.Implementation{Name: "sql-test", Version: "1.0.0"}, nil)
	d.Register(s)
	if r := callTool(t, s, "query", map[string]any{"sql": "SELECT public.peek('PG_VERSION')"}); r.IsError || !strings.Contains(r.text(), "1") {
		t.Errorf("the definer function did not read the server's file: %s", r.text())
	}
	if r := callTool(t, s, "query", map[string]any{"sql": "SELECT public.invoker('PG_VERSION')"}); !r.IsError {
		t.Errorf("a SECURITY INVOKER function read the server's file: %s", r.text())
	}
	d.Close()
	if !strings.Contains(logs.String(), "public.peek(path text)") {
		t.Errorf("no warning naming the function: %q", logs.String())
	}

	mustExec(t, admin, "REVOKE EXECUTE ON FUNCTION peek(text) FROM PUBLIC")
	mustExec(t, admin, "GRANT EXECUTE ON FUNCTION peek(text) TO "+group)
	mustExec(t, admin, "GRANT "+group+" TO "+reader)
	refused("through a group role", "public.peek(path text)", "through a role it belongs to")
	mustExec(t, admin, "REVOKE "+group+" FROM "+reader)

	mustExec(t, admin, "ALTER FUNCTION peek(text) OWNER TO "+rlsOwner)
	mustExec(t, admin, "GRANT EXECUTE ON FUNCTION peek(text) TO PUBLIC")
	refused("BYPASSRLS owner", "public.peek(path text)", "its owner "+rlsOwner+" (BYPASSRLS)")
	mustExec(t, admin, "REVOKE EXECUTE ON FUNCTION peek(text) FROM PUBLIC")

	mustExec(t, admin, "GRANT "+super+" TO "+reader)
	refused("member of a superuser role", "member of "+super+" (a superuser)", "SET ROLE")
	mustExec(t, admin, "REVOKE "+super+" FROM "+reader)

	// Revoked: served.
	d, err = Open(context.Background(), &Options{DSN: dsn, PollInterval: -1})
	if err != nil {
		t.Fatalf("after REVOKE: %v", err)
	}
	d.Close()
}

// TestPostgresSessionLimitsHold: the limits each read-only session gets
// when it connects (statement_timeout, lock_timeout, work_mem,
// default_transaction_read_only) hold for every later call on that
// connection, whatever a call does to them: SET, SET SESSION, set_config,
// RESET ALL, SET SESSION CHARACTERISTICS. Each tampering call is followed
// by eight calls, on the same backend (one statement at a time, so the
// pool hands back the connection just used), which must see the limits as
// they were.
func TestPostgresSessionLimitsHold(t *testing.T) {
	e := postgresEnv(t)
	_, s := e.open(t, func(o *Options) { o.MaxConcurrent = 1 })
	const probe = "SELECT pg_backend_pid()::text, current_setting('statement_timeout'), current_setting('lock_timeout'), " +
		"current_setting('work_mem'), current_setting('default_transaction_read_only'), current_setting('transaction_read_only')"
	read := func(sql string) []any {
		t.Helper()
		r := callTool(t, s, "query", map[string]any{"sql": sql})
		if r.IsError {
			return nil
		}
		return decodeQuery(t, r).Rows[0]
	}
	want := read(probe)
	if want[1] != "30s" || want[2] != "5s" || want[4] != "on" || want[5] != "on" {
		t.Fatalf("session limits: %v", want)
	}
	for _, tamper := range []string{
		"SELECT pg_backend_pid()::text, set_config('statement_timeout', '0', false), set_config('lock_timeout', '0', false), " +
			"set_config('work_mem', '1GB', false), set_config('default_transaction_read_only', 'off', false)",
		"SET statement_timeout = 0",
		"SET SESSION work_mem = '1GB'",
		"RESET ALL",
		"SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
		"SET default_transaction_read_only = off",
	} {
		callTool(t, s, "query", map[string]any{"sql": tamper})
		for range 8 {
			got := read(probe)
			for i := 1; i < len(want); i++ {
				if got[i] != want[i] {
					t.Errorf("after %q: %v, want %v", tamper, got, want)
					break
				}
			}
		}
	}
	if r := callTool(t, s, "query", map[string]any{"sql": "DELETE FROM t"}); !r.IsError {
		t.Error("a write ran after the tampering")
	}
}
