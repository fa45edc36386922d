package sqlserver

import (
	"math/rand/v2"
	"strings"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

func TestSQLiteStatements(t *testing.T) {
	tests := []struct {
		sql  string
		want int
	}{
		{"", 0},
		{" ; ;; -- nothing\n /* at all */", 0},
		{"SELECT 1", 1},
		{"SELECT 1;", 1},
		{"SELECT 1 ; ;\n-- trailing comment", 1},
		{"SELECT 1; SELECT 2", 2},
		{"SELECT 1;SELECT 2;", 2},
		{"SELECT ';'", 1},
		{`SELECT "a;b" FROM t`, 1},
		{"SELECT `a;b`, [c;d] FROM t", 1},
		{"SELECT 'it''s; fine'", 1},
		{"SELECT 1 -- ; SELECT 2", 1},
		{"SELECT 1 /* ; SELECT 2 */", 1},
		{"SELECT 1 /* unterminated ; SELECT 2", 1},
		{"SELECT 'unterminated ; SELECT 2", 1},
		{"SELECT x'00'; SELECT 2", 2},
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET a = 1; DELETE FROM u; END", 1},
		{"CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT CASE WHEN 1 THEN 2 END; END; SELECT 1", 2},
		{"create temporary trigger tr after insert on t begin select 1; end;", 1},
		{"EXPLAIN CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END", 1},
		{"CREATE TABLE trigger_log (a); SELECT 1", 2},
		{"SELECT end FROM t; SELECT 2", 2},
		{"BEGIN; DELETE FROM t; COMMIT", 3},
	}
	for _, tt := range tests {
		if got := sqliteStatements(tt.sql); got != tt.want {
			t.Errorf("sqliteStatements(%q) = %d, want %d", tt.sql, got, tt.want)
		}
	}
	for _, bad := range []string{"SELECT 1; SELECT 2", "", "SELECT 1\x00; DELETE FROM t"} {
		if oneSQLiteStatement(bad) == nil {
			t.Errorf("oneSQLiteStatement(%q) accepted it", bad)
		}
	}
}

// libComplete is SQLite's own sqlite3_complete.
func libComplete(t testing.TB, tls *libc.TLS, sql string) bool {
	cs, err := libc.CString(sql)
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Xfree(tls, cs)
	return sqlite3.Xsqlite3_complete(tls, cs) != 0
}

// checkAgainstLib compares sqliteComplete with sqlite3_complete on sql and
// on each of its prefixes that ends with a semicolon: where they agree on
// every prefix, they agree on where each statement ends.
func checkAgainstLib(t testing.TB, tls *libc.TLS, sql string) {
	if strings.IndexByte(sql, 0) >= 0 {
		return
	}
	check := func(s string) {
		if got, want := sqliteComplete(s), libComplete(t, tls, s); got != want {
			t.Fatalf("sqliteComplete(%q) = %v, sqlite3_complete says %v", s, got, want)
		}
	}
	check(sql)
	var ends []int
	for i := 0; i < len(sql); i++ {
		if sql[i] == ';' || sql[i] == '\n' {
			ends = append(ends, i+1)
		}
	}
	// Every prefix that ends a statement, or 256 of them spread over a
	// longer input: each check reads the prefix whole, and a fuzzed input
	// of thousands of semicolons would otherwise take seconds.
	step := max(1, len(ends)/256)
	for k := 0; k < len(ends); k += step {
		check(sql[:ends[k]])
	}
	if len(ends) > 0 {
		check(sql[:ends[len(ends)-1]])
	}
}

var statementPieces = []string{
	";", " ", "\n", "SELECT", "1", "'a;b'", "''", "'", `"x;y"`, `"`, "`q;`", "`", "[b;]", "[", "]",
	"--c\n", "-- c", "/*;*/", "/*", "*/", "-", "/", "CREATE", "create", "TEMP", "Temporary", "TRIGGER",
	"trigger", "BEGIN", "END", "end", "EXPLAIN", "explain", "CASE", "x'00'", "tr", "ON", "t", "$a",
	"é", "_end", "end_", "TRIGGERS",
}

func TestStatementsAgreeWithSQLite(t *testing.T) {
	tls := libc.NewTLS()
	defer tls.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := r.IntN(16); n >= 0; n-- {
			b.WriteString(statementPieces[r.IntN(len(statementPieces))])
			if r.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
		checkAgainstLib(t, tls, b.String())
	}
}

func FuzzStatements(f *testing.F) {
	for _, p := range []string{"SELECT 1; SELECT 2", "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END;", "SELECT '--;'; /* ; */"} {
		f.Add(p)
	}
	tls := libc.NewTLS()
	f.Cleanup(func() { tls.Close() })
	f.Fuzz(func(t *testing.T, sql string) {
		checkAgainstLib(t, tls, sql)
	})
}
