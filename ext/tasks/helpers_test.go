package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/inmemory"
)

var info = protocol.Implementation{Name: "tasks-test", Version: "1"}

// gate is a tool handler's rendezvous with its test: the handler says it
// started, then waits to be released or cancelled.
type gate struct {
	started  chan struct{}
	release  chan struct{}
	stopped  chan error // the handler's context error when it ended
	startOne sync.Once
}

func newGate() *gate {
	return &gate{started: make(chan struct{}), release: make(chan struct{}), stopped: make(chan error, 16)}
}

// testServer is a server with the extension and its tools:
//
//	echo      never a task
//	slow      may: a task after After, or at once with Promote
//	held      must: promotes itself, waits for the gate
//	ask       may: promotes itself, asks the user's name, greets
//	broken    may: promotes itself, fails with a JSON-RPC error
//	toolerror may: promotes itself, fails with a tool error
func testServer(t testing.TB, opts *tasks.Options, g *gate) (*server.Server, *tasks.Extension) {
	t.Helper()
	s := server.New(info, &server.Options{OmitServerInfo: true})
	x := tasks.New(opts)
	type textArgs struct {
		Text string `json:"text"`
	}
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallRequest, in textArgs) (string, error) {
		return in.Text, nil
	})
	type slowArgs struct {
		Ms      int  `json:"ms"`
		Promote bool `json:"promote,omitempty"`
	}
	server.AddTool(s, &protocol.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallRequest, in slowArgs) (string, error) {
		if in.Promote {
			tasks.Promote(ctx)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
		}
		return fmt.Sprintf("slept %d ms", in.Ms), nil
	})
	x.SetTool("slow", tasks.Policy{Mode: tasks.May, After: 50 * time.Millisecond})
	server.AddTool(s, &protocol.Tool{Name: "held"}, func(ctx context.Context, req *server.CallRequest, in textArgs) (string, error) {
		tasks.Promote(ctx)
		tasks.SetStatus(ctx, "waiting for the gate")
		if g == nil {
			return "", errors.New("no gate")
		}
		g.startOne.Do(func() { close(g.started) })
		select {
		case <-ctx.Done():
			g.stopped <- ctx.Err()
			return "", ctx.Err()
		case <-g.release:
			g.stopped <- nil
			return "released " + in.Text, nil
		}
	})
	x.SetTool("held", tasks.Policy{Mode: tasks.Must})
	server.AddTool(s, &protocol.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		tasks.Promote(ctx)
		res, err := req.Elicit("name", &protocol.ElicitParams{Message: "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Hello, %v!", res.Content["name"]), nil
	})
	x.SetTool("ask", tasks.Policy{Mode: tasks.May})
	server.AddTool(s, &protocol.Tool{Name: "broken"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		tasks.Promote(ctx)
		return "", jsonrpc.NewError(-32000, "backend down", nil)
	})
	x.SetTool("broken", tasks.Policy{Mode: tasks.May})
	server.AddTool(s, &protocol.Tool{Name: "toolerror"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		tasks.Promote(ctx)
		return "", errors.New("no such file")
	})
	x.SetTool("toolerror", tasks.Policy{Mode: tasks.May})
	if err := s.Install(x); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		x.Close()
		s.Close()
	})
	return s, x
}

// as serves h with every request's principal set to p.
func as(h transport.Handler, p string) transport.Handler {
	return transport.Use(h, func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			return next(server.WithPrincipal(ctx, p), req)
		}
	})
}

// connect returns a session to h; withTasks declares the extension and
// resolves tasks with its middleware.
func connect(t testing.TB, h transport.Handler, withTasks bool, o *client.Options) *client.Session {
	t.Helper()
	if o == nil {
		o = &client.Options{}
	}
	if withTasks {
		tasks.Use(o, &tasks.ClientOptions{MinPoll: 10 * time.Millisecond, MaxPoll: 50 * time.Millisecond})
	}
	s, err := client.New(info, o).Connect(context.Background(), inmemory.New(h, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rpc serves one modern request on s directly, as principal, declaring the
// extension or not, and returns the raw result or the error.
func rpc(ctx context.Context, s *server.Server, principal string, declare bool, method string, params map[string]any) (json.RawMessage, error) {
	caps := map[string]any{}
	if declare {
		caps["extensions"] = map[string]any{tasks.ID: map[string]any{}}
		caps["elicitation"] = map[string]any{}
	}
	p := map[string]any{"_meta": map[string]any{protocol.MetaProtocolVersion: "2026-07-28", protocol.MetaClientCapabilities: caps}}
	for k, v := range params {
		p[k] = v
	}
	b, _ := json.Marshal(p)
	msg := &jsonrpc.Message{ID: jsonrpc.StringID("t"), Method: method, Params: b}
	res, err := s.Serve(server.WithPrincipal(ctx, principal), &transport.Request{Message: msg, Kind: transport.KindModern})
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func decodeTask(t testing.TB, raw json.RawMessage) *tasks.Task {
	t.Helper()
	var tk tasks.Task
	if err := json.Unmarshal(raw, &tk); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return &tk
}

// waitStatus polls tasks/get until the task reaches want (or any terminal
// status).
func waitStatus(t testing.TB, ctx context.Context, s *server.Server, principal, id string, want tasks.Status) *tasks.Task {
	t.Helper()
	for {
		raw, err := rpc(ctx, s, principal, true, tasks.MethodGet, map[string]any{"taskId": id})
		if err != nil {
			t.Fatalf("tasks/get: %v", err)
		}
		tk := decodeTask(t, raw)
		if tk.Status == want || tk.Status.Terminal() {
			return tk
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s still %s, want %s", id, tk.Status, want)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// get reads the task once.
func get(t testing.TB, ctx context.Context, s *server.Server, principal, id string) *tasks.Task {
	t.Helper()
	raw, err := rpc(ctx, s, principal, true, tasks.MethodGet, map[string]any{"taskId": id})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	return decodeTask(t, raw)
}

func code(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
