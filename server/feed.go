package server

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
)

// Event is one change published to a Feed.
type Event struct {
	Kind EventKind
	// URI is the updated resource, for ResourceUpdated.
	URI string
}

// Feed carries change events from the server (or any replica) to the
// subscriptions/listen streams. The in-memory feed serves one process; a
// shared broker behind this interface serves many replicas.
type Feed interface {
	// Publish delivers e to every current subscriber.
	Publish(ctx context.Context, e Event) error
	// Subscribe registers a subscriber until ctx is done. Events arrive on
	// the returned channel, which is closed when the subscription ends:
	// when ctx is done, or when the subscriber falls too far behind (the
	// listen stream then ends and the client reconnects).
	Subscribe(ctx context.Context) (<-chan Event, error)
}

// MemoryFeed is an in-process Feed.
type MemoryFeed struct {
	mu     sync.Mutex
	subs   map[*memorySub]struct{}
	buffer int
}

type memorySub struct {
	ch chan Event
}

// NewMemoryFeed returns a Feed that fans events out within this process.
func NewMemoryFeed() *MemoryFeed {
	return &MemoryFeed{subs: make(map[*memorySub]struct{}), buffer: 64}
}

// Publish delivers e to every subscriber; a subscriber whose buffer is full
// is dropped (its channel closed) rather than blocking the publisher.
func (f *MemoryFeed) Publish(ctx context.Context, e Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		select {
		case s.ch <- e:
		default:
			delete(f.subs, s)
			close(s.ch)
		}
	}
	return nil
}

// Subscribe registers a subscriber until ctx is done.
func (f *MemoryFeed) Subscribe(ctx context.Context) (<-chan Event, error) {
	s := &memorySub{ch: make(chan Event, f.buffer)}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.subs[s]; ok {
			delete(f.subs, s)
			close(s.ch)
		}
	})
	return s.ch, nil
}

// Subscribers returns the number of current subscribers.
func (f *MemoryFeed) Subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// publish sends e to the server's feed, logging a failure.
func (s *Server) publish(e Event) {
	if err := s.feed.Publish(context.Background(), e); err != nil {
		s.logger.Warn("publishing change event", "err", err)
	}
}

// NotifyToolsChanged tells listeners that the tool list changed (the
// Add/Remove methods do this themselves).
func (s *Server) NotifyToolsChanged() { s.publish(Event{Kind: ToolsListChanged}) }

// NotifyPromptsChanged tells listeners that the prompt list changed.
func (s *Server) NotifyPromptsChanged() { s.publish(Event{Kind: PromptsListChanged}) }

// NotifyResourcesChanged tells listeners that the resource list changed.
func (s *Server) NotifyResourcesChanged() { s.publish(Event{Kind: ResourcesListChanged}) }

// NotifyResourceUpdated tells listeners subscribed to uri that the
// resource changed.
func (s *Server) NotifyResourceUpdated(uri string) {
	s.publish(Event{Kind: ResourceUpdated, URI: uri})
}
