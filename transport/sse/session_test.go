package sse_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/sse"
)

// TestClientSession runs a 2024-11-05 session through package client over
// Dial and the Handler: tools, resources, prompts and a sampling request
// of the server answered by the client.
func TestClientSession(t *testing.T) {
	sse.CheckLeaks(t)
	srv, _ := sse.TestServer(t)
	hs := sse.ServeHTTP(t, sse.NewHandler(srv, nil))
	ctx, cancel := context.WithTimeout(context.Background(), sse.Wait)
	defer cancel()

	conn, err := sse.Dial(ctx, hs.URL+"/sse", &sse.ClientOptions{HTTPClient: hs.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(conn.Endpoint(), hs.URL+"/sse?sessionId=") {
		t.Errorf("endpoint %s", conn.Endpoint())
	}
	sampled := make(chan *protocol.CreateMessageParams, 1)
	c := client.New(protocol.Implementation{Name: "sse-client", Version: "1.0.0"}, &client.Options{
		Era: client.EraLegacy, ProtocolVersion: sse.TestVersion,
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			sampled <- p
			return &protocol.CreateMessageResult{SamplingMessage: protocol.SamplingMessage{Role: protocol.RoleAssistant, Content: []protocol.Content{&protocol.TextContent{Text: "hi"}}}, Model: "test-model"}, nil
		},
	})
	sess, err := c.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if sess.Era() != client.EraLegacy || sess.ProtocolVersion() != sse.TestVersion || sess.ServerInfo().Name != "sse-test" {
		t.Fatalf("session %v %s %+v", sess.Era(), sess.ProtocolVersion(), sess.ServerInfo())
	}

	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"echo", "sample", "slow"}) {
		t.Errorf("tools %v", names)
	}
	res, err := sess.CallTool(ctx, "echo", map[string]any{"text": "over SSE"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res.Content); got != "echo: over SSE" || res.IsError {
		t.Errorf("echo: %q (isError %v)", got, res.IsError)
	}

	resources, err := sess.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resources.Resources) != 1 || resources.Resources[0].URI != "test://hello" {
		t.Errorf("resources %+v", resources.Resources)
	}
	read, err := sess.ReadResource(ctx, "test://hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Contents) != 1 || read.Contents[0].Text != "Hello, world" {
		t.Errorf("read %+v", read.Contents)
	}

	prompts, err := sess.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "greet" {
		t.Errorf("prompts %+v", prompts.Prompts)
	}
	prompt, err := sess.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := prompt.Messages[0].Content.(*protocol.TextContent); !ok || tc.Text != "Greet Ada" {
		t.Errorf("prompt %#v", prompt.Messages[0].Content)
	}

	// The tool's sampling request comes on the stream as a request of the
	// server; the client's answer is POSTed back.
	res, err = sess.CallTool(ctx, "sample", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res.Content); got != "model said: hi (test-model)" {
		t.Errorf("sample: %q", got)
	}
	select {
	case p := <-sampled:
		if len(p.Messages) != 1 || p.MaxTokens != 10 {
			t.Errorf("sampling params %+v", p)
		}
	default:
		t.Error("the client's sampling handler was not called")
	}
	if err := sess.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func text(content []protocol.Content) string {
	var b strings.Builder
	for _, c := range content {
		if tc, ok := c.(*protocol.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
