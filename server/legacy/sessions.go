package legacy

import (
	"context"
	"crypto/rand"
	"sort"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Session returns the open session with the id, for the request of ctx.
// It fails with transport.ErrNoSession when none is open, and with the
// refusal of another principal (marked protocol.ErrForbidden) when the
// session was opened by a principal other than the request's; that
// lookup does not count as a use of the session. It implements
// transport.Legacy.
func (a *Adapter) Session(ctx context.Context, id string) (transport.Session, error) {
	a.mu.Lock()
	s, ok := a.sessions[id]
	a.mu.Unlock()
	if !ok {
		// Opened on another replica, perhaps.
		rec, err := a.store.Load(ctx, id)
		if err != nil {
			return nil, transport.ErrNoSession
		}
		s = a.restore(rec)
		if a.add(s) != nil {
			return nil, transport.ErrNoSession
		}
		a.startBG.Do(a.background)
		ok = true
	}
	select {
	case <-s.done:
		// Closed, and about to leave the map.
		return nil, transport.ErrNoSession
	default:
	}
	if s.expired(time.Now()) {
		if ok {
			s.Close()
		}
		return nil, transport.ErrNoSession
	}
	if a.principal(ctx) != s.principal {
		return nil, errOtherPrincipal
	}
	s.touch()
	return s, nil
}

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

// Sessions returns the number of open sessions.
func (a *Adapter) Sessions() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sessions)
}

// errTooManySessions refuses a session when MaxSessions are open and none
// can make room; over HTTP it is a 503 with Retry-After.
var errTooManySessions = protocol.Mark(protocol.InternalError("too many open sessions; try again later"), protocol.ErrUnavailable)

func (a *Adapter) add(s *Session) error {
	for attempt := 0; ; attempt++ {
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			return protocol.InternalError("server is shutting down")
		}
		if len(a.sessions) < a.opts.MaxSessions {
			a.sessions[s.id] = s
			a.mu.Unlock()
			return nil
		}
		var victims []*Session
		if attempt == 0 {
			victims = a.unusedLocked()
		}
		a.mu.Unlock()
		if len(victims) == 0 {
			return errTooManySessions
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
		if err := a.store.Delete(context.Background(), s.id); err != nil {
			a.logger.Warn("deleting session", "session", s.id, "err", err)
		}
	}
	a.mu.Lock()
	if a.sessions[s.id] == s {
		delete(a.sessions, s.id)
	}
	a.mu.Unlock()
	a.elicitMu.Lock()
	for _, id := range s.elicitations {
		a.dropElicitationLocked(id, s)
	}
	s.elicitations = nil
	a.elicitMu.Unlock()
}

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
