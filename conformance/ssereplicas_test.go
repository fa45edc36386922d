package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/sse"
)

// TestSSEThroughNginx: the deprecated HTTP+SSE transport, which needs
// affinity, works through deploy/'s nginx (one replica serves it, the
// others are its backups): several sessions, each with several calls.
func TestSSEThroughNginx(t *testing.T) {
	url, _ := startReplicas(t)
	base := strings.TrimSuffix(url, "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		conn, err := sse.Dial(ctx, base+"/sse", nil)
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(protocol.Implementation{Name: "test", Version: "1"}, &client.Options{Era: client.EraLegacy, ProtocolVersion: protocol.Version2024_11_05})
		s, err := c.Connect(ctx, conn, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 3; j++ {
			res, err := s.CallTool(ctx, "test_simple_text", map[string]any{}, nil)
			if err != nil {
				t.Fatalf("session %d call %d: %v", i, j, err)
			}
			if tc, ok := res.Content[0].(*protocol.TextContent); !ok || !strings.Contains(tc.Text, "simple text") {
				t.Fatalf("result %+v", res.Content)
			}
		}
		s.Close()
	}
}
