package inmemory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/inmemory"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

func newServer(t *testing.T, opts *server.Options) *server.Server {
	srv := server.New(protocol.Implementation{Name: "s", Version: "1"}, opts)
	t.Cleanup(func() { srv.Close() })
	server.AddTool(srv, &protocol.Tool{Name: "ask_model"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.CreateMessage("m", &protocol.CreateMessageParams{
				Messages:  []*protocol.SamplingMessage{{Role: protocol.RoleUser, Content: []protocol.Content{&protocol.TextContent{Text: "hi"}}}},
				MaxTokens: 10,
			})
			if err != nil {
				return "", err
			}
			return res.Model, nil
		})
	server.AddTool(srv, &protocol.Tool{Name: "block"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})
	return srv
}

func newClient(era client.Era) *client.Client {
	return client.New(protocol.Implementation{Name: "c", Version: "1"}, &client.Options{
		Era: era,
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{SamplingMessage: protocol.SamplingMessage{Role: protocol.RoleAssistant, Content: []protocol.Content{&protocol.TextContent{Text: "ok"}}}, Model: "m-1"}, nil
		},
	})
}

// TestEras connects to modern-only, dual-era and legacy-only servers with
// an undecided client, and calls a tool that samples the client's model.
func TestEras(t *testing.T) {
	tests := []struct {
		name    string
		opts    *server.Options
		era     client.Era
		version string
	}{
		{"dual-era", nil, client.EraModern, protocol.LatestVersion},
		{"modern only", &server.Options{Legacy: legacy.Options{Disabled: true}}, client.EraModern, protocol.LatestVersion},
		{"legacy only", &server.Options{Legacy: legacy.Options{ModernDisabled: true}}, client.EraLegacy, protocol.LegacyVersions[0]},
		{"2025-03-26 only", &server.Options{Legacy: legacy.Options{ModernDisabled: true, Versions: []string{protocol.Version2025_03_26}}}, client.EraLegacy, protocol.Version2025_03_26},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leakcheck.Check(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sess, err := newClient(client.EraAuto).Connect(ctx, inmemory.New(newServer(t, tt.opts), nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if sess.Transport() != client.TransportInMemory {
				t.Errorf("transport %q", sess.Transport())
			}
			if sess.Era() != tt.era || sess.ProtocolVersion() != tt.version {
				t.Errorf("era %v %s, want %v %s", sess.Era(), sess.ProtocolVersion(), tt.era, tt.version)
			}
			res, err := sess.CallTool(ctx, "ask_model", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*protocol.TextContent).Text; got != "m-1" {
				t.Errorf("result %q", got)
			}
		})
	}
}

// TestCloseCancels: Close ends a request in flight once the grace period is
// over and returns after the server side has stopped.
func TestCloseCancels(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	conn := inmemory.New(newServer(t, nil), &inmemory.Options{Server: &stdio.Options{ShutdownGrace: time.Millisecond}})
	sess, err := newClient(client.EraLegacy).Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, "block", nil, nil)
		done <- err
	}()
	sess.Close()
	if err := <-done; err == nil {
		t.Fatal("a call cut short by Close succeeded")
	}
	select {
	case <-conn.Done():
	default:
		t.Error("the connection is still open after Close")
	}
	if err := conn.Close(); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("second Close: %v", err)
	}
}
