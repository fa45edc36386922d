package inmemory_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/inmemory"
)

// A server under test and a client in the same process, in both eras: the
// tool asks the user for a name (an MRTR round in the modern era, an
// elicitation/create request of the server in a legacy session) and the
// client's handler answers.
func Example() {
	srv := server.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	server.AddTool(srv, &protocol.Tool{Name: "greet", Description: "Greets the user by name"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.Elicit("name", &protocol.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Hello, %v!", res.Content["name"]), nil
		})

	ctx := context.Background()
	for _, era := range []client.Era{client.EraAuto, client.EraLegacy} {
		c := client.New(protocol.Implementation{Name: "test", Version: "1.0.0"}, &client.Options{
			Era: era,
			Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
			},
		})
		conn := inmemory.New(srv, nil)
		sess, err := c.Connect(ctx, conn, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := sess.CallTool(ctx, "greet", nil, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(sess.Era(), sess.ProtocolVersion(), res.Content[0].(*protocol.TextContent).Text)
		sess.Close()
	}
	// Output:
	// modern 2026-07-28 Hello, Ada!
	// legacy 2025-11-25 Hello, Ada!
}
