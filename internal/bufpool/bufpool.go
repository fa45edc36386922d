// Package bufpool recycles the byte buffers that answers are encoded into,
// for the transports, which write an answer before they let go of its
// buffer.
package bufpool

import "sync"

// maxKept is the largest buffer put back: bigger ones are left to the
// collector, so that one large answer does not stay in the pool.
const maxKept = 64 << 10

var pool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Get returns a buffer; append to (*b)[:0] and store what grew in *b.
func Get() *[]byte { return pool.Get().(*[]byte) }

// Put gives b back, unless it grew past maxKept.
func Put(b *[]byte) {
	if cap(*b) <= maxKept {
		*b = (*b)[:0]
		pool.Put(b)
	}
}
