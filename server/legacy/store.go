package legacy

import (
	"context"
	"errors"
	"sync"

	"github.com/mcpkit/mcpkit/protocol"
)

// SessionRecord is a session apart from its live connections: what another
// replica needs to go on serving it.
type SessionRecord struct {
	ID            string
	Version       string
	Capabilities  *protocol.ClientCapabilities
	ClientInfo    *protocol.Implementation
	Initialized   bool
	LogLevel      protocol.LoggingLevel
	Subscriptions []string
	// Principal is the caller that opened the session; "" when unknown.
	Principal string
}

// ErrNoSession is returned by SessionStore.Load for an unknown session.
var ErrNoSession = errors.New("legacy: no such session")

// SessionStore keeps session records, so that replicas behind one endpoint
// can share sessions: a replica that has not seen a session loads its
// record. The default, NewMemoryStore, serves one process. Requests waiting
// for a client's answer and the standalone stream stay with the replica
// that holds the connection.
type SessionStore interface {
	Save(ctx context.Context, rec *SessionRecord) error
	Load(ctx context.Context, id string) (*SessionRecord, error)
	Delete(ctx context.Context, id string) error
}

// MemoryStore is an in-process SessionStore.
type MemoryStore struct {
	mu   sync.Mutex
	recs map[string]SessionRecord
}

// NewMemoryStore returns an empty in-process store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{recs: map[string]SessionRecord{}} }

// Save stores a copy of rec.
func (m *MemoryStore) Save(ctx context.Context, rec *SessionRecord) error {
	r := *rec
	r.Subscriptions = append([]string(nil), rec.Subscriptions...)
	m.mu.Lock()
	m.recs[rec.ID] = r
	m.mu.Unlock()
	return nil
}

// Load returns a copy of the record, or ErrNoSession.
func (m *MemoryStore) Load(ctx context.Context, id string) (*SessionRecord, error) {
	m.mu.Lock()
	r, ok := m.recs[id]
	m.mu.Unlock()
	if !ok {
		return nil, ErrNoSession
	}
	r.Subscriptions = append([]string(nil), r.Subscriptions...)
	return &r, nil
}

// Delete forgets the record.
func (m *MemoryStore) Delete(ctx context.Context, id string) error {
	m.mu.Lock()
	delete(m.recs, id)
	m.mu.Unlock()
	return nil
}

// Len returns the number of records.
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// record returns the session's record.
func (s *Session) record() *SessionRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := &SessionRecord{ID: s.id, Version: s.version, Capabilities: s.caps, ClientInfo: s.info, Initialized: s.initialized, LogLevel: s.logLevel, Principal: s.principal}
	for u := range s.subs {
		rec.Subscriptions = append(rec.Subscriptions, u)
	}
	return rec
}

// save writes the session's record to the store, unless the session has
// ended (a late save must not bring a deleted record back).
func (s *Session) save() {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	if err := s.a.store.Save(context.Background(), s.record()); err != nil {
		s.a.logger.Warn("saving session", "session", s.id, "err", err)
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
	s.initialized = rec.Initialized
	s.logLevel = rec.LogLevel
	for _, u := range rec.Subscriptions {
		s.subs[u] = true
	}
	return s
}
