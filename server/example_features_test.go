package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/inmemory"
)

// connect returns a session of a client (with opts) to s, in the same
// process.
func connect(s *server.Server, opts *client.Options) *client.Session {
	sess, err := client.New(protocol.Implementation{Name: "example", Version: "1.0.0"}, opts).
		Connect(context.Background(), inmemory.New(s, nil), nil)
	if err != nil {
		panic(err)
	}
	return sess
}

// A resource, and a resource template whose variables the handler gets.
func ExampleServer_AddResource() {
	s := server.New(protocol.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	s.AddResource(&protocol.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain"},
		server.TextResource("text/plain", "Read me first."))
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "docs://pages/{name}", Name: "page"},
		func(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{
				{URI: req.URI, MIMEType: "text/plain", Text: "The page " + req.Vars["name"] + "."},
			}}, nil
		})

	sess := connect(s, nil)
	defer sess.Close()
	ctx := context.Background()
	for _, uri := range []string{"docs://readme", "docs://pages/install"} {
		res, err := sess.ReadResource(ctx, uri, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Contents[0].Text)
	}
	// Output:
	// Read me first.
	// The page install.
}

// A prompt with an argument, and the completion of that argument.
func ExampleServer_AddPrompt() {
	s := server.New(protocol.Implementation{Name: "reviewer", Version: "1.0.0"}, nil)
	s.AddPrompt(&protocol.Prompt{Name: "review", Arguments: []*protocol.PromptArgument{{Name: "language", Required: true}}},
		func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{{
				Role:    protocol.RoleUser,
				Content: &protocol.TextContent{Text: "Review this " + req.Arguments["language"] + " code."},
			}}}, nil
		})
	s.AddCompletion(protocol.RefPrompt, "review", server.CompleteFrom("go", "golang", "python"))

	sess := connect(s, nil)
	defer sess.Close()
	ctx := context.Background()
	res, err := sess.GetPrompt(ctx, "review", map[string]string{"language": "Go"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Messages[0].Content.(*protocol.TextContent).Text)
	c, err := sess.Complete(ctx, protocol.CompleteReference{Type: protocol.RefPrompt, Name: "review"},
		protocol.CompleteArgument{Name: "language", Value: "go"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Values)
	// Output:
	// Review this Go code.
	// [go golang]
}

// A tool that asks the client's model (sampling): an MRTR round in the
// modern era, a sampling/createMessage request in a legacy session. The
// client's Sampling handler answers either way.
func ExampleRequest_CreateMessage() {
	s := server.New(protocol.Implementation{Name: "summarizer", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "summarize"},
		func(ctx context.Context, req *server.CallRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			res, err := req.CreateMessage("summary", &protocol.CreateMessageParams{
				Messages:  []*protocol.SamplingMessage{{Role: protocol.RoleUser, Content: []protocol.Content{&protocol.TextContent{Text: "Summarize: " + in.Text}}}},
				MaxTokens: 100,
			})
			if err != nil {
				return "", err
			}
			return "Summary: " + res.Content[0].(*protocol.TextContent).Text, nil
		})

	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		sess := connect(s, &client.Options{
			Era: era,
			Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
				prompt := p.Messages[0].Content[0].(*protocol.TextContent).Text
				return &protocol.CreateMessageResult{Model: "tiny",
					SamplingMessage: protocol.SamplingMessage{Role: protocol.RoleAssistant,
						Content: []protocol.Content{&protocol.TextContent{Text: strings.ToUpper(prompt[len("Summarize: "):])}}}}, nil
			},
		})
		res, err := sess.CallTool(context.Background(), "summarize", map[string]any{"text": "a long story"}, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(sess.Era(), res.Content[0].(*protocol.TextContent).Text)
		sess.Close()
	}
	// Output:
	// modern Summary: A LONG STORY
	// legacy Summary: A LONG STORY
}

// Subscriptions: a client listens for updates of a resource, which the
// server announces with NotifyResourceUpdated.
func ExampleServer_NotifyResourceUpdated() {
	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	s.AddResource(&protocol.Resource{URI: "weather://today", Name: "today"}, server.TextResource("text/plain", "Sunny"))

	sess := connect(s, nil)
	defer sess.Close()
	sub, err := sess.Listen(context.Background(), protocol.SubscriptionFilter{ResourceSubscriptions: []string{"weather://today"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()
	s.NotifyResourceUpdated("weather://today")
	n := <-sub.C()
	fmt.Println(n.Method, n.URI)
	// Output:
	// notifications/resources/updated weather://today
}

// A tool's log records reach the client that asked for them (a log level
// on the request, or logging/setLevel in a legacy session), through
// log/slog.
func ExampleNewLogHandler() {
	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "forecast"},
		func(ctx context.Context, req *server.CallRequest, in struct {
			City string `json:"city"`
		}) (string, error) {
			log := slog.New(server.NewLogHandler(req.Request, "forecast"))
			log.Debug("cache miss") // below the level the client asked for
			log.Info("fetching", "city", in.City)
			return "Sunny", nil
		})

	sess := connect(s, &client.Options{
		LogLevel: protocol.LevelInfo,
		OnLog: func(p *protocol.LoggingMessageParams) {
			fmt.Println(p.Level, p.Logger, p.Data)
		},
	})
	defer sess.Close()
	if _, err := sess.CallTool(context.Background(), "forecast", map[string]any{"city": "Lyon"}, nil); err != nil {
		fmt.Println(err)
	}
	// Output:
	// info forecast map[city:Lyon msg:fetching]
}
