package legacy

import (
	"context"
	"sync"
)

// BusKind is the kind of a BusMessage.
type BusKind int

// What replicas tell each other about a session.
const (
	// BusAnswer carries the client's answer (Message, a JSON-RPC
	// response) to a request the addressed replica sent it and waits for.
	BusAnswer BusKind = iota + 1
	// BusCancel carries notifications/cancelled (Message) for a request of
	// the session, to whichever replica serves it.
	BusCancel
	// BusEnded says the session ended (DELETE, or its end on the replica
	// that sent it): every replica ends its copy, cancelling its requests
	// and closing its standalone stream.
	BusEnded
	// BusWake says the session's outbox has a message: the replica whose
	// client follows the standalone stream takes it.
	BusWake
)

// BusMessage is one message between the replicas serving a session.
type BusMessage struct {
	Kind    BusKind
	Session string
	// Message is the JSON-RPC message of BusAnswer and BusCancel.
	Message []byte
}

// Bus carries messages between the replicas that serve the same sessions
// (share a SessionStore): a client's answer reaches the replica that sent
// the request it answers, a cancellation the replica that serves the
// request, the end of a session every replica. Each replica has an id
// (Adapter.Replica), which the ids of the requests it sends to clients
// carry. Delivery is best-effort: a message lost while a replica is
// unreachable costs an answer (the request times out), a cancellation (the
// request runs to its end), or a little time (a session's end is found by
// the next sweep, a message in an outbox by the next poll).
type Bus interface {
	// Send delivers m to the replica named to, or to every replica when
	// to is "".
	Send(ctx context.Context, to string, m BusMessage) error
	// Listen delivers to deliver, one at a time, the messages sent to the
	// replica self or to every replica, until ctx is done. It returns once
	// listening; deliver must return quickly. A bus that stops delivering
	// by itself (its connection lost) calls lost once, and the adapter
	// listens again.
	Listen(ctx context.Context, self string, deliver func(BusMessage), lost func()) error
}

// MemoryBus is the in-process Bus: it connects the adapters of one process
// that share a MemoryStore (replicas in a test). Each adapter without a Bus
// of its own gets one for itself, which needs no delivery at all.
type MemoryBus struct {
	mu        sync.Mutex
	listeners map[*memListener]struct{}
}

type memListener struct {
	self    string
	mu      sync.Mutex // serializes deliveries
	deliver func(BusMessage)
}

// NewMemoryBus returns an in-process bus.
func NewMemoryBus() *MemoryBus { return &MemoryBus{listeners: map[*memListener]struct{}{}} }

// Send delivers m, in the calling goroutine, to the listeners it is for.
func (b *MemoryBus) Send(ctx context.Context, to string, m BusMessage) error {
	b.mu.Lock()
	var targets []*memListener
	for l := range b.listeners {
		if to == "" || l.self == to {
			targets = append(targets, l)
		}
	}
	b.mu.Unlock()
	for _, l := range targets {
		l.mu.Lock()
		l.deliver(m)
		l.mu.Unlock()
	}
	return nil
}

// Listen registers deliver until ctx is done; a MemoryBus never loses it.
func (b *MemoryBus) Listen(ctx context.Context, self string, deliver func(BusMessage), lost func()) error {
	l := &memListener{self: self, deliver: deliver}
	b.mu.Lock()
	b.listeners[l] = struct{}{}
	b.mu.Unlock()
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		delete(b.listeners, l)
		b.mu.Unlock()
	})
	return nil
}
