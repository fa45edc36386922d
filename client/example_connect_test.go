package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

func ExampleClient_ConnectURL() {
	// A server to talk to.
	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	server.AddTool(srv, &protocol.Tool{Name: "shout", Description: "Repeats the text, louder"},
		func(ctx context.Context, req *server.CallRequest, in args) (string, error) {
			return in.Text + "!", nil
		})
	ts := httptest.NewServer(streamable.NewHandler(srv, nil))
	defer ts.Close()

	ctx := context.Background()
	c := client.New(protocol.Implementation{Name: "example", Version: "1.0.0"}, nil)
	s, err := c.ConnectURL(ctx, ts.URL, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.Era(), s.ProtocolVersion(), s.ServerInfo().Name)
	res, err := s.CallTool(ctx, "shout", map[string]any{"text": "hello"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*protocol.TextContent).Text)
	// Output:
	// modern 2026-07-28 demo
	// hello!
}
