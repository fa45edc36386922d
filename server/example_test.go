package server_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

const exampleMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

func call(s *server.Server, method, params string) string {
	msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`))
	if err != nil {
		return err.Error()
	}
	ctx := context.Background()
	res, err := s.Serve(ctx, &transport.Request{Message: msg})
	return string(transport.Respond(ctx, msg.ID, res, err).Append(nil))
}

func ExampleAddTool() {
	type args struct {
		City string `json:"city" description:"City name"`
	}
	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"}, &server.Options{OmitServerInfo: true})
	server.AddTool(s, &protocol.Tool{Name: "forecast", Description: "Tomorrow's weather"},
		func(ctx context.Context, req *server.CallRequest, in args) (string, error) {
			return "Sunny in " + in.City, nil
		})
	fmt.Println(call(s, "tools/call", `{"name":"forecast","arguments":{"city":"Lyon"},`+exampleMeta+`}`))
	fmt.Println(call(s, "tools/call", `{"name":"forecast","arguments":{},`+exampleMeta+`}`))
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Sunny in Lyon"}]}}
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Invalid arguments for tool forecast: (root): missing required property \"city\""}],"isError":true}}
}

func ExampleRequest_Elicit() {
	s := server.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, &server.Options{OmitServerInfo: true})
	server.AddTool(s, &protocol.Tool{Name: "greet", Description: "Greets the user by name"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.Elicit("name", &protocol.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			})
			if err != nil {
				return "", err // ErrInputRequired on the first round
			}
			return fmt.Sprintf("Hello, %v!", res.Content["name"]), nil
		})

	var first struct {
		Result struct {
			ResultType    string         `json:"resultType"`
			InputRequests map[string]any `json:"inputRequests"`
			RequestState  string         `json:"requestState"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(call(s, "tools/call", `{"name":"greet",`+exampleMeta+`}`)), &first)
	fmt.Println(first.Result.ResultType, first.Result.InputRequests["name"].(map[string]any)["method"])

	retry := `{"name":"greet","requestState":"` + first.Result.RequestState + `",` +
		`"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},` + exampleMeta + `}`
	fmt.Println(call(s, "tools/call", retry))
	// Output:
	// input_required elicitation/create
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}]}}
}

// clock is an extension: a method of its own, served in both eras, and a
// _meta key it adds to every tool result.
type clock struct{}

func (clock) ID() string { return "com.example/clock" }

func (clock) Register(s *server.Server) (protocol.Object, error) {
	s.HandleMethod(server.Method{
		Name: "clock/zone",
		Eras: server.EraModern | server.EraLegacy,
		Handler: func(ctx context.Context, r *server.Request) (protocol.Result, error) {
			return &struct {
				protocol.ResultHeader
				Zone string `json:"zone"`
			}{Zone: "UTC"}, nil
		},
	})
	s.UseToolCalls(func(next server.ToolCallFunc) server.ToolCallFunc {
		return func(ctx context.Context, call *server.CallRequest) (protocol.Result, error) {
			res, err := next(ctx, call)
			if tr, ok := res.(*protocol.CallToolResult); ok {
				tr.Meta = &protocol.ResultMeta{Extra: map[string]json.RawMessage{"com.example/clock": json.RawMessage(`"UTC"`)}}
			}
			return res, err
		}
	})
	return nil, nil
}

func ExampleServer_Install() {
	s := server.New(protocol.Implementation{Name: "timed", Version: "1.0.0"}, &server.Options{OmitServerInfo: true})
	server.AddTool(s, &protocol.Tool{Name: "now"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "12:00", nil
	})
	if err := s.Install(clock{}); err != nil {
		panic(err)
	}
	fmt.Println(call(s, "clock/zone", `{`+exampleMeta+`}`))
	fmt.Println(call(s, "tools/call", `{"name":"now",`+exampleMeta+`}`))
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","zone":"UTC"}}
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"com.example/clock":"UTC"},"content":[{"type":"text","text":"12:00"}]}}
}
