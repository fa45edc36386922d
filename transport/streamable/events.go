package streamable

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// EventStore keeps the events of legacy sessions' SSE streams (revisions
// 2025-03-26 to 2025-11-25: a request's response stream, and the
// session's standalone GET stream), so that a client that lost a stream
// resumes it with Last-Event-ID. Options.Events sets it; the default,
// NewMemoryEventStore, keeps them with the session on this process. Event
// ids are the store's own and opaque to the handler: a store that replicas
// share lets a stream be resumed on any of them.
type EventStore interface {
	// Open starts a stream of the session: its standalone stream when
	// standalone is set, a request's response stream otherwise.
	Open(ctx context.Context, sess transport.Session, standalone bool) (EventStream, error)
	// Resume returns the stream of the session that the event id belongs
	// to. It fails with ErrUnknownEvent when the session has no such
	// stream (never had, or no longer keeps it).
	Resume(ctx context.Context, sess transport.Session, eventID string) (EventStream, error)
}

// EventStream is one SSE stream's events, in order.
type EventStream interface {
	// Start is the id of the stream's priming event: resuming from it
	// replays every event the stream keeps.
	Start() string
	// Standalone reports whether this is the session's standalone stream.
	Standalone() bool
	// Append records data as the stream's next event and returns its id;
	// last marks the stream's final event (a request's response).
	Append(ctx context.Context, data []byte, last bool) (id string, err error)
	// End ends the stream without a final event (a request answered with
	// nothing, for instance).
	End(ctx context.Context) error
	// Next returns the events after the one with the id after (Start()
	// for all those kept), waiting, for as long as ctx allows, until there
	// is one or the stream has ended; ended reports that no event follows
	// those returned.
	Next(ctx context.Context, after string) (events []Event, ended bool, err error)
}

// Event is one event of an EventStream.
type Event struct {
	ID   string
	Data []byte // one JSON-RPC message
}

// ErrUnknownEvent is returned by EventStore.Resume for an event id that
// names no stream the store keeps for the session.
var ErrUnknownEvent = errors.New("streamable: no such event stream")

// appendTimeout bounds recording a message that has left a session's
// outbox, which the client leaving does not cut short.
const appendTimeout = 10 * time.Second

// Bounds of the memory event store, per session.
const (
	maxStreamsPerSession = 32
	maxEventsPerStream   = 256
)

// NewMemoryEventStore returns the default EventStore: each session's
// streams are kept with the session (transport.Session.Attachment) and
// released with it. A session keeps its last 32 streams (the standalone
// one kept longest) and each stream its last 256 events; a client that
// resumes after older events gets what is left.
func NewMemoryEventStore() EventStore { return memoryEvents{} }

type memoryEvents struct{}

func (memoryEvents) Open(ctx context.Context, sess transport.Session, standalone bool) (EventStream, error) {
	return logOf(sess).open(standalone), nil
}

func (memoryEvents) Resume(ctx context.Context, sess transport.Session, eventID string) (EventStream, error) {
	stream, _, ok := parseEventID(eventID)
	if !ok {
		return nil, ErrUnknownEvent
	}
	l := logOf(sess)
	l.mu.Lock()
	defer l.mu.Unlock()
	es, ok := l.streams[stream]
	if !ok {
		return nil, ErrUnknownEvent
	}
	return es, nil
}

// eventLog is one session's streams.
type eventLog struct {
	mu      sync.Mutex
	next    int
	streams map[int]*memoryStream
	order   []int
}

func logOf(sess transport.Session) *eventLog {
	return sess.Attachment(func() any { return &eventLog{streams: map[int]*memoryStream{}} }).(*eventLog)
}

func (l *eventLog) open(standalone bool) *memoryStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	es := &memoryStream{id: l.next, standalone: standalone, wake: make(chan struct{})}
	l.streams[es.id] = es
	l.order = append(l.order, es.id)
	if len(l.order) > maxStreamsPerSession {
		// Evict the oldest request stream; standalone streams, which a
		// client resumes after a dropped GET, go only when nothing else is
		// left.
		i := 0
		for i < len(l.order)-1 && l.streams[l.order[i]].standalone {
			i++
		}
		if i == len(l.order)-1 {
			i = 0
		}
		delete(l.streams, l.order[i])
		l.order = append(l.order[:i], l.order[i+1:]...)
	}
	return es
}

// memoryStream is one stream's events: "<stream>-<seq>" ids, seq 0 the
// priming event's.
type memoryStream struct {
	id         int
	standalone bool
	mu         sync.Mutex
	seq        int
	events     []Event
	seqs       []int // of events
	ended      bool
	wake       chan struct{} // closed and replaced on every change
}

func (es *memoryStream) Start() string { return es.eventID(0) }

func (es *memoryStream) Standalone() bool { return es.standalone }

func (es *memoryStream) eventID(seq int) string {
	return strconv.Itoa(es.id) + "-" + strconv.Itoa(seq)
}

// parseEventID splits an id "<stream>-<seq>".
func parseEventID(id string) (stream, seq int, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	return s, n, err1 == nil && err2 == nil && n >= 0
}

func (es *memoryStream) Append(ctx context.Context, data []byte, last bool) (string, error) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.ended {
		return "", errStreamClosed
	}
	es.seq++
	id := es.eventID(es.seq)
	es.events = append(es.events, Event{ID: id, Data: data})
	es.seqs = append(es.seqs, es.seq)
	if len(es.events) > maxEventsPerStream {
		es.events, es.seqs = es.events[1:], es.seqs[1:]
	}
	es.ended = last
	es.wakeLocked()
	return id, nil
}

func (es *memoryStream) End(ctx context.Context) error {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.ended = true
	es.wakeLocked()
	return nil
}

func (es *memoryStream) wakeLocked() {
	close(es.wake)
	es.wake = make(chan struct{})
}

func (es *memoryStream) Next(ctx context.Context, after string) ([]Event, bool, error) {
	stream, seq, ok := parseEventID(after)
	if !ok || stream != es.id {
		return nil, false, ErrUnknownEvent
	}
	for {
		es.mu.Lock()
		var out []Event
		for i, s := range es.seqs {
			if s > seq {
				out = es.events[i:len(es.events):len(es.events)]
				break
			}
		}
		ended, wake := es.ended, es.wake
		es.mu.Unlock()
		if len(out) > 0 || ended {
			return out, ended, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}
