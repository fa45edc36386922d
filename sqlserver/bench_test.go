package sqlserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// BenchmarkPostgresQuery measures a query tool call served in process
// (no transport), on the PostgreSQL of MCPKIT_TEST_POSTGRES_DSN: a point
// lookup with the same SQL every call (the connection's statement bound
// again, see pgSession), one whose SQL differs every call (parsed every
// time), and a result of 1,000 rows. The database's own time is in it;
// compare allocations and ratios within one run.
func BenchmarkPostgresQuery(b *testing.B) {
	e := postgresEnv(b)
	_, s := e.open(b, nil)
	request := func(b *testing.B, sql string) *jsonrpc.Message {
		return requestMessage(b, "tools/call", map[string]any{
			"name": "query", "arguments": map[string]any{"sql": sql, "max_rows": 1000},
		})
	}
	for _, bc := range []struct{ name, sql string }{
		{"point", "SELECT * FROM t WHERE id = 2"},
		{"point-varied", "SELECT * FROM t WHERE id = 2 + 0 * %d"},
		{"rows1000", "SELECT x, 'row ' || x AS name, x * 1.5 AS price FROM generate_series(1, 1000) AS x"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			msgs := []*jsonrpc.Message{request(b, bc.sql)}
			if strings.Contains(bc.sql, "%d") {
				msgs = msgs[:0]
				for i := range 64 {
					msgs = append(msgs, request(b, fmt.Sprintf(bc.sql, i)))
				}
			}
			n := &collector{}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				resp := serveOne(s, context.Background(), msgs[i%len(msgs)], n)
				if resp == nil || resp.Error != nil {
					b.Fatalf("response %+v", resp)
				}
			}
		})
	}
}
