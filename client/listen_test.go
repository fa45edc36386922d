package client_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

const watched = "test://watched-resource"

// countingFeed is the server's change feed, counting the subscribers whose
// context is still live: a listen request the server saw cancelled leaves
// the count.
type countingFeed struct {
	*server.MemoryFeed
	active atomic.Int64
}

func (f *countingFeed) Subscribe(ctx context.Context, deliver func(server.Event) bool) error {
	f.active.Add(1)
	context.AfterFunc(ctx, func() { f.active.Add(-1) })
	return f.MemoryFeed.Subscribe(ctx, deliver)
}

// waitFor polls cond for a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// next returns the subscription's next notification.
func next(t *testing.T, sub *client.Subscription) client.Notification {
	t.Helper()
	select {
	case n, ok := <-sub.C():
		if !ok {
			t.Fatalf("subscription ended (err %v) while a notification was due", sub.Err())
		}
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5s")
	}
	return client.Notification{}
}

// ended waits for the subscription's end and returns what C still held.
func ended(t *testing.T, sub *client.Subscription) []client.Notification {
	t.Helper()
	var rest []client.Notification
	timeout := time.After(5 * time.Second)
	for {
		select {
		case n, ok := <-sub.C():
			if !ok {
				select {
				case <-sub.Done():
				default:
					t.Error("C closed before Done")
				}
				return rest
			}
			rest = append(rest, n)
		case <-timeout:
			t.Fatal("subscription did not end")
		}
	}
}

type listenEnv struct {
	core *server.Server
	feed *countingFeed
	dial func() transport.ClientConn
	hs   *httpServer
}

func listenEnvs(t *testing.T, opts *server.Options) []struct {
	name string
	env  func(t *testing.T) *listenEnv
} {
	mk := func(t *testing.T, stdioConn bool) *listenEnv {
		var o server.Options
		if opts != nil {
			o = *opts
		}
		feed := &countingFeed{MemoryFeed: server.NewMemoryFeed()}
		o.Feed = feed
		core, both := everythingServers(t, &o, nil)
		env := &listenEnv{core: core, feed: feed}
		if stdioConn {
			env.dial = func() transport.ClientConn { return serveStdio(t, both) }
		} else {
			env.hs = serveHTTP(t, both)
			env.dial = func() transport.ClientConn { return env.hs.conn() }
		}
		return env
	}
	return []struct {
		name string
		env  func(t *testing.T) *listenEnv
	}{
		{"http", func(t *testing.T) *listenEnv { return mk(t, false) }},
		{"stdio", func(t *testing.T) *listenEnv { return mk(t, true) }},
	}
}

func TestListenModern(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	for _, e := range listenEnvs(t, nil) {
		t.Run(e.name, func(t *testing.T) {
			env := e.env(t)
			s, err := newClient(nil).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			base := env.feed.active.Load()
			sub, err := s.Listen(ctx, protocol.SubscriptionFilter{
				ToolsListChanged:      true,
				PromptsListChanged:    false,
				ResourceSubscriptions: []string{watched},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !sub.Acknowledged.ToolsListChanged || sub.Acknowledged.PromptsListChanged || !slices.Equal(sub.Acknowledged.ResourceSubscriptions, []string{watched}) {
				t.Errorf("acknowledged %+v", sub.Acknowledged)
			}
			if n := env.feed.active.Load(); n != base+1 {
				t.Errorf("%d feed subscribers, want %d", n, base+1)
			}
			// Not asked for: a prompt change and another resource.
			env.core.NotifyPromptsChanged()
			env.core.NotifyResourceUpdated("test://static-text")
			env.core.NotifyToolsChanged()
			if n := next(t, sub); n.Method != protocol.NotificationToolListChanged {
				t.Errorf("first notification %+v, want tools/list_changed", n)
			}
			env.core.NotifyResourceUpdated(watched)
			if n := next(t, sub); n.Method != protocol.NotificationResourceUpdated || n.URI != watched {
				t.Errorf("second notification %+v, want an update of %s", n, watched)
			}
			// A tool may trigger it too, through the same connection.
			if _, err := s.CallTool(ctx, "test_trigger_tool_change", nil, nil); err != nil {
				t.Fatal(err)
			}
			if n := next(t, sub); n.Method != protocol.NotificationToolListChanged {
				t.Errorf("third notification %+v", n)
			}
			env.core.Close() // the graceful end
			if rest := ended(t, sub); len(rest) != 0 {
				t.Errorf("left over: %+v", rest)
			}
			if err := sub.Err(); err != nil {
				t.Errorf("Err after the server closed gracefully: %v", err)
			}
			waitFor(t, "the server's listen to end", func() bool { return env.feed.active.Load() == base })
		})
	}
}

func TestListenClose(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	for _, e := range listenEnvs(t, nil) {
		t.Run(e.name, func(t *testing.T) {
			env := e.env(t)
			s, err := newClient(nil).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			base := env.feed.active.Load()
			sub, err := s.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			keep, err := s.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "two listen requests on the server", func() bool { return env.feed.active.Load() == base+2 })
			sub.Close()
			select {
			case <-sub.Done():
			default:
				t.Fatal("Close returned before the subscription ended")
			}
			if _, ok := <-sub.C(); ok {
				t.Error("C still open after Close")
			}
			if err := sub.Err(); err != nil {
				t.Errorf("Err after Close: %v", err)
			}
			// The server saw the listen request cancelled; the other one
			// goes on.
			waitFor(t, "the server to see the cancellation", func() bool { return env.feed.active.Load() == base+1 })
			env.core.NotifyToolsChanged()
			if n := next(t, keep); n.Method != protocol.NotificationToolListChanged {
				t.Errorf("remaining subscription got %+v", n)
			}
			// Closing the session ends what is left.
			s.Close()
			ended(t, keep)
			waitFor(t, "the server to see the session's end", func() bool { return env.feed.active.Load() == base })
		})
	}
}

func TestListenDemultiplexStdio(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	env := listenEnvs(t, nil)[1].env(t)
	s, err := newClient(nil).Connect(ctx, env.dial(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := s.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Listen(ctx, protocol.SubscriptionFilter{ResourceSubscriptions: []string{watched}})
	if err != nil {
		t.Fatal(err)
	}
	if tools.Acknowledged.ToolsListChanged != true || len(tools.Acknowledged.ResourceSubscriptions) != 0 {
		t.Errorf("tools subscription acknowledged %+v", tools.Acknowledged)
	}
	if res.Acknowledged.ToolsListChanged || !slices.Equal(res.Acknowledged.ResourceSubscriptions, []string{watched}) {
		t.Errorf("resource subscription acknowledged %+v", res.Acknowledged)
	}
	for range 2 {
		env.core.NotifyResourceUpdated(watched)
		env.core.NotifyToolsChanged()
	}
	for i := range 2 {
		if n := next(t, tools); n.Method != protocol.NotificationToolListChanged {
			t.Errorf("tools subscription, notification %d: %+v", i, n)
		}
		if n := next(t, res); n.Method != protocol.NotificationResourceUpdated || n.URI != watched {
			t.Errorf("resource subscription, notification %d: %+v", i, n)
		}
	}
	tools.Close()
	res.Close()
	if rest := append(ended(t, tools), ended(t, res)...); len(rest) != 0 {
		t.Errorf("left over: %+v", rest)
	}
}

func TestListenDropped(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	env := listenEnvs(t, nil)[0].env(t)
	s, err := newClient(nil).Connect(ctx, env.dial(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub, err := s.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	// The stream ends without the closing result.
	env.hs.ts.CloseClientConnections()
	ended(t, sub)
	if err := sub.Err(); !errors.Is(err, client.ErrSubscriptionDropped) {
		t.Errorf("Err = %v, want ErrSubscriptionDropped", err)
	}
}

func TestListenInvalidatesCache(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	hints := &protocol.CacheHints{TTLMs: 60000, CacheScope: protocol.CachePublic}
	envs := listenEnvs(t, &server.Options{ListCache: hints, ReadCache: hints})
	for _, e := range envs {
		t.Run(e.name, func(t *testing.T) {
			env := e.env(t)
			// Count the reads that reach the core, whatever the transport.
			var reads atomic.Int64
			env.core.AddResource(&protocol.Resource{URI: watched, Name: "watched-resource"}, func(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
				reads.Add(1)
				return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{{URI: watched, Text: "w"}}}, nil
			})
			s, err := newClient(nil).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// tools/list requests are counted through a tool whose listing
			// changes: a cached list does not show a tool added later.
			list := func() []*protocol.Tool {
				t.Helper()
				r, err := s.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				return r.Tools
			}
			read := func() {
				t.Helper()
				if _, err := s.ReadResource(ctx, watched, nil); err != nil {
					t.Fatal(err)
				}
			}
			if hasTool(list(), "late") {
				t.Fatal("late tool listed before it was added")
			}
			read()
			read()
			if n := reads.Load(); n != 1 {
				t.Fatalf("%d reads reached the server, want 1", n)
			}
			sub, err := s.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{watched}})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			env.core.AddToolHandler(&protocol.Tool{Name: "late", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
				return server.TextResult("late"), nil
			})
			// Adding a tool announces the change itself; wait for that.
			for {
				if n := next(t, sub); n.Method == protocol.NotificationToolListChanged {
					break
				}
			}
			if !hasTool(list(), "late") {
				t.Error("tools/list still served from the cache after tools/list_changed")
			}
			env.core.NotifyResourceUpdated(watched)
			for {
				if n := next(t, sub); n.Method == protocol.NotificationResourceUpdated {
					break
				}
			}
			read()
			if n := reads.Load(); n != 2 {
				t.Errorf("%d reads reached the server after the update, want 2", n)
			}
			read()
			if n := reads.Load(); n != 2 {
				t.Errorf("%d reads reached the server, want 2 (cached again)", n)
			}
		})
	}
}

func TestListenLegacy(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	for _, e := range listenEnvs(t, nil) {
		t.Run(e.name, func(t *testing.T) {
			env := e.env(t)
			s, err := newClient(&client.Options{Era: client.EraLegacy}).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Era() != client.EraLegacy {
				t.Fatalf("era %v", s.Era())
			}
			sub, err := s.Listen(ctx, protocol.SubscriptionFilter{ResourceSubscriptions: []string{watched}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sub.Acknowledged.ResourceSubscriptions, []string{watched}) {
				t.Errorf("acknowledged %+v", sub.Acknowledged)
			}
			if env.hs != nil {
				subs := env.hs.rec.posts(protocol.MethodResourcesSubscribe)
				if len(subs) != 1 {
					t.Fatalf("%d resources/subscribe requests, want 1", len(subs))
				}
				if n := env.hs.rec.count(protocol.MethodSubscriptionsListen); n != 0 {
					t.Errorf("%d subscriptions/listen requests in the legacy era", n)
				}
			}
			env.core.NotifyToolsChanged() // not asked for
			env.core.NotifyResourceUpdated("test://static-text")
			env.core.NotifyResourceUpdated(watched)
			if n := next(t, sub); n.Method != protocol.NotificationResourceUpdated || n.URI != watched {
				t.Errorf("notification %+v, want an update of %s", n, watched)
			}
			if _, err := s.CallTool(ctx, "test_trigger_resource_update", map[string]any{"uri": watched}, nil); err != nil {
				t.Fatal(err)
			}
			if n := next(t, sub); n.URI != watched {
				t.Errorf("notification %+v", n)
			}
			sub.Close()
			if rest := ended(t, sub); len(rest) != 0 {
				t.Errorf("left over: %+v", rest)
			}
			if err := sub.Err(); err != nil {
				t.Errorf("Err after Close: %v", err)
			}
		})
	}
}
