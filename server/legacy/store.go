package legacy

import (
	"context"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
)

// SessionRecord is a session apart from its live connections: what every
// replica reads to serve it. The store is its truth; a replica's copy is
// refreshed from it on every request of the session.
type SessionRecord struct {
	ID string
	// Version is the negotiated protocol revision.
	Version       string
	Capabilities  *protocol.ClientCapabilities
	ClientInfo    *protocol.Implementation
	Initialized   bool
	LogLevel      protocol.LoggingLevel
	Subscriptions []string
	// Principal is the caller that opened the session; "" when unknown.
	Principal string

	// Generation is the record's version: Update writes a record only
	// over the generation it was read at, and increments it.
	Generation int64
	// LastUsed is when the session was last used (Create, Touch, Refresh
	// with touch); the store ends the session IdleTimeout after it.
	LastUsed time.Time
	// Cursor is the id of the last change-feed event applied to the
	// session's outbox (Apply): events after it are still to be applied.
	Cursor string
}

// Errors of a SessionStore.
var (
	// ErrNoSession is returned for a session the store does not have:
	// it never existed, was deleted, or expired.
	ErrNoSession = errors.New("legacy: no such session")
	// ErrConflict is returned by Update when the record changed since it
	// was read (its Generation moved on).
	ErrConflict = errors.New("legacy: the session record changed meanwhile")
	// ErrStoreFull is returned by Create when the store holds as many
	// sessions as it may.
	ErrStoreFull = errors.New("legacy: too many open sessions")
)

// Change is a change-feed event as it concerns one session's standalone
// stream.
type Change struct {
	// ID is the feed's id of the event.
	ID string
	// URI is the resource of a resources/updated notification: the
	// message is queued only for a session subscribed to it. "" queues it
	// for every initialized session.
	URI string
	// Message is the notification to queue.
	Message []byte
}

// Applied is what Apply did with a change for one session.
type Applied int

// Outcomes of Apply.
const (
	// Skipped: the change does not concern the session (not subscribed,
	// not initialized, or no longer stored).
	Skipped Applied = iota
	// Queued: the message was queued in the session's outbox.
	Queued
	// Stale: the session's cursor was already at or past the change —
	// another replica applied it, and may have queued its message.
	Stale
)

// SessionStore keeps session records, their outboxes (the messages for
// their standalone streams) and the elicitationIds they were sent, so that
// replicas behind one endpoint serve the same sessions: every request of a
// session reads its record (Touch), every change writes it (Update), and
// the store expires a session IdleTimeout after its last use — no
// replica decides that alone. The default, NewMemoryStore, serves one
// process; package store/redis serves many.
type SessionStore interface {
	// Create stores a new record, to expire after ttl unused. It fails
	// with ErrStoreFull when the store holds its most sessions.
	Create(ctx context.Context, rec *SessionRecord, ttl time.Duration) error
	// Touch returns the record and marks it used now, which moves its
	// expiry on; ErrNoSession when there is none.
	Touch(ctx context.Context, id string) (*SessionRecord, error)
	// Update writes rec over the stored record if that is still at
	// rec.Generation (ErrConflict otherwise, ErrNoSession when gone) and
	// sets rec.Generation to the new generation. The identity of the
	// session (id, version, capabilities, client info, principal) and
	// its cursor are the store's: only Initialized, LogLevel and
	// Subscriptions are written, and Cursor when start is set (the
	// session starts following the feed from there).
	Update(ctx context.Context, rec *SessionRecord, start bool) error
	// Delete forgets the record, its outbox and its elicitationIds.
	Delete(ctx context.Context, id string) error
	// Refresh reports which of ids the store still has; with touch, those
	// it has are marked used now (a client holds them on this replica).
	Refresh(ctx context.Context, ids []string, touch bool) ([]bool, error)

	// Apply applies a change-feed event to each session of ids whose
	// cursor is before c.ID: it moves the cursor to c.ID and, when the
	// change concerns the session, queues c.Message in its outbox.
	// Events are applied in feed order, so a replica that finds the
	// cursor past an event knows another applied it.
	Apply(ctx context.Context, c Change, ids []string) ([]Applied, error)
	// Push queues msg in the session's outbox for its standalone stream
	// (dropping the oldest beyond the outbox bound); ErrNoSession when
	// the session is gone.
	Push(ctx context.Context, id string, msg []byte) error
	// Pop takes the oldest message of the session's outbox, or returns
	// nil when it is empty.
	Pop(ctx context.Context, id string) ([]byte, error)

	// AddElicitation records that the session was sent a URL elicitation
	// with elicitationID (the store keeps the last 64 per session).
	AddElicitation(ctx context.Context, id, elicitationID string) error
	// TakeElicitation returns the sessions that were sent elicitationID
	// and forgets it for all of them.
	TakeElicitation(ctx context.Context, elicitationID string) ([]string, error)
	// ForgetElicitation forgets elicitationID for the session, reporting
	// whether the session had been sent it.
	ForgetElicitation(ctx context.Context, id, elicitationID string) (bool, error)
	// HasElicitation reports whether the session was sent elicitationID
	// and was not yet told of its completion.
	HasElicitation(ctx context.Context, id, elicitationID string) (bool, error)
}

// Bounds a SessionStore keeps for each session.
const (
	// MaxElicitations is how many elicitationIds a session's record
	// remembers; the oldest is forgotten beyond it.
	MaxElicitations = 64
)

// record returns a copy of the session's record as this replica knows it.
func (s *Session) record() *SessionRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := &SessionRecord{ID: s.id, Version: s.version, Capabilities: s.caps, ClientInfo: s.info,
		Initialized: s.initialized, LogLevel: s.level(), Principal: s.principal, Generation: s.generation}
	for u := range s.subs {
		rec.Subscriptions = append(rec.Subscriptions, u)
	}
	return rec
}

// adopt takes what the record says of the session's state, unless this
// copy already knows a later generation.
func (s *Session) adopt(rec *SessionRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec.Generation < s.generation {
		return
	}
	s.generation = rec.Generation
	s.initialized = rec.Initialized
	if l := rec.LogLevel; l != s.level() {
		s.logLevel.Store(&l)
	}
	clear(s.subs)
	for _, u := range rec.Subscriptions {
		s.subs[u] = true
	}
}

// maxUpdateAttempts bounds the retries of a change that keeps meeting
// other replicas' changes of the same record.
const maxUpdateAttempts = 16

// update changes the session's record in the store: change edits a copy
// of the record, which is written if no replica changed it meanwhile (else
// read again and changed again); start also sets its cursor. The session's
// copy then takes what was written.
func (s *Session) update(ctx context.Context, change func(*SessionRecord), start bool) error {
	rec := s.record()
	for attempt := 0; ; attempt++ {
		change(rec)
		err := s.a.store.Update(ctx, rec, start)
		if err == nil {
			s.adopt(rec)
			return nil
		}
		if !errors.Is(err, ErrConflict) || attempt >= maxUpdateAttempts {
			return storeError(err)
		}
		if rec, err = s.a.store.Touch(ctx, s.id); err != nil {
			return storeError(err)
		}
		s.adopt(rec)
	}
}

// restore rebuilds a live session from a record another replica saved.
func (a *Adapter) restore(rec *SessionRecord) *Session {
	caps := rec.Capabilities
	if caps == nil {
		caps = &protocol.ClientCapabilities{}
	}
	s := a.newSession(rec.Version, caps, rec.ClientInfo)
	s.id = rec.ID
	s.principal = rec.Principal
	s.adopt(rec)
	return s
}

// errStoreUnavailable answers a request that needs the session store when
// the store fails: 503 over HTTP, with Retry-After.
var errStoreUnavailable = protocol.Mark(protocol.InternalError("the session store is unavailable; try again later"), protocol.ErrUnavailable)

// storeError is the error a request gets for the store's err: the session
// is gone (ErrNoSession), or the store is unavailable.
func storeError(err error) error {
	switch {
	case errors.Is(err, ErrNoSession):
		return errSessionClosed
	case errors.Is(err, ErrStoreFull):
		return errTooManySessions
	}
	return errStoreUnavailable
}
