package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The ask prompt describes each table with its row count and a profile of
// its data, which takes scans of the tables: too much to do on every call.
// askCache keeps the descriptions until change detection (watch.go) sees
// the table's data or the schema change, or askTTL passes, and computes
// them at most once at a time: concurrent callers share one computation,
// which runs on a goroutine the DB owns (a caller that gives up does not
// stop it for the others) with a place of its own, askSlot, outside the
// MaxConcurrent places of queries, so that plain queries are never queued
// behind it. Its cost is bounded: row counts stop at profileMaxRows
// ("at least N rows"; PostgreSQL uses the planner's estimate above it),
// only tables within that count are profiled, and profiling stops when the
// computation's budget (twice the statement timeout) is spent, leaving the
// remaining tables described without a profile.

const askTTL = 5 * time.Minute

// askCache is the ask prompt's descriptions of tables.
type askCache struct {
	mu      sync.Mutex
	epoch   uint64     // advanced by every forget
	list    []tableRef // the tables as last listed; nil when unknown
	listAt  time.Time
	entries map[string]askEntry
	run     *askRun // the computation in progress, if any

	slot chan struct{} // the computation's place, outside MaxConcurrent

	computations atomic.Int64 // computations started
	waiting      atomic.Int64 // callers waiting for one
	// hook, when set (tests), runs in each computation's first statement.
	hook func()
}

type askEntry struct {
	info *tableInfo // never changed once cached: callers share it
	at   time.Time
}

// askRun is one computation: for every table (all) or for names.
type askRun struct {
	done  chan struct{} // closed when the fields below are set
	all   bool
	names map[string]bool
	list  []tableRef
	infos map[string]*tableInfo
	err   error
}

func newAskCache() *askCache {
	return &askCache{entries: map[string]askEntry{}, slot: make(chan struct{}, 1)}
}

// forget drops the descriptions of the named tables, or of every table
// and the table list.
func (c *askCache) forget(all bool, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	if all {
		c.list = nil
		clear(c.entries)
		return
	}
	for _, n := range names {
		delete(c.entries, n)
	}
}

// errUnknownTable names a table the ask prompt was asked for that the
// database does not have (or the role may not read).
type errUnknownTable struct {
	name  string
	known []tableRef
}

func (e *errUnknownTable) Error() string {
	return fmt.Sprintf("unknown table %q (known tables: %s)", e.name, strings.Join(tableNames(e.known), ", "))
}

// pick returns the descriptions of names (every table when empty) from
// list and infos, in the order asked (or listed); ok is false when a name
// is missing from infos but in list, or when list is nil.
func pick(list []tableRef, infos func(string) (*tableInfo, bool), names []string) ([]*tableInfo, bool, error) {
	if list == nil {
		return nil, false, nil
	}
	if len(names) == 0 {
		names = tableNames(list)
	}
	out := make([]*tableInfo, 0, len(names))
	for _, n := range names {
		known := false
		for _, t := range list {
			if t.Name == n {
				known = true
				break
			}
		}
		if !known {
			return nil, true, &errUnknownTable{n, list}
		}
		info, ok := infos(n)
		if !ok {
			return nil, false, nil
		}
		out = append(out, info)
	}
	return out, true, nil
}

// fresh answers from the cache; c.mu must be held.
func (c *askCache) fresh(names []string, now time.Time) ([]*tableInfo, bool, error) {
	if c.list == nil || now.Sub(c.listAt) > askTTL {
		return nil, false, nil
	}
	out, ok, err := pick(c.list, func(n string) (*tableInfo, bool) {
		e, ok := c.entries[n]
		return e.info, ok && now.Sub(e.at) <= askTTL
	}, names)
	var unknown *errUnknownTable
	if errors.As(err, &unknown) {
		// The list may be older than the table: list again.
		return nil, false, nil
	}
	return out, ok, err
}

// answer answers from a finished run, when it covered names.
func (r *askRun) answer(names []string) ([]*tableInfo, bool, error) {
	if r.err != nil {
		return nil, true, r.err
	}
	if !r.all {
		if len(names) == 0 {
			return nil, false, nil
		}
		for _, n := range names {
			if !r.names[n] {
				return nil, false, nil
			}
		}
	}
	return pick(r.list, func(n string) (*tableInfo, bool) {
		info, ok := r.infos[n]
		return info, ok
	}, names)
}

// askTables returns the ask prompt's descriptions of the named tables
// (every table when none is named), with row counts and profiles.
func (d *DB) askTables(ctx context.Context, names []string) ([]*tableInfo, error) {
	c := d.ask
	for {
		c.mu.Lock()
		if out, ok, err := c.fresh(names, time.Now()); ok {
			c.mu.Unlock()
			return out, err
		}
		r := c.run
		if r == nil {
			if !d.enter() {
				c.mu.Unlock()
				return nil, errClosed
			}
			r = &askRun{done: make(chan struct{}), all: len(names) == 0, names: map[string]bool{}}
			for _, n := range names {
				r.names[n] = true
			}
			c.run = r
			c.computations.Add(1)
			go d.computeAsk(r, c.epoch)
		}
		c.mu.Unlock()
		c.waiting.Add(1)
		select {
		case <-r.done:
		case <-ctx.Done():
			c.waiting.Add(-1)
			return nil, ctx.Err()
		}
		c.waiting.Add(-1)
		if out, ok, err := r.answer(names); ok {
			return out, err
		}
		// It was computing other tables: the cache may hold these now, or
		// another computation is needed.
	}
}

// readAside runs fn in a read-only scope in the ask cache's own place.
func (d *DB) readAside(ctx context.Context, fn func(ctx context.Context, q querier) error) error {
	return d.statementIn(ctx, d.ask.slot, func(ctx context.Context) error {
		q, end, err := d.dialect.begin(ctx, d.ro)
		if err != nil {
			return err
		}
		defer end()
		return fn(ctx, q)
	})
}

// computeAsk is one computation, counted in d.running by askTables and
// ended by Close through d.life.
func (d *DB) computeAsk(r *askRun, epoch uint64) {
	defer d.running.Done()
	c := d.ask
	ctx, cancel := context.WithTimeout(d.life, 2*d.opts.StatementTimeout)
	defer cancel()
	r.infos = map[string]*tableInfo{}
	var todo []tableRef
	r.err = d.readAside(ctx, func(ctx context.Context, q querier) error {
		if c.hook != nil {
			c.hook()
		}
		var err error
		if r.list, err = d.dialect.listTables(ctx, q); err != nil {
			return err
		}
		if r.list == nil {
			r.list = []tableRef{}
		}
		now := time.Now()
		c.mu.Lock()
		for _, t := range r.list {
			if !r.all && !r.names[t.Name] {
				continue
			}
			if e, ok := c.entries[t.Name]; ok && now.Sub(e.at) <= askTTL && e.info.Kind == t.Kind {
				r.infos[t.Name] = e.info
			} else {
				todo = append(todo, t)
			}
		}
		c.mu.Unlock()
		for _, t := range todo {
			info, err := d.dialect.describe(ctx, q, t)
			if err != nil {
				return err
			}
			if t.Kind == "table" {
				if err := d.askCount(ctx, q, t, info); err != nil {
					return err
				}
			}
			r.infos[t.Name] = info
		}
		return nil
	})
	if r.err == nil {
		for _, t := range todo {
			info := r.infos[t.Name]
			// A table whose profile fails (or is not reached within the
			// budget) is described without one.
			_ = d.readAside(ctx, func(ctx context.Context, q querier) error { return d.profile(ctx, q, info) })
		}
	} else if errors.Is(r.err, errClosed) || d.life.Err() != nil {
		r.err = errClosed
	}
	c.mu.Lock()
	if r.err == nil && c.epoch == epoch {
		now := time.Now()
		c.list, c.listAt = r.list, now
		for _, t := range todo {
			c.entries[t.Name] = askEntry{info: r.infos[t.Name], at: now}
		}
	}
	c.run = nil
	c.mu.Unlock()
	close(r.done)
}

// askCount sets info's row count at a bounded cost: the planner's estimate
// where it says the table is large (PostgreSQL), else a count that stops
// after profileMaxRows rows.
func (d *DB) askCount(ctx context.Context, q querier, t tableRef, info *tableInfo) error {
	est, ok, err := d.dialect.estimateRows(ctx, q, t)
	if err != nil {
		return err
	}
	if ok && est > profileMaxRows {
		n := int64(est)
		info.RowCount, info.RowCountEstimated = &n, true
		return nil
	}
	var n int64
	if err := scanOne(ctx, q, fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %d) AS c", t.ident(), profileMaxRows+1), nil, &n); err != nil {
		return err
	}
	if n > profileMaxRows {
		n, info.rowCountAtLeast = profileMaxRows, true
	}
	info.RowCount = &n
	return nil
}
