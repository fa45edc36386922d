package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// Middleware sees every request of both eras and what the server answered;
// the wrapped handler keeps everything else the server offers (legacy
// sessions, Mcp-Param-* header parameters).
func ExampleUse() {
	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
	defer srv.Close()
	var mu sync.Mutex
	var seen []string // requests run concurrently: sorted below
	logged := transport.Use(srv, func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			era := map[transport.Kind]string{transport.KindModern: "modern", transport.KindInitialize: "handshake", transport.KindSession: "legacy"}[req.Kind]
			res, err := next(ctx, req)
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s %s: error %v", era, req.Message.Method, err != nil))
			mu.Unlock()
			return res, err
		}
	})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"ping"}
{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
`)
	var out bytes.Buffer
	if err := stdio.Serve(context.Background(), logged, in, &out, nil); err != nil {
		fmt.Println(err)
	}
	sort.Strings(seen)
	fmt.Println(strings.Join(seen, "\n"))
	// Output:
	// handshake initialize: error false
	// legacy notifications/initialized: error false
	// legacy ping: error false
	// modern server/discover: error false
}
