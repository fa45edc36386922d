package legacy

import (
	"context"
	"crypto/rand"
	"errors"
	"sort"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Session returns the open session with the id, for the request of ctx.
// It reads the session's record from the store, marking it used (one
// round trip to a shared store): a session another replica opened is
// served here, with the state its record holds now. It fails with
// transport.ErrNoSession when the store has no such session, with an
// error marked protocol.ErrUnavailable when the store fails, and with the
// refusal of another principal (marked protocol.ErrForbidden) when the
// session was opened by a principal other than the request's; that
// lookup does not count as a use of the session. It implements
// transport.Legacy.
func (a *Adapter) Session(ctx context.Context, id string) (transport.Session, error) {
	if id == "" || len(id) > maxSessionIDLen {
		return nil, transport.ErrNoSession
	}
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s != nil && a.principal(ctx) != s.principal {
		return nil, errOtherPrincipal
	}
	rec, err := a.store.Touch(ctx, id)
	if errors.Is(err, ErrNoSession) {
		if s != nil {
			s.end(false) // ended or expired elsewhere
		}
		return nil, transport.ErrNoSession
	}
	if err != nil {
		a.logger.Warn("legacy: reading a session record", "session", id, "err", err)
		return nil, errStoreUnavailable
	}
	if rec.Principal != a.principal(ctx) {
		return nil, errOtherPrincipal
	}
	if s == nil {
		// Opened on another replica, or let go here.
		if s, err = a.add(a.restore(rec)); err != nil {
			return nil, err
		}
		a.startBG.Do(a.background)
	} else {
		s.adopt(rec)
	}
	select {
	case <-s.done:
		// Closed meanwhile.
		return nil, transport.ErrNoSession
	default:
	}
	s.touch()
	return s, nil
}

// maxSessionIDLen bounds the session ids looked up: newSessionID makes 48
// characters.
const maxSessionIDLen = 128

// own returns the open session of this adapter that sess is, or nil: the
// session a transport hands back is looked up, never converted.
func (a *Adapter) own(sess transport.Session) *Session {
	if sess == nil {
		return nil
	}
	a.mu.Lock()
	s := a.sessions[sess.ID()]
	a.mu.Unlock()
	if s == nil || transport.Session(s) != sess {
		return nil
	}
	return s
}

// local returns this replica's copy of the session id, or nil.
func (a *Adapter) local(id string) *Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// Sessions returns the number of sessions this replica has a copy of.
func (a *Adapter) Sessions() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sessions)
}

// errTooManySessions refuses a session when MaxSessions are open and none
// can make room; over HTTP it is a 503 with Retry-After.
var errTooManySessions = protocol.Mark(protocol.InternalError("too many open sessions; try again later"), protocol.ErrUnavailable)

// add makes s one of this replica's sessions and returns it. A copy of
// the same session made meanwhile by another request wins: that one is
// returned instead.
func (a *Adapter) add(s *Session) (*Session, error) {
	for attempt := 0; ; attempt++ {
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			return nil, protocol.Mark(protocol.InternalError("server is shutting down"), protocol.ErrUnavailable)
		}
		if other := a.sessions[s.id]; other != nil {
			a.mu.Unlock()
			return other, nil
		}
		if len(a.sessions) < a.opts.MaxSessions {
			a.sessions[s.id] = s
			a.mu.Unlock()
			return s, nil
		}
		var victims []*Session
		if attempt == 0 {
			victims = a.unusedLocked()
		}
		a.mu.Unlock()
		if len(victims) == 0 {
			return nil, errTooManySessions
		}
		for _, v := range victims {
			v.Close()
		}
	}
}

// unusedLocked picks the sessions to end to make room: those that saw no
// request after initialize and are not busy, the longest idle first, a
// hundredth of MaxSessions (at least one) at a time. A client that opens
// sessions and does nothing with them cannot lock others out.
func (a *Adapter) unusedLocked() []*Session {
	var unused []*Session
	for _, s := range a.sessions {
		if !s.used.Load() && !s.busy() {
			unused = append(unused, s)
		}
	}
	sort.Slice(unused, func(i, j int) bool { return unused[i].lastUsed.Load() < unused[j].lastUsed.Load() })
	return unused[:min(len(unused), max(1, a.opts.MaxSessions/100))]
}

func (a *Adapter) remove(s *Session, forget bool) {
	// The record goes first: once the session has left the map, Session
	// would restore it from a record still in the store.
	if forget {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if err := a.store.Delete(ctx, s.id); err != nil {
			a.logger.Warn("deleting session", "session", s.id, "err", err)
		}
		cancel()
	}
	a.mu.Lock()
	if a.sessions[s.id] == s {
		delete(a.sessions, s.id)
	}
	a.mu.Unlock()
}

// storeTimeout bounds the store operations the adapter makes on its own
// (not for a request, whose context bounds them).
const storeTimeout = 10 * time.Second

func newSessionID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(b)*2)
	for _, c := range b {
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}
