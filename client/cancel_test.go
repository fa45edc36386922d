package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// blocker is a tool that runs until its context ends and says when it
// started and when the context ended.
type blocker struct {
	started   chan struct{}
	cancelled chan struct{}
}

func addBlocker(core *server.Server) *blocker {
	b := &blocker{started: make(chan struct{}, 16), cancelled: make(chan struct{}, 16)}
	core.AddToolHandler(&protocol.Tool{Name: "block", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
		b.started <- struct{}{}
		select {
		case <-ctx.Done():
			b.cancelled <- struct{}{}
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return server.TextResult("not cancelled"), nil
		}
	})
	return b
}

// syncBuffer collects what the client writes to a stdio server.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveStdioTap is serveStdio with a copy of the client's writes.
func serveStdioTap(t *testing.T, h transport.Handler) (*stdio.Conn, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tap := &syncBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stdio.Serve(ctx, h, io.TeeReader(inR, tap), outW, nil)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		<-done
	})
	return stdio.NewConn(outR, inW, nil), tap
}

func TestCancelReachesServer(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 30*time.Second)
	core, both := everythingServers(t, nil, nil)
	b := addBlocker(core)
	hs := serveHTTP(t, both)
	var taps []*syncBuffer
	conns := []struct {
		name string
		dial func() transport.ClientConn
	}{
		{"http", func() transport.ClientConn { return hs.conn() }},
		{"stdio", func() transport.ClientConn {
			c, tap := serveStdioTap(t, both)
			taps = append(taps, tap)
			return c
		}},
	}
	for _, cn := range conns {
		for _, era := range []client.Era{client.EraAuto, client.EraLegacy} {
			t.Run(cn.name+"/"+era.String(), func(t *testing.T) {
				s, err := newClient(&client.Options{Era: era}).Connect(ctx, cn.dial(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()

				// The server's handler sees its context end.
				cctx, cancel := context.WithCancel(ctx)
				errc := make(chan error, 1)
				go func() {
					_, err := s.CallTool(cctx, "block", nil, nil)
					errc <- err
				}()
				select {
				case <-b.started:
				case <-time.After(5 * time.Second):
					t.Fatal("the tool did not start")
				}
				cancel()
				start := time.Now()
				select {
				case err := <-errc:
					if !errors.Is(err, context.Canceled) {
						t.Errorf("CallTool = %v, want context.Canceled", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("CallTool did not return after its context was cancelled")
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("CallTool returned %v after the cancellation", d)
				}
				select {
				case <-b.cancelled:
				case <-time.After(5 * time.Second):
					t.Fatal("the server's handler context was not cancelled")
				}
				if cn.name == "stdio" {
					if w := taps[len(taps)-1].String(); !bytes.Contains([]byte(w), []byte(`"method":"notifications/cancelled"`)) {
						t.Errorf("no notifications/cancelled written:\n%s", w)
					}
				}

				// test_sleep of a minute: the call returns with ctx's error.
				dctx, dcancel := context.WithTimeout(ctx, 150*time.Millisecond)
				defer dcancel()
				start = time.Now()
				_, err = s.CallTool(dctx, "test_sleep", map[string]any{"ms": 60000}, nil)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("test_sleep = %v, want context.DeadlineExceeded", err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("test_sleep returned after %v", d)
				}
				// The session is still usable.
				res, err := s.CallTool(ctx, "echo", map[string]any{"text": "after"}, nil)
				if err != nil || textOf(t, res) != "after" {
					t.Errorf("echo after a cancellation: %v", err)
				}
			})
		}
	}
}
