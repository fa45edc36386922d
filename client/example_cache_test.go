package client_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/inmemory"
)

// Caching: a list result the server marks cacheable for a minute (ttlMs)
// is answered from the client's cache the second time; NoCache asks the
// server again.
func ExampleSession_ListTools() {
	s := server.New(protocol.Implementation{Name: "cached", Version: "1.0.0"}, &server.Options{
		ListCache: &protocol.CacheHints{TTLMs: 60_000, CacheScope: protocol.CachePublic},
	})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "", nil
	})
	var lists atomic.Int32 // tools/list requests the server saw
	counted := transport.Use(s, func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			if req.Message.Method == protocol.MethodToolsList {
				lists.Add(1)
			}
			return next(ctx, req)
		}
	})

	ctx := context.Background()
	sess, err := client.New(protocol.Implementation{Name: "example", Version: "1.0.0"}, nil).Connect(ctx, inmemory.New(counted, nil), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	for _, o := range []*client.ListOptions{nil, nil, {NoCache: true}} {
		res, err := sess.ListTools(ctx, o)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(len(res.Tools), "tool; requests so far:", lists.Load())
	}
	// Output:
	// 1 tool; requests so far: 1
	// 1 tool; requests so far: 1
	// 1 tool; requests so far: 2
}
