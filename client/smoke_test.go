package client_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

func TestSmoke(t *testing.T) {
	srv := everything.New(nil)
	both := legacy.New(srv, nil)
	ts := httptest.NewServer(streamable.NewHandler(both, nil))
	defer ts.Close()
	defer both.Close()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := &client.Options{
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "username": "ada", "email": "a@b"}}, nil
		},
	}
	for _, era := range []client.Era{client.EraAuto, client.EraLegacy} {
		o := *opts
		o.Era = era
		c := client.New(protocol.Implementation{Name: "smoke", Version: "1"}, &o)
		s, err := c.Connect(ctx, streamable.NewClient(ts.URL, nil), nil)
		if err != nil {
			t.Fatalf("%v connect: %v", era, err)
		}
		tools, err := s.ListTools(ctx, &client.ListOptions{All: true})
		if err != nil || len(tools.Tools) == 0 {
			t.Fatalf("%v list: %v", era, err)
		}
		res, err := s.CallTool(ctx, "echo", map[string]any{"text": "hi"}, nil)
		if err != nil || res.Content[0].(*protocol.TextContent).Text != "hi" {
			t.Fatalf("%v echo: %v %+v", era, err, res)
		}
		res, err = s.CallTool(ctx, "test_input_required_result_elicitation", nil, nil)
		if err != nil || !strings.Contains(res.Content[0].(*protocol.TextContent).Text, "Ada") {
			t.Fatalf("%v mrtr: %v %+v", era, err, res)
		}
		var n int
		_, err = s.CallTool(ctx, "test_tool_with_progress", nil, &client.CallOptions{OnProgress: func(p *protocol.ProgressParams) { n++ }})
		if err != nil || n != 3 {
			t.Fatalf("%v progress: %v %d", era, err, n)
		}
		t.Logf("%v: era %v version %s, %d tools", era, s.Era(), s.ProtocolVersion(), len(tools.Tools))
		s.Close()
	}

	// stdio, in process.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = stdio.Serve(ctx, both, inR, outW, nil); outW.Close() }()
	c := client.New(protocol.Implementation{Name: "smoke", Version: "1"}, opts)
	s, err := c.Connect(ctx, stdio.NewConn(outR, inW, nil), nil)
	if err != nil {
		t.Fatalf("stdio connect: %v", err)
	}
	res, err := s.CallTool(ctx, "test_input_required_result_elicitation", nil, nil)
	if err != nil || !strings.Contains(res.Content[0].(*protocol.TextContent).Text, "Ada") {
		t.Fatalf("stdio mrtr: %v %+v", err, res)
	}
	sub, err := s.Listen(ctx, protocol.SubscriptionFilter{ResourceSubscriptions: []string{"test://watched-resource"}})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	if _, err := s.CallTool(ctx, "test_trigger_resource_update", map[string]any{"uri": "test://watched-resource"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-sub.C():
		if n.URI != "test://watched-resource" {
			t.Fatalf("notification %+v", n)
		}
	case <-ctx.Done():
		t.Fatal("no update")
	}
	sub.Close()
	s.Close()
}
