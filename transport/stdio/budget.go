package stdio

import "sync/atomic"

// DefaultMaxPendingBytes is the default of Options.MaxPendingBytes: 32 MiB,
// twice the largest message by default.
const DefaultMaxPendingBytes = 32 << 20

// Budget bounds the bytes held by one connection, or by several: the
// messages read and not yet answered and the responses not yet written.
// A budget with a parent counts what it holds against the parent too, so
// that a handler serving many connections (an HTTP+SSE endpoint's
// streams) bounds each of them and all of them together. It is safe for
// concurrent use.
type Budget struct {
	limit  int64
	parent *Budget

	used atomic.Int64
}

// NewBudget returns a budget of limit bytes (at least 1), within parent's
// when parent is not nil.
func NewBudget(limit int64, parent *Budget) *Budget {
	return &Budget{limit: max(limit, 1), parent: parent}
}

// Take reserves n bytes if neither this budget nor a parent would pass its
// limit, and reports whether it did. A refusal takes nothing (while a
// parent refuses, what this budget reserved for a moment may also turn
// away a concurrent Take: a bound is never passed).
func (b *Budget) Take(n int64) bool {
	if n < 0 {
		return false
	}
	for {
		used := b.used.Load()
		if used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			break
		}
	}
	if b.parent != nil && !b.parent.Take(n) {
		b.used.Add(-n)
		return false
	}
	return true
}

// Full reports whether taking n more bytes would pass this budget's own
// limit (not a parent's).
func (b *Budget) Full(n int64) bool {
	return b.used.Load()+n > b.limit
}

// Release returns n bytes taken with Take.
func (b *Budget) Release(n int64) {
	if n <= 0 {
		return
	}
	b.used.Add(-n)
	if b.parent != nil {
		b.parent.Release(n)
	}
}

// Used returns the bytes taken and not yet released.
func (b *Budget) Used() int64 {
	return b.used.Load()
}

// charge counts n bytes that are held already, such as a response a
// handler returned, whatever the limit: they are released once written,
// and until then further requests are refused.
func (b *Budget) charge(n int64) {
	if n <= 0 {
		return
	}
	b.used.Add(n)
	if b.parent != nil {
		b.parent.charge(n)
	}
}
