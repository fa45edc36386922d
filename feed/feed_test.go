package feed_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/feed"
)

// TestMemoryFeedSinceAndKeys: ids grow with publication order, Since
// returns what came after an id and says when some of it is no longer
// kept, and a Key is announced once.
func TestMemoryFeedSinceAndKeys(t *testing.T) {
	ctx := context.Background()
	f := feed.NewMemoryFeed()
	if last, _ := f.Last(ctx); last != "" {
		t.Fatalf("Last of an empty feed = %q", last)
	}
	var delivered []feed.Event
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_ = f.Subscribe(sctx, func(e feed.Event) bool { delivered = append(delivered, e); return true })
	for _, e := range []feed.Event{{Kind: feed.ToolsListChanged}, {Kind: feed.ResourceUpdated, URI: "x://a", Key: "k1"}, {Kind: feed.ResourceUpdated, URI: "x://a", Key: "k1"}, {Kind: feed.PromptsListChanged}} {
		if err := f.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if len(delivered) != 3 {
		t.Fatalf("delivered %d events, want 3 (the repeated key once)", len(delivered))
	}
	for i := 1; i < len(delivered); i++ {
		if delivered[i].ID <= delivered[i-1].ID {
			t.Errorf("ids do not grow: %q then %q", delivered[i-1].ID, delivered[i].ID)
		}
	}
	events, complete, err := f.Since(ctx, delivered[0].ID, 10)
	if err != nil || !complete || len(events) != 2 || events[0].ID != delivered[1].ID || events[1].Kind != feed.PromptsListChanged {
		t.Fatalf("Since: %+v %v %v", events, complete, err)
	}
	if events, _, _ := f.Since(ctx, delivered[0].ID, 1); len(events) != 1 {
		t.Errorf("Since with max 1 returned %d", len(events))
	}
	if last, _ := f.Last(ctx); last != delivered[2].ID {
		t.Errorf("Last = %q, want %q", last, delivered[2].ID)
	}
	if _, _, err := f.Since(ctx, "not an id", 10); err == nil {
		t.Error("a malformed id accepted")
	}
	// Past the 1,024 kept events, an old cursor is incomplete.
	for i := 0; i < 1100; i++ {
		_ = f.Publish(ctx, feed.Event{Kind: feed.ToolsListChanged})
	}
	if _, complete, _ := f.Since(ctx, delivered[0].ID, 10); complete {
		t.Error("Since after a trimmed id reports complete")
	}
	last, _ := f.Last(ctx)
	if events, complete, _ := f.Since(ctx, last, 10); !complete || len(events) != 0 {
		t.Errorf("Since the last id: %d events, complete %v", len(events), complete)
	}
}
