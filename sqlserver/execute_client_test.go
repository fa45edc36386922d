package sqlserver

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestExecuteThroughClient confirms writes the way clients do, in both
// eras: a modern client retries with the answer (MRTR), a legacy one
// answers the server's elicitation/create on its session. A confirmed
// write runs once; an answer made of the form's defaults runs nothing.
func TestExecuteThroughClient(t *testing.T) {
	e := sqliteEnv(t)
	_, core := e.open(t, func(o *Options) { o.AllowWrites = true })
	both := legacy.New(core, nil)
	t.Cleanup(func() { both.Close() })
	srv := httptest.NewServer(streamable.NewHandler(both, nil))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	id := 100
	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		for _, confirm := range []bool{true, false} {
			asked := 0
			c := client.New(protocol.Implementation{Name: "test", Version: "1"}, &client.Options{Era: era,
				Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					asked++
					content := client.FormDefaults(p.RequestedSchema)
					if confirm {
						content["confirm"] = true
					}
					return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: content}, nil
				}})
			s, err := c.ConnectURL(ctx, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			before := e.count(t, "t")
			id++
			res, err := s.CallTool(ctx, "execute", map[string]any{"sql": "INSERT INTO t (id, name) VALUES (?, 'x')", "params": []any{id}}, nil)
			s.Close()
			if err != nil {
				t.Fatalf("era %v: %v", era, err)
			}
			want := before
			if confirm {
				want++
			}
			if got := e.count(t, "t"); got != want || asked != 1 || res.IsError == confirm {
				t.Errorf("era %v, confirm %v: %d rows (want %d), asked %d times, result %+v", era, confirm, got, want, asked, res)
			}
			if !confirm && !strings.Contains(contentText(res), "Not executed") {
				t.Errorf("era %v: defaults answer: %s", era, contentText(res))
			}
		}
	}
}

func contentText(r *protocol.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*protocol.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
