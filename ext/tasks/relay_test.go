package tasks_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/feed"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// sharedFeed is an in-process feed the extension takes for one shared by
// replicas: two servers of this process stand for two replicas.
type sharedFeed struct{ *feed.MemoryFeed }

// replicaPair returns two servers sharing f and one task store; A's
// "held" tool runs with g.
func replicaPair(t *testing.T, f server.Feed, g *gate) (a, b *server.Server) {
	t.Helper()
	store := tasks.NewMemoryStore()
	mk := func(g *gate) *server.Server {
		s := server.New(info, &server.Options{OmitServerInfo: true, Feed: f})
		x := tasks.New(&tasks.Options{Store: store})
		server.AddTool(s, &protocol.Tool{Name: "held"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			tasks.Promote(ctx)
			g.startOne.Do(func() { close(g.started) })
			select {
			case <-ctx.Done():
				g.stopped <- ctx.Err()
				return "", ctx.Err()
			case <-g.release:
				g.stopped <- nil
				return "released", nil
			}
		})
		x.SetTool("held", tasks.Policy{Mode: tasks.Must})
		if err := s.Install(x); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			x.Close()
			s.Close()
		})
		return s
	}
	return mk(g), mk(newGate())
}

// controlEvents counts the events on f that are not the listen streams'.
func controlEvents(t *testing.T, f server.Feed) *atomic.Int32 {
	var n atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_ = f.Subscribe(ctx, func(e server.Event) bool {
		if e.Kind == feed.Notification && !strings.HasPrefix(e.Topic, tasks.ID+"#") {
			n.Add(1)
		}
		return true
	})
	return &n
}

// TestRelayNothingWithMemoryFeed: with the in-process feed nothing is
// forwarded; tasks/cancel on the other server only records the
// cancellation.
func TestRelayNothingWithMemoryFeed(t *testing.T) {
	f := feed.NewMemoryFeed()
	g := newGate()
	a, b := replicaPair(t, f, g)
	n := controlEvents(t, f)
	ctx := testCtx(t)
	tk := decodeTask(t, must(rpc(ctx, a, "alice", true, "tools/call", map[string]any{"name": "held", "arguments": map[string]any{}})))
	<-g.started
	if _, err := rpc(ctx, b, "alice", true, tasks.MethodCancel, map[string]any{"taskId": tk.TaskID}); err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	if got := n.Load(); got != 0 {
		t.Errorf("%d control events on an in-process feed", got)
	}
	if tk := get(t, ctx, a, "alice", tk.TaskID); tk.Status != tasks.Cancelled {
		t.Errorf("status %s", tk.Status)
	}
}

// TestRelayChecks: a tasks/cancel of another principal is refused before
// anything is forwarded; a control event naming the wrong principal, an
// unknown task or malformed is ignored; the principal's tasks/cancel on
// the other replica stops the handler.
func TestRelayChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := sharedFeed{feed.NewMemoryFeed()}
		g := newGate()
		a, b := replicaPair(t, f, g)
		n := controlEvents(t, f)
		ctx := context.Background()
		tk := decodeTask(t, must(rpc(ctx, a, "alice", true, "tools/call", map[string]any{"name": "held", "arguments": map[string]any{}})))
		<-g.started
		if _, err := rpc(ctx, b, "mallory", true, tasks.MethodCancel, map[string]any{"taskId": tk.TaskID}); code(err) != -32602 {
			t.Fatalf("another principal's tasks/cancel: %v", err)
		}
		if got := n.Load(); got != 0 {
			t.Fatalf("%d control events for a refused tasks/cancel", got)
		}
		for _, params := range []string{
			`{"taskId":"` + tk.TaskID + `","principal":"mallory"}`,
			`{"taskId":"unknown","principal":"alice"}`,
			`{"taskId":`,
			`{"taskId":"` + tk.TaskID + `","principal":"alice","inputResponses":{"x":{}}}`, // not waiting for input
		} {
			method := "cancel"
			if strings.Contains(params, "inputResponses") {
				method = "update"
			}
			_ = f.Publish(ctx, server.Event{Kind: feed.Notification, Topic: tasks.ID + "/control", Method: method, Params: []byte(params)})
		}
		synctest.Wait()
		select {
		case err := <-g.stopped:
			t.Fatalf("a forged control event stopped the handler: %v", err)
		default:
		}
		if tk := get(t, ctx, a, "alice", tk.TaskID); tk.Status != tasks.Working {
			t.Fatalf("status %s after forged control events", tk.Status)
		}
		if _, err := rpc(ctx, b, "alice", true, tasks.MethodCancel, map[string]any{"taskId": tk.TaskID}); err != nil {
			t.Fatalf("tasks/cancel: %v", err)
		}
		if err := <-g.stopped; err == nil {
			t.Fatal("the handler was released, not cancelled")
		}
		synctest.Wait()
		if tk := get(t, ctx, a, "alice", tk.TaskID); tk.Status != tasks.Cancelled {
			t.Errorf("status %s", tk.Status)
		}
	})
}

func must(raw []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return raw
}
