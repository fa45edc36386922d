package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// TestReadMIME: read --mime picks one content of a resource with several,
// so a pipe gets JSON alone.
func TestReadMIME(t *testing.T) {
	url, _ := serveSQL(t)
	r := mcpkit(t, "read", url, "sql://schema", "--mime", "application/json")
	if r.code != exitOK || !json.Valid([]byte(r.stdout)) || strings.Contains(r.stdout, "--- sql://schema") {
		t.Fatalf("read --mime application/json: %d %.200s %s", r.code, r.stdout, r.stderr)
	}
	r = mcpkit(t, "read", url, "sql://schema", "--mime", "text/plain")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "SQLite database") {
		t.Errorf("read --mime text/plain: %d %.200s", r.code, r.stdout)
	}
	r = mcpkit(t, "read", url, "sql://schema", "--mime", "image/png")
	if r.code != exitFailed || !strings.Contains(r.stderr, "application/json, text/plain") {
		t.Errorf("read --mime image/png: %d %s", r.code, r.stderr)
	}
}

// TestCheckCallToolError: check --call of a call that ends in a tool error
// (query without its sql) does not fail call.structured: an error result
// carries no structuredContent.
func TestCheckCallToolError(t *testing.T) {
	url, _ := serveSQL(t)
	r := mcpkit(t, "check", url, "--call", "query", "--args", `{"sql":"select nope"}`)
	if strings.Contains(r.stdout, "FAIL") && strings.Contains(r.stdout, "call.structured") {
		t.Errorf("check --call query with a failing statement: %s", r.stdout)
	}
}

// TestDescribeTableOnTerminal: describe_table on a terminal prints its
// outline, not the outline and then the same as JSON.
func TestDescribeTableOnTerminal(t *testing.T) {
	url, _ := serveSQL(t)
	r := mcpkitWith(t, terminal{stdout: true}, "", "call", url, "describe_table", "table=customers")
	if r.code != exitOK || !strings.Contains(r.stdout, "TABLE customers") || strings.Contains(r.stdout, `"columns"`) {
		t.Errorf("describe_table on a terminal: %d\n%s", r.code, r.stdout)
	}
	if lines := strings.Count(r.stdout, "\n"); lines > 40 {
		t.Errorf("describe_table on a terminal: %d lines", lines)
	}
}

// TestProgressNumbers: progress values print with three decimals at most.
func TestProgressNumbers(t *testing.T) {
	for in, want := range map[float64]string{26.000977636: "26.001", 3: "3", 0.5: "0.5", 12.3456: "12.346"} {
		if got := number(in); got != want {
			t.Errorf("number(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestDefaultTimeoutOutlivesStatement: the client's default --timeout is
// longer than serve sql's default statement timeout, so that a slow query
// ends with the server's message, which names --statement-timeout.
func TestDefaultTimeoutOutlivesStatement(t *testing.T) {
	if defaultTimeout <= sqlserver.DefaultStatementTimeout+5e9 {
		t.Errorf("--timeout %s, --statement-timeout %s", defaultTimeout, sqlserver.DefaultStatementTimeout)
	}
}

// TestServeSQLConnectCause: a DSN that cannot connect is reported by its
// cause, not by the TLS attempt sslmode=prefer makes first.
func TestServeSQLConnectCause(t *testing.T) {
	dsn := os.Getenv("MCPKIT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("MCPKIT_TEST_POSTGRES_DSN is not set")
	}
	bad := strings.Replace(strings.Replace(dsn, "sslmode=disable", "sslmode=prefer", 1), "://mcpkit@", "://mcpkit_no_such_role@", 1)
	r := mcpkit(t, "serve", "sql", "--stdio", "--dsn", bad)
	first, _, _ := strings.Cut(r.stderr, "\n")
	if r.code != exitUnreachable || !strings.Contains(first, `role "mcpkit_no_such_role" does not exist`) || strings.Contains(first, "tls") {
		t.Errorf("exit %d, first line %q", r.code, first)
	}
}
