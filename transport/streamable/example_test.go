package streamable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Mount the handler on a mux at /mcp and call a tool over HTTP.
func ExampleNewHandler() {
	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
	type greetArgs struct {
		Name string `json:"name"`
	}
	server.AddTool(srv, &protocol.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx context.Context, req *server.CallRequest, in greetArgs) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})

	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable.NewHandler(srv, nil))
	ts := httptest.NewServer(mux) // in production: http.ListenAndServe("127.0.0.1:8080", mux)
	defer ts.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Gopher"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(streamable.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(streamable.HeaderMethod, "tools/call")
	req.Header.Set(streamable.HeaderName, "greet")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()

	var out struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	fmt.Println(out.Result.Content[0].Text)
	// Output:
	// 200 OK application/json
	// Hello, Gopher!
}
