package legacy_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// A tool written once, MRTR-style, asks a legacy client with a real
// elicitation/create request.
func ExampleNew() {
	core := server.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	server.AddTool(core, &protocol.Tool{Name: "greet", Description: "Greets the user"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.Elicit("name", &protocol.ElicitParams{Message: "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Hello, %v!", res.Content["name"]), nil
		})
	both := legacy.New(core, nil)
	defer both.Close()

	sess, resp := both.Initialize(context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: "initialize",
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}`)})
	var init struct{ ProtocolVersion string }
	_ = json.Unmarshal(resp.Result, &init)
	fmt.Println("negotiated", init.ProtocolVersion)

	// The client's side of the conversation: answer each request the
	// session sends.
	toClient := make(chan []byte, 1)
	n := notifierFunc(func(b []byte) error { toClient <- b; return nil })
	go func() {
		req, _ := jsonrpc.Decode(<-toClient)
		fmt.Println("server asks:", req.Method)
		sess.HandleResponse(context.Background(), &jsonrpc.Message{ID: req.ID,
			Result: json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)})
	}()
	call, _ := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet"}}`))
	fmt.Println(string(sess.Handle(context.Background(), call, n).Result))
	// Output:
	// negotiated 2025-11-25
	// server asks: elicitation/create
	// {"content":[{"type":"text","text":"Hello, Ada!"}]}
}

type notifierFunc func([]byte) error

func (f notifierFunc) Notify(b []byte) error { return f(b) }
