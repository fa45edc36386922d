package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// respBufs recycles the buffers responses are encoded into; buffers that
// grew past maxPooledResponse are left to the collector.
var respBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledResponse = 64 << 10

// outbox is what a connection writes: messages are queued, in the order
// they are given, and one goroutine writes whatever is queued with one
// system call, as the floor of a line protocol does when it flushes only
// once its input is drained. A handler never waits for the peer to read;
// the bytes queued count against the connection's budget until written,
// so a peer that stops reading makes new requests refused, not kept, and
// once more than a quarter of the budget's limit is queued (1 MiB at
// least) the reader waits for room (waitRoom): a peer that reads nothing
// is not read from either.
type outbox struct {
	out    io.Writer
	budget *Budget
	limit  int64 // queued bytes beyond which the reader waits

	mu      sync.Mutex
	pending []byte // lines not yet written
	spare   []byte // the last written batch's buffer, for reuse
	err     error  // the first write error: nothing is written after it
	closed  bool
	wake    chan struct{} // capacity 1: the writer has something to do
	room    chan struct{} // closed and replaced when a batch is written
	done    chan struct{} // closed when the writer has ended
}

func newOutbox(out io.Writer, budget *Budget) *outbox {
	o := &outbox{out: out, budget: budget, limit: max(budget.limit/4, 1<<20), wake: make(chan struct{}, 1), room: make(chan struct{}), done: make(chan struct{})}
	go o.run()
	return o
}

// put queues msg as one line. It fails once a write failed.
func (o *outbox) put(msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 {
		// encoding/json never emits raw newlines, but a handler may hand
		// over indented JSON. Between tokens a newline is white space that
		// Compact drops; inside a string (invalid JSON) escape it.
		var buf bytes.Buffer
		if json.Compact(&buf, msg) == nil {
			msg = buf.Bytes()
		} else {
			msg = bytes.ReplaceAll(msg, []byte("\n"), []byte(`\n`))
		}
	}
	o.mu.Lock()
	if o.err != nil || o.closed {
		err := o.err
		o.mu.Unlock()
		if err == nil {
			err = errWriterClosed
		}
		return err
	}
	o.pending = append(o.pending, msg...)
	o.pending = append(o.pending, '\n')
	o.budget.charge(int64(len(msg) + 1))
	o.signalLocked()
	o.mu.Unlock()
	return nil
}

// signalLocked wakes the writer, unless it is already to wake.
func (o *outbox) signalLocked() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// run writes what is queued until the outbox is closed and drained, or a
// write fails.
func (o *outbox) run() {
	defer close(o.done)
	for range o.wake {
		for {
			// Let the workers that are about to answer add their lines
			// first: more answers per system call.
			runtime.Gosched()
			o.mu.Lock()
			batch := o.pending
			o.pending = o.spare[:0]
			o.spare = nil
			closed := o.closed
			o.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			_, err := o.out.Write(batch)
			o.budget.Release(int64(len(batch)))
			o.mu.Lock()
			if err != nil && o.err == nil {
				o.err = fmt.Errorf("stdio: writing: %w", err)
			}
			if cap(batch) <= maxPooledResponse {
				o.spare = batch[:0]
			}
			close(o.room)
			o.room = make(chan struct{})
			failed := o.err != nil
			if failed {
				o.budget.Release(int64(len(o.pending)))
				o.pending = nil
			}
			o.mu.Unlock()
			if failed {
				return
			}
		}
	}
}

// waitRoom waits, for as long as ctx allows, while more than the limit is
// queued and the writer can still write it.
func (o *outbox) waitRoom(ctx context.Context) error {
	for {
		o.mu.Lock()
		full := int64(len(o.pending)) > o.limit && o.err == nil && !o.closed
		room := o.room
		o.mu.Unlock()
		if !full {
			return nil
		}
		select {
		case <-room:
		case <-o.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close writes what is queued, stops the writer and waits for it.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.signalLocked()
	o.mu.Unlock()
	<-o.done
}

// error returns the first write error, if any.
func (o *outbox) error() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

var errWriterClosed = fmt.Errorf("stdio: the connection's output is closed")

// write queues one message as a line.
func (c *conn) write(msg []byte) error { return c.out.put(msg) }

// flush writes what is queued and stops writing.
func (c *conn) flush() { c.out.close() }

func (c *conn) writeErr() error { return c.out.error() }
