package feed

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
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
	// ID is the feed's name for the event, set by the feed on the events
	// it delivers and returns (Publish ignores it): ids grow with
	// publication order, compared byte by byte as strings, so that a
	// reader that remembers the last id it saw can ask for the events
	// after it (Feed.Since).
	ID string
	// Key, when set on Publish, names the change itself: a feed publishes
	// one event per Key within its de-duplication window (a minute for
	// MemoryFeed), so that replicas that each detect the same change (the
	// same fingerprint of the same table, say) announce it once.
	Key string
	// Topic, Method and Params are a Notification's: what it is about,
	// as the streams that want it subscribed to it, and the notification
	// (Params an encoded JSON object, without _meta).
	Topic  string
	Method string
	Params []byte
}

// Feed carries change events from the server (or any replica) to the
// subscriptions/listen streams and the legacy sessions' standalone
// streams. The in-memory feed serves one process; a shared broker behind
// this interface (package store/redis) serves many replicas.
//
// Subscribers are callbacks: a subscriber with a goroutine of its own
// reads a channel made by Events.
type Feed interface {
	// Publish delivers e to every current subscriber, once per e.Key
	// when that is set.
	Publish(ctx context.Context, e Event) error
	// Subscribe calls deliver with every event published from now on,
	// until ctx is done or deliver returns false. Calls are sequential and
	// in publication order, on the publisher's goroutine (or the feed's
	// own): deliver must return quickly and must not call the feed. A feed
	// that ends the subscription itself says so with a last event of kind
	// SubscriptionLost.
	Subscribe(ctx context.Context, deliver func(Event) bool) error
	// Since returns the events published after the one with the id after
	// ("" for the oldest the feed keeps), oldest first, at most max of
	// them. complete is false when the feed no longer keeps every event
	// published after that one (it keeps a bounded number): the caller
	// missed changes and must say so to whoever it serves.
	Since(ctx context.Context, after string, max int) (events []Event, complete bool, err error)
	// Last returns the id of the newest event published, or "" when there
	// is none.
	Last(ctx context.Context) (string, error)
}

// MemoryFeed is an in-process Feed. It keeps the last 1,024 events for
// Since, and the keys of the last minute's events (at most 4,096) for
// de-duplication.
type MemoryFeed struct {
	mu     sync.Mutex
	subs   map[*memorySub]struct{}
	seq    uint64
	recent []Event // the last keep events, oldest first
	keys   map[string]time.Time
	now    func() time.Time
}

// Bounds of a MemoryFeed.
const (
	memoryKeep        = 1024
	memoryKeys        = 4096
	memoryDedupWindow = time.Minute
)

type memorySub struct {
	deliver func(Event) bool
}

// NewMemoryFeed returns a Feed that fans events out within this process.
func NewMemoryFeed() *MemoryFeed {
	return &MemoryFeed{subs: make(map[*memorySub]struct{}), keys: make(map[string]time.Time), now: time.Now}
}

// MemoryID returns the id a MemoryFeed gives its n-th event (n from 1):
// fixed-width hexadecimal, so that ids compare as their order.
func MemoryID(n uint64) string { return fmt.Sprintf("%016x", n) }

// Publish delivers e to every subscriber, in the calling goroutine. An
// event whose Key was published within the last minute is dropped.
func (f *MemoryFeed) Publish(ctx context.Context, e Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.Key != "" {
		now := f.now()
		if t, ok := f.keys[e.Key]; ok && now.Sub(t) < memoryDedupWindow {
			return nil
		}
		if len(f.keys) >= memoryKeys {
			for k, t := range f.keys {
				if now.Sub(t) >= memoryDedupWindow {
					delete(f.keys, k)
				}
			}
			if len(f.keys) >= memoryKeys {
				// Full of recent keys: forget one; at worst a change is
				// announced twice.
				for k := range f.keys {
					delete(f.keys, k)
					break
				}
			}
		}
		f.keys[e.Key] = now
	}
	f.seq++
	e.ID = MemoryID(f.seq)
	f.recent = append(f.recent, e)
	if len(f.recent) > memoryKeep {
		f.recent = append(f.recent[:0:0], f.recent[len(f.recent)-memoryKeep:]...)
	}
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

// Since returns the kept events after the one with the id after.
func (f *MemoryFeed) Since(ctx context.Context, after string, max int) ([]Event, bool, error) {
	var n uint64
	if after != "" {
		var err error
		if n, err = strconv.ParseUint(after, 16, 64); err != nil {
			return nil, false, fmt.Errorf("feed: malformed event id %q", after)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	oldest := f.seq - uint64(len(f.recent)) + 1 // the first kept event's number
	complete := n+1 >= oldest || f.seq == 0
	var out []Event
	for _, e := range f.recent {
		if len(out) >= max {
			break
		}
		if m, _ := strconv.ParseUint(e.ID, 16, 64); m > n {
			out = append(out, e)
		}
	}
	return out, complete, nil
}

// Last returns the id of the newest event.
func (f *MemoryFeed) Last(ctx context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seq == 0 {
		return "", nil
	}
	return MemoryID(f.seq), nil
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
