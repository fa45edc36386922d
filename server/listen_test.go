package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// chanNotifier delivers notifications on a channel.
type chanNotifier chan []byte

func (c chanNotifier) Notify(b []byte) error {
	c <- append([]byte(nil), b...)
	return nil
}

func next(t *testing.T, c chanNotifier) string {
	t.Helper()
	select {
	case b := <-c:
		return string(b)
	case <-time.After(5 * time.Second):
		t.Fatal("no notification")
		return ""
	}
}

func quiet(t *testing.T, c chanNotifier) {
	t.Helper()
	select {
	case b := <-c:
		t.Fatalf("unexpected notification %s", b)
	case <-time.After(50 * time.Millisecond):
	}
}

func listenServer() *Server {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "t"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) { return "", nil })
	s.AddResource(&protocol.Resource{URI: "test://r", Name: "r"}, TextResource("", "r"))
	return s
}

// bothModes runs a listen test (the stream used to have two serving modes).
func bothModes(t *testing.T, test func(t *testing.T)) { test(t) }

func startListen(t *testing.T, ctx context.Context, s *Server, filter string) (chanNotifier, <-chan *jsonrpc.Response) {
	t.Helper()
	n := make(chanNotifier, 16)
	done := make(chan *jsonrpc.Response, 1)
	p := json.RawMessage(`{"notifications":` + filter + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	msg := &jsonrpc.Message{ID: jsonrpc.StringID("sub-1"), Method: protocol.MethodSubscriptionsListen, Params: p}
	go func() {
		done <- handle(s, ctx, msg, n)
	}()
	return n, done
}

func TestListenAcknowledgesAndFilters(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		s := listenServer()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n, done := startListen(t, ctx, s, `{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["test://r"]}`)
		ack := next(t, n)
		// No prompts are registered, so promptsListChanged is not honoured.
		want := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://r"]},"_meta":{"io.modelcontextprotocol/subscriptionId":"sub-1"}}}`
		if ack != want {
			t.Fatalf("ack =\n%s\nwant\n%s", ack, want)
		}
		s.NotifyResourcesChanged() // not opted in
		s.NotifyResourceUpdated("test://other")
		quiet(t, n)
		s.NotifyToolsChanged()
		if got := next(t, n); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub-1"}}}` {
			t.Fatalf("tools changed = %s", got)
		}
		s.NotifyResourceUpdated("test://r")
		if got := next(t, n); got != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://r","_meta":{"io.modelcontextprotocol/subscriptionId":"sub-1"}}}` {
			t.Fatalf("resource updated = %s", got)
		}
		// Adding a tool announces the change itself.
		AddTool(s, &protocol.Tool{Name: "t2"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) { return "", nil })
		if got := next(t, n); !strings.Contains(got, "tools/list_changed") {
			t.Fatalf("AddTool did not announce: %s", got)
		}
		cancel()
		if r := <-done; r != nil {
			t.Fatalf("cancelled listen answered %+v", r)
		}
	})
}

func TestListenGracefulClose(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		s := listenServer()
		n, done := startListen(t, context.Background(), s, `{"toolsListChanged":true}`)
		next(t, n)
		s.Close()
		r := <-done
		if r == nil || r.Error != nil {
			t.Fatalf("close = %+v", r)
		}
		want := `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":"sub-1"}}`
		if string(r.Result) != want {
			t.Fatalf("closing result = %s, want %s", r.Result, want)
		}
	})
}

func TestListenNeedsFilter(t *testing.T) {
	s := listenServer()
	wantError(t, do(t, s, protocol.MethodSubscriptionsListen, params(t, nil, `{}`)), protocol.CodeInvalidParams)
}

func TestFeedEventsDropsSlowSubscriber(t *testing.T) {
	f := NewMemoryFeed()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, _ := FeedEvents(ctx, f, 64)
	for i := 0; i < 100; i++ {
		_ = f.Publish(ctx, Event{Kind: ToolsListChanged})
	}
	n := 0
	for range ch {
		n++
	}
	if n != 64 || f.Subscribers() != 0 {
		t.Fatalf("received %d events, %d subscribers left", n, f.Subscribers())
	}
	ch2, _ := FeedEvents(ctx, f, 64)
	cancel()
	if _, ok := <-ch2; ok {
		t.Fatal("channel open after cancel")
	}
}

// droppingFeed ends every subscription at once, as a broker does when it
// loses its connection.
type droppingFeed struct{}

func (droppingFeed) Publish(ctx context.Context, e Event) error { return nil }
func (droppingFeed) Since(ctx context.Context, after string, max int) ([]Event, bool, error) {
	return nil, true, nil
}
func (droppingFeed) Last(ctx context.Context) (string, error) { return "", nil }
func (droppingFeed) Subscribe(ctx context.Context, deliver func(Event) bool) error {
	go deliver(Event{Kind: SubscriptionLost})
	return nil
}

func TestListenTornDownSaysCancelled(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		s := New(protocol.Implementation{Name: "test", Version: "1.0.0"}, &Options{Feed: droppingFeed{}})
		AddTool(s, &protocol.Tool{Name: "t"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) { return "", nil })
		n, done := startListen(t, context.Background(), s, `{"toolsListChanged":true}`)
		next(t, n) // acknowledgement
		if got := next(t, n); got != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub-1","reason":"subscription ended: the client fell behind the change feed"}}` {
			t.Fatalf("teardown = %s", got)
		}
		if r := <-done; r != nil {
			t.Fatalf("torn-down listen answered %+v", r)
		}
	})
}

// TestListenLimits: listen streams and the URIs one of them watches are
// capped; a stream that ends makes room for another.
func TestListenLimits(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		s := listenServer()
		s.opts.MaxListenStreams, s.opts.MaxListenURIs = 1, 3
		ctx, cancel := context.WithCancel(context.Background())
		n, done := startListen(t, ctx, s, `{"toolsListChanged":true}`)
		next(t, n) // acknowledged
		refused := func(filter string) *jsonrpc.Response {
			p := json.RawMessage(`{"notifications":` + filter + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
			return handle(s, context.Background(), &jsonrpc.Message{ID: jsonrpc.StringID("x"), Method: protocol.MethodSubscriptionsListen, Params: p}, make(chanNotifier, 16))
		}
		r := refused(`{"toolsListChanged":true}`)
		if r == nil || r.Error == nil || !strings.Contains(r.Error.Message, "busy") {
			t.Fatalf("a stream over the limit: %+v", r)
		}
		p := json.RawMessage(`{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
		if _, err := s.Serve(context.Background(), &transport.Request{Message: &jsonrpc.Message{ID: jsonrpc.StringID("y"), Method: protocol.MethodSubscriptionsListen, Params: p}, Notifier: make(chanNotifier, 16), Cancel: func() {}}); !errors.Is(err, protocol.ErrUnavailable) {
			t.Fatalf("a stream over the limit is not marked unavailable: %v", err)
		}
		cancel()
		<-done
		ctx2, cancel2 := context.WithCancel(context.Background())
		defer cancel2()
		n2, _ := startListen(t, ctx2, s, `{"resourceSubscriptions":["a","b","c"]}`)
		if ack := next(t, n2); !strings.Contains(ack, "acknowledged") {
			t.Fatalf("after the first stream ended: %s", ack)
		}
		cancel2()
		for s.listens.count() != 0 {
			time.Sleep(time.Millisecond)
		}
		if r := refused(`{"resourceSubscriptions":["a","b","c","d"]}`); r == nil || r.Error == nil || r.Error.Code != protocol.CodeInvalidParams {
			t.Fatalf("four URIs: %+v", r)
		}
	})
}

// TestListenLeavesOutResourcesTheCallerMayNotRead: a caller without the
// scopes a resource (or its template) needs is not acknowledged, nor sent,
// its updates; a caller with them is.
func TestListenLeavesOutResourcesTheCallerMayNotRead(t *testing.T) {
	s := scopedServer(t)
	ctx, cancel := context.WithCancel(withScopes("files:other"))
	defer cancel()
	n, _ := startListen(t, ctx, s, `{"resourceSubscriptions":["test://secret","priv://7","test://unknown"]}`)
	if ack := next(t, n); !strings.Contains(ack, `"resourceSubscriptions":["test://unknown"]`) {
		t.Fatalf("ack = %s", ack)
	}
	s.NotifyResourceUpdated("test://secret")
	s.NotifyResourceUpdated("priv://7")
	quiet(t, n)

	ctx2, cancel2 := context.WithCancel(withScopes("files:read"))
	defer cancel2()
	n2, _ := startListen(t, ctx2, s, `{"resourceSubscriptions":["test://secret","priv://7"]}`)
	if ack := next(t, n2); !strings.Contains(ack, `"resourceSubscriptions":["test://secret","priv://7"]`) {
		t.Fatalf("ack with the scope = %s", ack)
	}
	s.NotifyResourceUpdated("test://secret")
	if got := next(t, n2); !strings.Contains(got, `"uri":"test://secret"`) {
		t.Fatalf("update = %s", got)
	}
}

// TestListenPerPrincipal: one principal may open a hundredth of
// MaxListenStreams (here 2) by default, callers without a principal share
// MaxListenStreams, and MaxListenStreamsPerPrincipal, when set, applies to
// all.
func TestListenPerPrincipal(t *testing.T) {
	s := listenServer()
	s.opts.MaxListenStreams = 200
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	as := func(principal string) context.Context { return WithPrincipal(ctx, principal) }
	open := func(ctx context.Context) (*jsonrpc.Response, bool) {
		n, done := startListen(t, ctx, s, `{"toolsListChanged":true}`)
		select {
		case <-n:
			return nil, true
		case r := <-done:
			return r, false
		}
	}
	aliceCtx, endAlice := context.WithCancel(as("alice"))
	if _, ok := open(aliceCtx); !ok {
		t.Fatal("alice's first stream")
	}
	if _, ok := open(as("alice")); !ok {
		t.Fatal("alice's second stream")
	}
	r, ok := open(as("alice"))
	if ok || r == nil || r.Error == nil || !strings.Contains(r.Error.Message, "of yours") {
		t.Fatalf("alice's third stream: %+v", r)
	}
	if _, ok := open(as("bob")); !ok {
		t.Fatal("bob's stream")
	}
	for i := range 3 {
		if _, ok := open(ctx); !ok {
			t.Fatalf("anonymous stream %d", i)
		}
	}
	endAlice()
	for {
		if _, ok := open(as("alice")); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}

	s2 := listenServer()
	s2.opts.MaxListenStreamsPerPrincipal = 1
	n, _ := startListen(t, ctx, s2, `{"toolsListChanged":true}`)
	next(t, n)
	_, done := startListen(t, ctx, s2, `{"toolsListChanged":true}`)
	if r := <-done; r == nil || r.Error == nil || !strings.Contains(r.Error.Message, "of yours") {
		t.Fatalf("a second anonymous stream with MaxListenStreamsPerPrincipal 1: %+v", r)
	}
}
