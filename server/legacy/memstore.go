package legacy

import (
	"context"
	"slices"
	"sync"
	"time"
)

// MemoryStore is the in-process SessionStore, for one replica (or replicas
// in one process, in tests). Expired records are dropped as they are met
// and whenever the store has doubled since its last sweep.
type MemoryStore struct {
	// MaxOutbox bounds the messages a session's outbox holds while no
	// client reads them; the oldest are dropped beyond it. 0 means 256.
	MaxOutbox int

	mu      sync.Mutex
	recs    map[string]*memRecord
	elicit  map[string][]string // elicitationId → sessions
	sweepAt int
	now     func() time.Time
}

type memRecord struct {
	rec     SessionRecord
	ttl     time.Duration
	outbox  [][]byte
	elicits []string // oldest first
}

// NewMemoryStore returns an empty in-process store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{recs: map[string]*memRecord{}, elicit: map[string][]string{}, now: time.Now}
}

func copyRecord(r *SessionRecord) *SessionRecord {
	c := *r
	c.Subscriptions = slices.Clone(r.Subscriptions)
	return &c
}

// liveLocked returns the unexpired record of id, dropping an expired one.
func (m *MemoryStore) liveLocked(id string) *memRecord {
	r, ok := m.recs[id]
	if !ok {
		return nil
	}
	if m.now().Sub(r.rec.LastUsed) > r.ttl {
		m.deleteLocked(id)
		return nil
	}
	return r
}

func (m *MemoryStore) deleteLocked(id string) {
	r, ok := m.recs[id]
	if !ok {
		return
	}
	delete(m.recs, id)
	for _, e := range r.elicits {
		m.dropElicitLocked(e, id)
	}
}

func (m *MemoryStore) dropElicitLocked(e, id string) {
	list := slices.DeleteFunc(m.elicit[e], func(x string) bool { return x == id })
	if len(list) == 0 {
		delete(m.elicit, e)
	} else {
		m.elicit[e] = list
	}
}

// Create stores a copy of rec.
func (m *MemoryStore) Create(ctx context.Context, rec *SessionRecord, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.recs) >= m.sweepAt {
		for id := range m.recs {
			m.liveLocked(id)
		}
		m.sweepAt = 2*len(m.recs) + 1024
	}
	c := copyRecord(rec)
	c.LastUsed = m.now()
	rec.LastUsed = c.LastUsed
	m.recs[rec.ID] = &memRecord{rec: *c, ttl: ttl}
	return nil
}

// Touch returns a copy of the record, marked used now.
func (m *MemoryStore) Touch(ctx context.Context, id string) (*SessionRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.liveLocked(id)
	if r == nil {
		return nil, ErrNoSession
	}
	r.rec.LastUsed = m.now()
	return copyRecord(&r.rec), nil
}

// Update writes rec's state if the record is still at rec.Generation.
func (m *MemoryStore) Update(ctx context.Context, rec *SessionRecord, start bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.liveLocked(rec.ID)
	if r == nil {
		return ErrNoSession
	}
	if r.rec.Generation != rec.Generation {
		return ErrConflict
	}
	r.rec.Generation++
	r.rec.Initialized = rec.Initialized
	r.rec.LogLevel = rec.LogLevel
	r.rec.Subscriptions = slices.Clone(rec.Subscriptions)
	if start {
		r.rec.Cursor = rec.Cursor
	}
	rec.Generation = r.rec.Generation
	return nil
}

// Delete forgets the record.
func (m *MemoryStore) Delete(ctx context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(id)
	return nil
}

// Refresh reports which records exist, marking them used with touch.
func (m *MemoryStore) Refresh(ctx context.Context, ids []string, touch bool) ([]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]bool, len(ids))
	for i, id := range ids {
		if r := m.liveLocked(id); r != nil {
			out[i] = true
			if touch {
				r.rec.LastUsed = m.now()
			}
		}
	}
	return out, nil
}

func (m *MemoryStore) pushLocked(r *memRecord, msg []byte) {
	max := m.MaxOutbox
	if max <= 0 {
		max = 256
	}
	if len(r.outbox) >= max {
		r.outbox = r.outbox[1:]
	}
	r.outbox = append(r.outbox, msg)
}

// Apply applies c to the sessions of ids.
func (m *MemoryStore) Apply(ctx context.Context, c Change, ids []string) ([]Applied, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Applied, len(ids))
	for i, id := range ids {
		r := m.liveLocked(id)
		switch {
		case r == nil || !r.rec.Initialized:
		case r.rec.Cursor >= c.ID:
			out[i] = Stale
		default:
			r.rec.Cursor = c.ID
			if c.URI == "" || slices.Contains(r.rec.Subscriptions, c.URI) {
				m.pushLocked(r, c.Message)
				out[i] = Queued
			}
		}
	}
	return out, nil
}

// Push queues msg in the session's outbox.
func (m *MemoryStore) Push(ctx context.Context, id string, msg []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.liveLocked(id)
	if r == nil {
		return ErrNoSession
	}
	m.pushLocked(r, msg)
	return nil
}

// Pop takes the oldest message of the session's outbox.
func (m *MemoryStore) Pop(ctx context.Context, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.liveLocked(id)
	if r == nil || len(r.outbox) == 0 {
		return nil, nil
	}
	msg := r.outbox[0]
	r.outbox = r.outbox[1:]
	return msg, nil
}

// AddElicitation records that the session was sent elicitationID.
func (m *MemoryStore) AddElicitation(ctx context.Context, id, elicitationID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.liveLocked(id)
	if r == nil {
		return ErrNoSession
	}
	if slices.Contains(r.elicits, elicitationID) {
		return nil
	}
	if len(r.elicits) >= MaxElicitations {
		m.dropElicitLocked(r.elicits[0], id)
		r.elicits = r.elicits[1:]
	}
	r.elicits = append(r.elicits, elicitationID)
	m.elicit[elicitationID] = append(m.elicit[elicitationID], id)
	return nil
}

// TakeElicitation returns and forgets the sessions sent elicitationID.
func (m *MemoryStore) TakeElicitation(ctx context.Context, elicitationID string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := m.elicit[elicitationID]
	delete(m.elicit, elicitationID)
	var live []string
	for _, id := range ids {
		if r := m.liveLocked(id); r != nil {
			r.elicits = slices.DeleteFunc(r.elicits, func(e string) bool { return e == elicitationID })
			live = append(live, id)
		}
	}
	return live, nil
}

// ForgetElicitation forgets elicitationID for the session.
func (m *MemoryStore) ForgetElicitation(ctx context.Context, id, elicitationID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.liveLocked(id)
	if r == nil || !slices.Contains(r.elicits, elicitationID) {
		return false, nil
	}
	r.elicits = slices.DeleteFunc(r.elicits, func(e string) bool { return e == elicitationID })
	m.dropElicitLocked(elicitationID, id)
	return true, nil
}

// HasElicitation reports whether the session was sent elicitationID.
func (m *MemoryStore) HasElicitation(ctx context.Context, id, elicitationID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.liveLocked(id)
	return r != nil && slices.Contains(r.elicits, elicitationID), nil
}

// Len returns the number of records, expired ones not yet dropped
// included.
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// Outbox returns a copy of the messages queued for the session, oldest
// first (for tests and diagnostics).
func (m *MemoryStore) Outbox(id string) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.recs[id]; r != nil {
		return slices.Clone(r.outbox)
	}
	return nil
}
