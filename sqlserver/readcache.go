package sqlserver

import (
	"context"
	"sync"
)

// readCache keeps what reads of the catalog compute — the schema
// overview, a table's description with its row count and sample rows —
// until change detection sees the data or the schema change (or fails to
// look), so that reading them again costs the database nothing. Without
// change detection (a negative PollInterval) nothing is kept. Concurrent
// misses of one key share one computation.
type readCache struct {
	on bool

	mu      sync.Mutex
	gen     uint64
	entries map[string]*cacheEntry
	misses  int // computations started (for tests)
}

type cacheEntry struct {
	gen  uint64
	done chan struct{} // closed when v and err are set
	v    any
	err  error
}

// readCacheMax bounds the entries kept: past it, the cache starts over.
const readCacheMax = 1024

// get returns key's value, computing it with fn when not kept.
func (c *readCache) get(ctx context.Context, key string, fn func() (any, error)) (any, error) {
	if !c.on {
		return fn()
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok || (e.gen != c.gen && isDone(e)) {
		if c.entries == nil || len(c.entries) >= readCacheMax {
			c.entries = map[string]*cacheEntry{}
		}
		e = &cacheEntry{gen: c.gen, done: make(chan struct{})}
		c.entries[key] = e
		c.misses++
		c.mu.Unlock()
		e.v, e.err = fn()
		close(e.done)
		if e.err != nil {
			c.mu.Lock()
			if c.entries[key] == e {
				delete(c.entries, key)
			}
			c.mu.Unlock()
		}
		return e.v, e.err
	}
	c.mu.Unlock()
	select {
	case <-e.done:
		return e.v, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func isDone(e *cacheEntry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// forget drops everything kept: the data or the schema changed.
func (c *readCache) forget() {
	c.mu.Lock()
	c.gen++
	c.entries = nil
	c.mu.Unlock()
}
