package tasks

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Store keeps task records: the truth about every task, which tasks/get
// reads. A record is written before the CreateTaskResult that names it is
// sent, and every change of status is written before it is reported.
// MemoryStore keeps them in the process; SQLiteStore keeps them in a file,
// across restarts. Implementations must be safe for concurrent use.
//
// A store shared by several processes (replicas) makes every task
// readable from each of them; a task's handler, though, runs in the
// process that created it. A tasks/update or tasks/cancel that reaches
// another process is forwarded to it through the server's Feed when that
// is shared (not a MemoryFeed), and applied there. Marking the tasks of a dead process failed, as
// SQLiteStore does when opened, is then the store's to decide per
// process, not on every open.
type Store interface {
	// Create records a new task. It fails with ErrFull when the store
	// holds as many unexpired tasks as it may.
	Create(ctx context.Context, r *Record) error
	// Get returns the task id, or ErrNotFound when there is none or it
	// expired (CreatedAt+TTL has passed). The record is the caller's.
	Get(ctx context.Context, id string) (*Record, error)
	// Update changes the task id atomically: f gets a copy of the record
	// and changes it; the store writes it and returns it. When f returns
	// an error nothing is written and Update returns that error
	// (ErrUnchanged says there is nothing to do). It fails with
	// ErrNotFound as Get does.
	Update(ctx context.Context, id string, f func(*Record) error) (*Record, error)
	// Sweep deletes the tasks that expired before now and returns how
	// many.
	Sweep(ctx context.Context, now time.Time) (int, error)
}

// Errors of a Store.
var (
	// ErrNotFound is returned for a task that does not exist or expired.
	ErrNotFound = errors.New("tasks: task not found")
	// ErrFull is returned by Create when the store holds its most tasks.
	ErrFull = errors.New("tasks: too many tasks")
	// ErrUnchanged, returned by an Update function, leaves the record as
	// it is.
	ErrUnchanged = errors.New("tasks: unchanged")
)

// MemoryStore is a Store in the process's memory: at most Max unexpired
// tasks (0 means 10,000), each forgotten when its TTL ends. Records do not
// survive the process.
type MemoryStore struct {
	// Max bounds the tasks held at once.
	Max int

	mu      sync.Mutex
	tasks   map[string]*Record
	sweepAt int
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

const defaultMemoryMax = 10_000

// Create implements Store.
func (m *MemoryStore) Create(ctx context.Context, r *Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks == nil {
		m.tasks = make(map[string]*Record)
	}
	max := m.Max
	if max <= 0 {
		max = defaultMemoryMax
	}
	if len(m.tasks) >= max || len(m.tasks) >= m.sweepAt {
		m.sweepLocked(time.Now())
		m.sweepAt = 2*len(m.tasks) + 256
		if len(m.tasks) >= max {
			return ErrFull
		}
	}
	if _, dup := m.tasks[r.ID]; dup {
		return errors.New("tasks: duplicate task id")
	}
	m.tasks[r.ID] = r.clone()
	return nil
}

// Get implements Store.
func (m *MemoryStore) Get(ctx context.Context, id string) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.tasks[id]
	if !ok || !time.Now().Before(r.Expires()) {
		return nil, ErrNotFound
	}
	return r.clone(), nil
}

// Update implements Store.
func (m *MemoryStore) Update(ctx context.Context, id string, f func(*Record) error) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.tasks[id]
	if !ok || !time.Now().Before(r.Expires()) {
		return nil, ErrNotFound
	}
	c := r.clone()
	if err := f(c); err != nil {
		return nil, err
	}
	c.ID = id
	m.tasks[id] = c
	return c.clone(), nil
}

// Sweep implements Store.
func (m *MemoryStore) Sweep(ctx context.Context, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sweepLocked(now), nil
}

func (m *MemoryStore) sweepLocked(now time.Time) int {
	n := 0
	for id, r := range m.tasks {
		if !now.Before(r.Expires()) {
			delete(m.tasks, id)
			n++
		}
	}
	return n
}

// Len returns how many tasks are held, expired ones included until they
// are swept.
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tasks)
}
