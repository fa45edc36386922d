package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/inmemory"
)

// clockResult is the result of the example extension's clock/now.
type clockResult struct {
	protocol.ResultHeader
	Time  string `json:"time"`
	Trace string `json:"trace,omitempty"`
}

// clockServer is an mcpkit server with a tool reporting progress and a
// small extension, com.example/clock, whose method clock/now a middleware
// answers.
func clockServer() (*server.Server, transport.Handler) {
	srv := server.New(protocol.Implementation{Name: "clock", Version: "1.0.0"}, nil)
	srv.AddExtension("com.example/clock", nil)
	server.AddTool(srv, &protocol.Tool{Name: "tick"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		_ = req.Progress(1, 1, "")
		return "tock", nil
	})
	h := transport.Use(srv, func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			if req.Message.Method != "clock/now" {
				return next(ctx, req)
			}
			var p struct {
				Zone string               `json:"zone"`
				Meta protocol.RequestMeta `json:"_meta"`
			}
			if err := jsonrpc.Unmarshal(req.Message.Params, &p); err != nil {
				return nil, protocol.InvalidParams(err.Error())
			}
			return &clockResult{Time: "12:00 " + p.Zone, Trace: p.Meta.Traceparent}, nil
		}
	})
	return srv, h
}

// Calling an extension's method by name, with a trace context in _meta.
func ExampleSession_Call() {
	srv, h := clockServer()
	defer srv.Close()
	ctx := context.Background()
	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		c := client.New(protocol.Implementation{Name: "agent", Version: "1.0.0"}, &client.Options{Era: era})
		s, err := c.Connect(ctx, inmemory.New(h, nil), nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		var now struct {
			Time  string `json:"time"`
			Trace string `json:"trace"`
		}
		err = s.Call(ctx, "clock/now", map[string]string{"zone": "UTC"}, &now, &client.CallOptions{
			Meta: map[string]json.RawMessage{
				"traceparent": json.RawMessage(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`),
			},
		})
		if err != nil {
			fmt.Println(err)
		}
		fmt.Println(s.Era(), now.Time, now.Trace)
		s.Close()
	}
	// Output:
	// modern 12:00 UTC 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
	// legacy 12:00 UTC 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
}

// A middleware that adds a trace context to every call and sees every
// message the server sends outside a response.
func ExampleMiddleware() {
	srv, h := clockServer()
	defer srv.Close()
	var mu sync.Mutex
	var seen []string
	tracing := client.Middleware{
		Call: func(next client.CallFunc) client.CallFunc {
			return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
				c.Meta["traceparent"] = json.RawMessage(`"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`)
				res, err := next(ctx, c)
				mu.Lock()
				seen = append(seen, fmt.Sprintf("call %s: error %v", c.Method, err != nil))
				mu.Unlock()
				return res, err
			}
		},
		Incoming: func(next client.IncomingFunc) client.IncomingFunc {
			return func(ctx context.Context, m *client.Incoming) (json.RawMessage, error) {
				mu.Lock()
				seen = append(seen, "incoming "+m.Method)
				mu.Unlock()
				return next(ctx, m)
			}
		},
	}
	ctx := context.Background()
	c := client.New(protocol.Implementation{Name: "agent", Version: "1.0.0"}, &client.Options{Middleware: []client.Middleware{tracing}})
	s, err := c.Connect(ctx, inmemory.New(h, nil), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	var now struct {
		Trace string `json:"trace"`
	}
	if err := s.Call(ctx, "clock/now", nil, &now, nil); err != nil {
		fmt.Println(err)
	}
	fmt.Println(now.Trace)
	if _, err := s.CallTool(ctx, "tick", nil, &client.CallOptions{OnProgress: func(*protocol.ProgressParams) {}}); err != nil {
		fmt.Println(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range seen {
		fmt.Println(l)
	}
	// Output:
	// 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
	// call clock/now: error false
	// incoming notifications/progress
	// call tools/call: error false
}
