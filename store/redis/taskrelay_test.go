package redis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/store/redis"
	"github.com/mcpkit/mcpkit/store/redis/redistest"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// taskReplica starts a server with the Tasks extension that shares its
// feed and task store with the other replicas in the Redis at url, and
// returns its endpoint. Its "block" tool sends the replica's name on
// stopped when its context is cancelled; its "ask" tool asks for a name.
func taskReplica(t *testing.T, url, name string, started, stopped chan<- string) string {
	t.Helper()
	st, err := redis.Open(context.Background(), url, &redis.Options{Prefix: "relay:"})
	if err != nil {
		t.Fatal(err)
	}
	ts := st.Tasks(nil)
	srv := server.New(protocol.Implementation{Name: "relay", Version: "1"}, &server.Options{Feed: st.Feed()})
	x := tasks.New(&tasks.Options{Store: ts})
	server.AddTool(srv, &protocol.Tool{Name: "block"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		tasks.Promote(ctx)
		started <- name
		select {
		case <-ctx.Done():
			stopped <- name
			return "", ctx.Err()
		case <-time.After(30 * time.Second):
			return "not cancelled", nil
		}
	})
	x.SetTool("block", tasks.Policy{Mode: tasks.Must})
	server.AddTool(srv, &protocol.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		tasks.Promote(ctx)
		res, err := req.Elicit("name", &protocol.ElicitParams{Message: "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s heard %v", name, res.Content["name"]), nil
	})
	x.SetTool("ask", tasks.Policy{Mode: tasks.Must})
	if err := srv.Install(x); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable.NewHandler(srv, &streamable.Options{Events: st.Events()}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = hs.Serve(ln) }()
	t.Cleanup(func() {
		x.Close()
		srv.Close()
		_ = hs.Close()
		<-done
		ts.Close()
		st.Close()
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

func relayClient(t *testing.T, ctx context.Context, url string) *mcpclient.Session {
	t.Helper()
	// Declares elicitation; the tests answer with tasks/update themselves.
	o := &mcpclient.Options{Elicitation: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return nil, errors.New("not asked synchronously")
	}}
	tasks.Use(o, &tasks.ClientOptions{MinPoll: 20 * time.Millisecond, MaxPoll: 200 * time.Millisecond})
	s, err := mcpclient.New(protocol.Implementation{Name: "relay-test", Version: "1"}, o).ConnectURL(ctx, url, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func startRelayTask(t *testing.T, ctx context.Context, s *mcpclient.Session, tool string) *tasks.Task {
	t.Helper()
	_, err := s.CallTool(tasks.Detach(ctx), tool, map[string]any{}, nil)
	var started *tasks.StartedError
	if !errors.As(err, &started) {
		t.Fatalf("%s did not become a task: %v", tool, err)
	}
	return started.Task
}

// pollTask polls the task on s until cond holds, for up to 10 s.
func pollTask(t *testing.T, ctx context.Context, s *mcpclient.Session, id string, cond func(*tasks.Task) bool) *tasks.Task {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tk, err := tasks.Get(ctx, s, id)
		if err != nil {
			t.Fatalf("tasks/get: %v", err)
		}
		if cond(tk) {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: last %+v", id, tk)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTaskCancelOnAnotherReplica: tasks/cancel on replica B stops the
// handler that runs on replica A, through the shared feed.
func TestTaskCancelOnAnotherReplica(t *testing.T) {
	p := redistest.Redis(t)
	started, stopped := make(chan string, 4), make(chan string, 4)
	a := taskReplica(t, p.URL(), "A", started, stopped)
	b := taskReplica(t, p.URL(), "B", started, stopped)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sa, sb := relayClient(t, ctx, a), relayClient(t, ctx, b)
	tk := startRelayTask(t, ctx, sa, "block")
	if who := <-started; who != "A" {
		t.Fatalf("the task runs on %s, want A", who)
	}
	if err := tasks.Cancel(ctx, sb, tk.TaskID); err != nil {
		t.Fatalf("tasks/cancel on B: %v", err)
	}
	select {
	case who := <-stopped:
		if who != "A" {
			t.Errorf("stopped on %s, want A", who)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler on A was not cancelled by tasks/cancel on B")
	}
	pollTask(t, ctx, sa, tk.TaskID, func(tk *tasks.Task) bool { return tk.Status == tasks.Cancelled })
}

// TestTaskUpdateOnAnotherReplica: tasks/update on replica B resumes, with
// its inputResponses, the task waiting for input on replica A.
func TestTaskUpdateOnAnotherReplica(t *testing.T) {
	p := redistest.Redis(t)
	started, stopped := make(chan string, 4), make(chan string, 4)
	a := taskReplica(t, p.URL(), "A", started, stopped)
	b := taskReplica(t, p.URL(), "B", started, stopped)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sa, sb := relayClient(t, ctx, a), relayClient(t, ctx, b)
	tk := startRelayTask(t, ctx, sa, "ask")
	tk = pollTask(t, ctx, sb, tk.TaskID, func(tk *tasks.Task) bool { return tk.Status == tasks.InputRequired })
	if _, ok := tk.InputRequests["name"]; !ok {
		t.Fatalf("inputRequests %v", tk.InputRequests)
	}
	err := sb.Call(ctx, tasks.MethodUpdate, map[string]any{"taskId": tk.TaskID,
		"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}, nil, nil)
	if err != nil {
		t.Fatalf("tasks/update on B: %v", err)
	}
	// Answered once A recorded it: a tasks/get right after it no longer
	// asks for the name.
	if got, err := tasks.Get(ctx, sb, tk.TaskID); err != nil {
		t.Fatalf("tasks/get: %v", err)
	} else if _, asks := got.InputRequests["name"]; asks {
		t.Fatalf("tasks/get right after tasks/update still asks for the name: %+v", got)
	}
	tk = pollTask(t, ctx, sb, tk.TaskID, func(tk *tasks.Task) bool { return tk.Status.Terminal() })
	if tk.Status != tasks.Completed || !strings.Contains(string(tk.Result), "A heard Ada") {
		t.Fatalf("task %+v, result %s", tk, tk.Result)
	}
}
