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
