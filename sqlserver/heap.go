package sqlserver

import (
	"sync"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's heap limit is one per process (sqlite3_hard_heap_limit64). Each
// open SQLite DB holds a share: the limit is the largest MaxMemory among
// them, and the limit the process had before the first one is restored
// when the last one closes.
//
// The limit needs SQLite's memory accounting, which modernc.org/sqlite
// builds off (SQLITE_DEFAULT_MEMSTATUS=0) and which can be turned on only
// before SQLite is initialized, that is before the process opens its first
// SQLite connection: Open does it first thing. A program that used SQLite
// before its first Open gets no heap limit, and a warning.
var memstatus struct {
	once sync.Once
	ok   bool
}

// enableMemstatus turns SQLite's memory accounting on, if it still can,
// and reports whether the heap limit is enforced.
func enableMemstatus() bool {
	memstatus.once.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		va := libc.NewVaList(int32(1))
		if va == 0 {
			return
		}
		defer libc.Xfree(tls, va)
		memstatus.ok = sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MEMSTATUS, va) == sqlite3.SQLITE_OK
	})
	return memstatus.ok
}

var heapLimits struct {
	mu     sync.Mutex
	held   map[*DB]int64
	before int64
}

func holdHeapLimit(d *DB, limit int64) {
	heapLimits.mu.Lock()
	defer heapLimits.mu.Unlock()
	if heapLimits.held == nil {
		heapLimits.held = map[*DB]int64{}
	}
	if len(heapLimits.held) == 0 {
		heapLimits.before = setHeapLimit(-1)
	}
	heapLimits.held[d] = limit
	applyHeapLimitLocked()
}

func releaseHeapLimit(d *DB) {
	heapLimits.mu.Lock()
	defer heapLimits.mu.Unlock()
	delete(heapLimits.held, d)
	if len(heapLimits.held) == 0 {
		setHeapLimit(heapLimits.before)
		return
	}
	applyHeapLimitLocked()
}

func applyHeapLimitLocked() {
	var limit int64
	for _, l := range heapLimits.held {
		limit = max(limit, l)
	}
	setHeapLimit(limit)
}

// setHeapLimit sets SQLite's hard heap limit (a negative n only reads it)
// and returns the previous one. The soft limit, at which SQLite starts to
// give back cache memory, is set to three quarters of it.
func setHeapLimit(n int64) int64 {
	tls := libc.NewTLS()
	defer tls.Close()
	old := sqlite3.Xsqlite3_hard_heap_limit64(tls, n)
	if n >= 0 {
		sqlite3.Xsqlite3_soft_heap_limit64(tls, n/4*3)
	}
	return old
}
