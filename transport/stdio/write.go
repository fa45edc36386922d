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

// maxKeptBatch is the largest batch buffer the outbox keeps for the next
// batch. A peer that sends many requests at once gets its answers in
// batches of hundreds of kilobytes; letting each go to the collector made
// the runtime allocate, clear and return them to the system (madvise) per
// batch, a fifth of the CPU of pipelined calls in BenchmarkStdio. Two
// buffers of at most this much stay with a connection.
const maxKeptBatch = 1 << 20

// outbox is what a connection writes: messages are queued, in the order
// they are given, and written in batches, whatever is queued with one
// system call, as the floor of a line protocol does when it flushes only
// once its input is drained. Whoever queues a message while nothing is
// being written writes (the batch then, and whatever is queued meanwhile);
// the others queue and go on, never waiting for the peer. The bytes queued
// count against the connection's budget until written, so a peer that
// stops reading makes new requests refused, not kept, and once more than
// a quarter of the budget's limit is queued (1 MiB at least) the reader
// waits for room (waitRoom): a peer that reads nothing is not read from
// either.
type outbox struct {
	out    io.Writer
	budget *Budget
	limit  int64 // queued bytes beyond which the reader waits

	mu      sync.Mutex
	pending []byte // lines not yet written
	spare   []byte // the last written batch's buffer, for reuse
	err     error  // the first write error: nothing is written after it
	writing bool   // someone writes; what is queued meanwhile is theirs to write
	closed  bool
	room    chan struct{} // closed when a batch is written (made when someone waits for it)
	idle    chan struct{} // closed when writing stops (made when someone waits for it)
}

func newOutbox(out io.Writer, budget *Budget) *outbox {
	return &outbox{out: out, budget: budget, limit: max(budget.limit/4, 1<<20)}
}

// put queues msg as one line and, unless someone is writing, writes what
// is queued. It fails once a write failed.
func (o *outbox) put(msg []byte) error {
	if err := o.queue(msg); err != nil {
		return err
	}
	if o.writing {
		o.mu.Unlock()
		return nil
	}
	o.writing = true
	o.mu.Unlock()
	return o.drain(true)
}

// hold queues msg as one line without writing it: the reader, which holds
// it, writes what is queued before it waits for input (writeAll, from
// conn.flushHeld), as the floor of a line protocol flushes once its input
// is drained. Only the goroutine that reads the input may hold.
func (o *outbox) hold(msg []byte) error {
	if err := o.queue(msg); err != nil {
		return err
	}
	o.mu.Unlock()
	return nil
}

// writeAll returns once what is queued has been written (or writing
// failed): it waits for whoever writes, then writes what is left.
func (o *outbox) writeAll() error {
	o.mu.Lock()
	for o.writing {
		idle := o.idleChan()
		o.mu.Unlock()
		<-idle
		o.mu.Lock()
	}
	if len(o.pending) == 0 || o.err != nil || o.closed {
		err := o.err
		o.mu.Unlock()
		return err
	}
	o.writing = true
	o.mu.Unlock()
	return o.drain(false)
}

// holds reports whether anything is queued and nobody writes it.
func (o *outbox) holds() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.writing && len(o.pending) > 0 && o.err == nil && !o.closed
}

// queue appends msg and its line end to what is pending, and returns with
// o.mu held, unless it fails.
func (o *outbox) queue(msg []byte) error {
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
	return nil
}

// drain writes what is queued, batch after batch, until nothing is; the
// caller set writing. With yield, it first lets the workers that are about
// to answer queue their lines.
func (o *outbox) drain(yield bool) error {
	for first := true; ; first = false {
		if first && yield {
			// Let the workers that are about to answer queue their lines
			// first: more answers per system call.
			runtime.Gosched()
		}
		o.mu.Lock()
		batch := o.pending
		if len(batch) == 0 || o.err != nil {
			err := o.err
			o.writing = false
			if o.idle != nil {
				close(o.idle)
				o.idle = nil
			}
			o.mu.Unlock()
			return err
		}
		o.pending = o.spare[:0]
		o.spare = nil
		o.mu.Unlock()
		_, err := o.out.Write(batch)
		o.budget.Release(int64(len(batch)))
		o.mu.Lock()
		if err != nil && o.err == nil {
			o.err = fmt.Errorf("stdio: writing: %w", err)
			o.budget.Release(int64(len(o.pending)))
			o.pending = nil
		}
		if cap(batch) <= maxKeptBatch {
			o.spare = batch[:0]
		}
		if o.room != nil {
			close(o.room)
			o.room = nil
		}
		o.mu.Unlock()
	}
}

// waitRoom waits, for as long as ctx allows, while more than the limit is
// queued and can still be written.
func (o *outbox) waitRoom(ctx context.Context) error {
	for {
		o.mu.Lock()
		if int64(len(o.pending)) <= o.limit || o.err != nil {
			o.mu.Unlock()
			return nil
		}
		if o.room == nil {
			o.room = make(chan struct{})
		}
		room := o.room
		if !o.writing && !o.closed {
			// What the reader held is written now, not when it next
			// waits for input; by another goroutine, so that the reader
			// stays interruptible (close waits for it).
			o.writing = true
			go func() { _ = o.drain(false) }()
		}
		o.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close waits for what is queued to be written and refuses more.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	for o.writing {
		idle := o.idleChan()
		o.mu.Unlock()
		<-idle
		o.mu.Lock()
	}
	if len(o.pending) > 0 && o.err == nil {
		o.writing = true
		o.mu.Unlock()
		_ = o.drain(false)
		return
	}
	o.mu.Unlock()
}

// idleChan returns the channel closed when writing stops; o.mu is held.
func (o *outbox) idleChan() chan struct{} {
	if o.idle == nil {
		o.idle = make(chan struct{})
	}
	return o.idle
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
