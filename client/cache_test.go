package client_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// fakeClock is a settable clock for the result cache.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestCacheListTTL(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	cases := []struct {
		name  string
		hints protocol.CacheHints
		// tools/list requests after: a first call, a second at once, a
		// third after 150ms, a fourth after 250ms
		want [4]int
	}{
		{"public 200ms", protocol.CacheHints{TTLMs: 200, CacheScope: protocol.CachePublic}, [4]int{1, 1, 1, 2}},
		{"private 200ms", protocol.CacheHints{TTLMs: 200, CacheScope: protocol.CachePrivate}, [4]int{1, 1, 1, 2}},
		{"ttl 0", protocol.CacheHints{TTLMs: 0, CacheScope: protocol.CachePublic}, [4]int{1, 2, 3, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hints := tc.hints
			_, both := everythingServers(t, &server.Options{ListCache: &hints}, nil)
			hs := serveHTTP(t, both)
			clock := newFakeClock()
			c := newClient(nil)
			client.SetCacheClock(c, clock.now)
			s, err := c.Connect(ctx, hs.conn(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i, step := range []time.Duration{0, 0, 150 * time.Millisecond, 100 * time.Millisecond} {
				clock.advance(step)
				res, err := s.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !hasTool(res.Tools, "echo") {
					t.Fatalf("call %d: tools lack echo", i)
				}
				if res.TTLMs != hints.TTLMs {
					t.Errorf("call %d: ttlMs %d, want %d", i, res.TTLMs, hints.TTLMs)
				}
				if n := hs.rec.count(protocol.MethodToolsList); n != tc.want[i] {
					t.Errorf("after call %d: %d tools/list requests, want %d", i, n, tc.want[i])
				}
			}
		})
	}
}

// The real clock, once: a TTL expires by itself.
func TestCacheListTTLRealClock(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	_, both := everythingServers(t, &server.Options{ListCache: &protocol.CacheHints{TTLMs: 200, CacheScope: protocol.CachePublic}}, nil)
	hs := serveHTTP(t, both)
	s, err := newClient(nil).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	for range 2 {
		if _, err := s.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if time.Since(start) < 150*time.Millisecond {
		if n := hs.rec.count(protocol.MethodToolsList); n != 1 {
			t.Errorf("%d tools/list requests within the TTL, want 1", n)
		}
	}
	time.Sleep(250 * time.Millisecond)
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := hs.rec.count(protocol.MethodToolsList); n != 2 {
		t.Errorf("%d tools/list requests after the TTL, want 2", n)
	}
}

func TestCacheNoCacheAndDisable(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	_, both := everythingServers(t, &server.Options{
		ListCache: &protocol.CacheHints{TTLMs: 60000, CacheScope: protocol.CachePublic},
		ReadCache: &protocol.CacheHints{TTLMs: 60000, CacheScope: protocol.CachePublic},
	}, nil)
	hs := serveHTTP(t, both)

	s, err := newClient(nil).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 {
		if _, err := s.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadResource(ctx, "test://static-text", nil); err != nil {
			t.Fatal(err)
		}
	}
	if l, r := hs.rec.count(protocol.MethodToolsList), hs.rec.count(protocol.MethodResourcesRead); l != 1 || r != 1 {
		t.Fatalf("cached: %d tools/list, %d resources/read; want 1 and 1", l, r)
	}
	if _, err := s.ListTools(ctx, &client.ListOptions{NoCache: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadResource(ctx, "test://static-text", &client.CallOptions{NoCache: true}); err != nil {
		t.Fatal(err)
	}
	if l, r := hs.rec.count(protocol.MethodToolsList), hs.rec.count(protocol.MethodResourcesRead); l != 2 || r != 2 {
		t.Errorf("NoCache: %d tools/list, %d resources/read; want 2 and 2", l, r)
	}
	// Another URI is another entry.
	rr, err := s.ReadResource(ctx, "test://watched-resource", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Contents[0].Text != "Watched resource content." {
		t.Errorf("watched resource read %q", rr.Contents[0].Text)
	}
	// The server/discover of Connect is cached too.
	if _, err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if n := hs.rec.count(protocol.MethodDiscover); n != 1 {
		t.Errorf("%d server/discover requests, want 1 (Connect's, then cached)", n)
	}

	off, err := newClient(&client.Options{DisableCache: true}).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	before := hs.rec.count(protocol.MethodToolsList)
	for range 3 {
		if _, err := off.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := hs.rec.count(protocol.MethodToolsList) - before; n != 3 {
		t.Errorf("DisableCache: %d tools/list requests for 3 calls", n)
	}
}

func TestCachePrivatePerCacheKey(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	for _, scope := range []protocol.CacheScope{protocol.CachePrivate, protocol.CachePublic} {
		t.Run(string(scope), func(t *testing.T) {
			_, both := everythingServers(t, &server.Options{ReadCache: &protocol.CacheHints{TTLMs: 60000, CacheScope: scope}}, nil)
			hs := serveHTTP(t, both)
			c := newClient(&client.Options{CacheKey: "alice"})
			s, err := c.Connect(ctx, hs.conn(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			read := func(s *client.Session, want int) {
				t.Helper()
				rr, err := s.ReadResource(ctx, "test://static-text", nil)
				if err != nil {
					t.Fatal(err)
				}
				if rr.CacheScope != scope || len(rr.Contents) != 1 {
					t.Errorf("read %+v", rr)
				}
				if n := hs.rec.count(protocol.MethodResourcesRead); n != want {
					t.Errorf("%d resources/read requests, want %d", n, want)
				}
			}
			read(s, 1)
			read(s, 1) // alice's, from the cache
			client.SetCacheKey(c, "bob")
			private := scope == protocol.CachePrivate
			if private {
				read(s, 2) // not alice's for bob
				read(s, 2) // bob's own
			} else {
				read(s, 1) // public: for anyone
			}
			client.SetCacheKey(c, "alice")
			read(s, map[bool]int{true: 2, false: 1}[private])

			other, err := newClient(&client.Options{CacheKey: "carol"}).Connect(ctx, hs.conn(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			read(other, map[bool]int{true: 3, false: 2}[private])
		})
	}
}

// A Client that talks to two servers without ConnectOptions.Key must not
// serve one server's cached results for the other.
func TestCacheNotSharedAcrossServers(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	mk := func(tool string) *httpServer {
		core := server.New(protocol.Implementation{Name: tool, Version: "1"}, &server.Options{ListCache: &protocol.CacheHints{TTLMs: 60000, CacheScope: protocol.CachePublic}})
		server.AddTool(core, &protocol.Tool{Name: tool}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) { return tool, nil })
		t.Cleanup(func() { core.Close() })
		return serveHTTP(t, core)
	}
	a, b := mk("tool_a"), mk("tool_b")
	c := newClient(nil)
	for _, key := range []string{"", "same-key-for-both"} {
		sa, err := c.Connect(ctx, a.conn(), &client.ConnectOptions{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		defer sa.Close()
		sb, err := c.Connect(ctx, b.conn(), &client.ConnectOptions{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		la, err := sa.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := sb.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			continue // one key names one target: sharing is what was asked
		}
		if !hasTool(la.Tools, "tool_a") || !hasTool(lb.Tools, "tool_b") || hasTool(lb.Tools, "tool_a") {
			t.Errorf("server a lists %v, server b lists %v", names(la.Tools), names(lb.Tools))
		}
		if sa.ServerInfo().Name != "tool_a" || sb.ServerInfo().Name != "tool_b" {
			t.Errorf("server infos %q, %q", sa.ServerInfo().Name, sb.ServerInfo().Name)
		}
		// Within one session the cache still works.
		if _, err := sb.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if n := b.rec.count(protocol.MethodToolsList); n != 1 {
			t.Errorf("%d tools/list requests to b, want 1", n)
		}
	}
}

func names(tools []*protocol.Tool) []string {
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name)
	}
	return out
}

func TestCacheSkipsInputRounds(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	core, both := everythingServers(t, &server.Options{ReadCache: &protocol.CacheHints{TTLMs: 60000, CacheScope: protocol.CachePublic}}, nil)
	core.AddResource(&protocol.Resource{URI: "test://ask", Name: "ask"}, func(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
		res, err := req.Elicit("who", &protocol.ElicitParams{Message: "Who reads?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		name, _ := res.Content["name"].(string)
		return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{{URI: req.URI, Text: "for " + name}}}, nil
	})
	hs := serveHTTP(t, both)
	h := &nameElicitation{name: "Ada"}
	s, err := newClient(&client.Options{Elicitation: h.handle}).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 2; i++ {
		rr, err := s.ReadResource(ctx, "test://ask", nil)
		if err != nil {
			t.Fatal(err)
		}
		if rr.Contents[0].Text != "for Ada" {
			t.Errorf("read %q", rr.Contents[0].Text)
		}
		if rr.TTLMs != 60000 {
			t.Errorf("the completed read carries ttlMs %d: the test would not show caching", rr.TTLMs)
		}
		if n := hs.rec.count(protocol.MethodResourcesRead); n != 2*i {
			t.Errorf("after read %d: %d resources/read requests, want %d", i, n, 2*i)
		}
	}
	if n := len(h.messages()); n != 2 {
		t.Errorf("handler asked %d times, want 2", n)
	}
	// The same server's plain resource is cached: the settings do cache.
	for range 2 {
		if _, err := s.ReadResource(ctx, "test://static-text", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := hs.rec.count(protocol.MethodResourcesRead); n != 5 {
		t.Errorf("%d resources/read requests, want 5", n)
	}
}
