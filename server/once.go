package server

import (
	"context"
	"errors"
	"sync"
	"time"
)

// OnceStore remembers which single-use requestStates (Request.SingleUse)
// have been presented, so that each is accepted at most once. The in-memory
// default serves one process; replicas that share a state key share a
// OnceStore too, or a state one replica accepted could be replayed on
// another.
type OnceStore interface {
	// Use records id as used until expires, after which the state it names
	// is refused as expired anyway. It reports true the first time an id is
	// used and false every later time. An error refuses the state.
	Use(ctx context.Context, id string, expires time.Time) (bool, error)
}

// ErrOnceStoreFull is returned by a MemoryOnceStore holding its maximum of
// unexpired ids: forgetting one would let its state be replayed, so a new
// single-use state is refused instead.
var ErrOnceStoreFull = errors.New("server: too many single-use states in flight")

// MemoryOnceStore is the in-memory OnceStore: ids are kept until they
// expire, at most Max unexpired ones (0 means 100,000). Expired ids are
// swept whenever the set has doubled since the last sweep.
type MemoryOnceStore struct {
	// Max bounds the unexpired ids held at once.
	Max int

	mu      sync.Mutex
	used    map[string]time.Time
	sweepAt int
	now     func() time.Time
}

// NewMemoryOnceStore returns an empty MemoryOnceStore.
func NewMemoryOnceStore() *MemoryOnceStore { return &MemoryOnceStore{} }

const defaultOnceMax = 100_000

// Use implements OnceStore.
func (m *MemoryOnceStore) Use(ctx context.Context, id string, expires time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now
	if m.now != nil {
		now = m.now
	}
	t := now()
	if m.used == nil {
		m.used = make(map[string]time.Time)
	}
	if exp, ok := m.used[id]; ok && t.Before(exp) {
		return false, nil
	}
	max := m.Max
	if max <= 0 {
		max = defaultOnceMax
	}
	if len(m.used) >= max || len(m.used) >= m.sweepAt {
		for k, exp := range m.used {
			if !t.Before(exp) {
				delete(m.used, k)
			}
		}
		m.sweepAt = 2*len(m.used) + 1024
		if len(m.used) >= max {
			return false, ErrOnceStoreFull
		}
	}
	m.used[id] = expires
	return true, nil
}

// Len returns how many ids are held, expired ones included until the next
// sweep.
func (m *MemoryOnceStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.used)
}
