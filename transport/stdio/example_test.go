package stdio_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// ExampleServe serves one tools/call read from a string and prints the
// response line. A real server passes os.Stdin and os.Stdout.
func ExampleServe() {
	type greetArgs struct {
		Name string `json:"name"`
	}
	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, &server.Options{OmitServerInfo: true})
	server.AddTool(srv, &protocol.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx context.Context, req *server.CallRequest, in greetArgs) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})

	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"greet","arguments":{"name":"Ada"}}}` + "\n")
	var out bytes.Buffer
	if err := stdio.Serve(context.Background(), srv, in, &out, nil); err != nil {
		fmt.Println("serve:", err)
	}
	fmt.Print(out.String())
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}]}}
}
