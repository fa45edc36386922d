package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/feed"
	"github.com/mcpkit/mcpkit/store/redis"
	"github.com/mcpkit/mcpkit/store/redis/redistest"
)

// TestFeedAcrossStores: an event published through one Store reaches the
// subscribers of another once; a Key is announced once; Since and Last
// read the stream.
func TestFeedAcrossStores(t *testing.T) {
	p := redistest.Redis(t)
	ctx := context.Background()
	var stores []*redis.Store
	for i := 0; i < 2; i++ {
		st, err := redis.Open(ctx, p.URL(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := feed.Events(sctx, stores[1].Feed(), 16)
	if err != nil {
		t.Fatal(err)
	}
	pub := stores[0].Feed()
	for _, e := range []feed.Event{{Kind: feed.ToolsListChanged}, {Kind: feed.ResourceUpdated, URI: "x://a", Key: "k"}, {Kind: feed.ResourceUpdated, URI: "x://a", Key: "k"}} {
		if err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	var got []feed.Event
	for len(got) < 2 {
		select {
		case e := <-events:
			got = append(got, e)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %d of 2 events", len(got))
		}
	}
	select {
	case e := <-events:
		t.Fatalf("a third event %+v (the repeated key)", e)
	case <-time.After(300 * time.Millisecond):
	}
	if got[0].Kind != feed.ToolsListChanged || got[1].URI != "x://a" || got[1].ID <= got[0].ID {
		t.Fatalf("events %+v", got)
	}
	since, complete, err := pub.Since(ctx, got[0].ID, 10)
	if err != nil || !complete || len(since) != 1 || since[0].ID != got[1].ID {
		t.Fatalf("Since: %+v %v %v", since, complete, err)
	}
	if last, _ := pub.Last(ctx); last != got[1].ID {
		t.Errorf("Last = %q, want %q", last, got[1].ID)
	}
}

// TestFeedLostWithRedis: when Redis goes away, every subscription ends
// (the channel closes after SubscriptionLost), so that listen streams end
// and their clients listen again, rather than waiting on a feed that
// delivers nothing; once Redis is back, a new subscription gets events.
func TestFeedLostWithRedis(t *testing.T) {
	p := redistest.Redis(t)
	ctx := context.Background()
	st, err := redis.Open(ctx, p.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := feed.Events(sctx, st.Feed(), 16)
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	deadline := time.After(15 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-events:
		case <-deadline:
			t.Fatal("the subscription goes on with Redis gone")
		}
	}
	p.Restart(t)
	var again <-chan feed.Event
	for again == nil {
		again, err = feed.Events(sctx, st.Feed(), 16)
		if err != nil {
			select {
			case <-deadline:
				t.Fatalf("subscribing again after Redis came back: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	for {
		if err := st.Feed().Publish(ctx, feed.Event{Kind: feed.ToolsListChanged}); err != nil {
			t.Fatalf("publishing after Redis came back: %v", err)
		}
		select {
		case e, ok := <-again:
			if !ok {
				t.Fatal("the new subscription ended")
			}
			if e.Kind != feed.ToolsListChanged {
				t.Fatalf("event %+v", e)
			}
			return
		case <-deadline:
			t.Fatal("no event after Redis came back")
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// TestFeedCarriesNotifications: an extension's notification (a task's
// status, say) published through one Store reaches another's subscribers
// with its topic, method and params; one larger than the feed carries is
// refused.
func TestFeedCarriesNotifications(t *testing.T) {
	p := redistest.Redis(t)
	ctx := context.Background()
	var stores []*redis.Store
	for range 2 {
		st, err := redis.Open(ctx, p.URL(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := feed.Events(sctx, stores[1].Feed(), 16)
	if err != nil {
		t.Fatal(err)
	}
	sent := feed.Event{Kind: feed.Notification, Topic: "ext#t1", Method: "notifications/tasks", Params: []byte(`{"taskId":"t1","status":"completed"}`)}
	if err := stores[0].Feed().Publish(ctx, sent); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-events:
		if e.Kind != feed.Notification || e.Topic != sent.Topic || e.Method != sent.Method || string(e.Params) != string(sent.Params) {
			t.Fatalf("received %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the notification did not arrive")
	}
	big := sent
	big.Params = make([]byte, redis.MaxNotificationBytes+1)
	if err := stores[0].Feed().Publish(ctx, big); err == nil {
		t.Error("a notification larger than MaxNotificationBytes was published")
	}
}
