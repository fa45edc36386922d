package feed

import (
	"context"
	"sync"
)

// EventKind is the kind of a change event.
type EventKind int

// Change event kinds.
const (
	ToolsListChanged EventKind = iota + 1
	PromptsListChanged
	ResourcesListChanged
	ResourceUpdated
	// SubscriptionLost is delivered by a feed that ends a subscription
	// itself (a broker connection lost, a subscriber too slow for it):
	// nothing more is delivered, and the listen stream ends so that its
	// client reconnects.
	SubscriptionLost
	// Notification is a notification an extension sends to the listen
	// streams that subscribed to its Topic (the Tasks extension's task
	// status, for one task): Method and Params are the notification's.
	Notification
)

// Event is one change published to a Feed.
type Event struct {
	Kind EventKind
	// URI is the updated resource, for ResourceUpdated.
	URI string
	// Topic, Method and Params are a Notification's: what it is about,
	// as the streams that want it subscribed to it, and the notification
	// (Params an encoded JSON object, without _meta).
	Topic  string
	Method string
	Params []byte
}

// Feed carries change events from the server (or any replica) to the
// subscriptions/listen streams. The in-memory feed serves one process; a
// shared broker behind this interface serves many replicas.
//
// Subscribers are callbacks: a subscriber with a goroutine of its own
// reads a channel made by Events.
type Feed interface {
	// Publish delivers e to every current subscriber.
	Publish(ctx context.Context, e Event) error
	// Subscribe calls deliver with every event published from now on,
	// until ctx is done or deliver returns false. Calls are sequential and
	// in publication order, on the publisher's goroutine (or the feed's
	// own): deliver must return quickly and must not call the feed. A feed
	// that ends the subscription itself says so with a last event of kind
	// SubscriptionLost.
	Subscribe(ctx context.Context, deliver func(Event) bool) error
}

// MemoryFeed is an in-process Feed.
type MemoryFeed struct {
	mu   sync.Mutex
	subs map[*memorySub]struct{}
}

type memorySub struct {
	deliver func(Event) bool
}

// NewMemoryFeed returns a Feed that fans events out within this process.
func NewMemoryFeed() *MemoryFeed {
	return &MemoryFeed{subs: make(map[*memorySub]struct{})}
}

// Publish delivers e to every subscriber, in the calling goroutine.
func (f *MemoryFeed) Publish(ctx context.Context, e Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		if !s.deliver(e) {
			delete(f.subs, s)
		}
	}
	return nil
}

// Subscribe registers deliver until ctx is done or deliver returns false.
func (f *MemoryFeed) Subscribe(ctx context.Context, deliver func(Event) bool) error {
	s := &memorySub{deliver: deliver}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		delete(f.subs, s)
		f.mu.Unlock()
	})
	return nil
}

// Subscribers returns the number of current subscribers.
func (f *MemoryFeed) Subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// Events subscribes to f with a channel of buffer events, for a
// subscriber with a goroutine of its own. The channel is closed when the
// subscription ends: when ctx is done, when the feed delivers
// SubscriptionLost, or when the buffer is full (the subscriber fell
// behind; it subscribes again and re-reads what it needs).
func Events(ctx context.Context, f Feed, buffer int) (<-chan Event, error) {
	c := &chanSub{ch: make(chan Event, buffer)}
	if err := f.Subscribe(ctx, c.deliver); err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, c.close)
	return c.ch, nil
}

type chanSub struct {
	mu     sync.Mutex
	ch     chan Event
	closed bool
}

func (c *chanSub) deliver(e Event) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if e.Kind != SubscriptionLost {
		select {
		case c.ch <- e:
			return true
		default:
		}
	}
	c.closed = true
	close(c.ch)
	return false
}

func (c *chanSub) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		close(c.ch)
	}
}
