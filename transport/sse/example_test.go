package sse_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/sse"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Serve the deprecated HTTP+SSE transport at /sse beside the Streamable
// HTTP endpoint, and call a tool over it as a 2024-11-05 client.
func ExampleNewHandler() {
	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
	defer srv.Close()
	type greetArgs struct {
		Name string `json:"name"`
	}
	server.AddTool(srv, &protocol.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx context.Context, req *server.CallRequest, in greetArgs) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})

	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable.NewHandler(srv, nil))
	mux.Handle("/sse", sse.NewHandler(srv, nil))
	ts := httptest.NewServer(mux) // in production: http.ListenAndServe("127.0.0.1:8080", mux)
	defer ts.Close()

	ctx := context.Background()
	conn, err := sse.Dial(ctx, ts.URL+"/sse", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := client.New(protocol.Implementation{Name: "agent", Version: "1.0.0"}, &client.Options{
		Era: client.EraLegacy, ProtocolVersion: protocol.Version2024_11_05,
	})
	s, err := c.Connect(ctx, conn, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "greet", map[string]any{"name": "Gopher"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.ProtocolVersion())
	fmt.Println(res.Content[0].(*protocol.TextContent).Text)
	// Output:
	// 2024-11-05
	// Hello, Gopher!
}
