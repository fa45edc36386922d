package sqlserver

import (
	"context"
	"testing"
)

// BenchmarkPostgresReset measures what leaving a connection as it was
// found costs a call: a read as the dialect runs it (BEGIN READ ONLY with
// the SET LOCAL limits, the statement, ROLLBACK) without and with the
// DISCARD ALL after it, and a whole query tool call for scale.
//
//	MCPKIT_TEST_POSTGRES_DSN=... go test -run '^$' -bench PostgresReset ./sqlserver/
func BenchmarkPostgresReset(b *testing.B) {
	e := postgresEnv(b)
	o := e.opts.withDefaults()
	p := newPostgresDialect(o)
	db, _, err := openPostgres(o.DSN, false, p.maxBodyLen, 4)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	read := func(b *testing.B, discard bool) {
		c, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if _, err := c.ExecContext(ctx, p.limits(ctx, "BEGIN READ ONLY")); err != nil {
				b.Fatal(err)
			}
			var n int
			if err := c.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
				b.Fatal(err)
			}
			if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
				b.Fatal(err)
			}
			if discard {
				if _, err := c.ExecContext(ctx, "DISCARD ALL"); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("rollback", func(b *testing.B) { read(b, false) })
	b.Run("rollback+discard", func(b *testing.B) { read(b, true) })
	b.Run("tool-call", func(b *testing.B) {
		_, s := e.open(b, nil)
		for b.Loop() {
			callTool(b, s, "query", map[string]any{"sql": "SELECT count(*) FROM t"})
		}
	})
}
