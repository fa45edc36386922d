package stdio

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// Serving on the reader. The reader of Serve's input serves a request
// itself, as the floor of a line protocol does, when a worker's turn is
// free: no hand-off to another goroutine, and the answers of the requests
// read in one go are written with one system call, once the input read is
// used up (outbox.hold, flushHeld). A request served this way still counts
// against MaxConcurrent, and is registered for cancellation like any
// other.
//
// The input must go on being read while a request runs (its cancellation,
// the client's answer to a request the server sent, other requests), so
// the reader hands reading on to a new goroutine, and goes on serving the
// request as a worker would, when the request runs longer than inlineFor
// (at least; see startWatch) or sends the client anything (a progress
// notification, a request of its own). After a hand-off, or a request
// that took longer than inlineSlow (one that waits on a database, say, is
// better served side by side with the next ones than before them), the
// next requests go to workers: 64, twice as many after each slow one in a
// row, up to 4,096, and 64 again once one is fast. A connection whose requests are slow does not wait
// inlineFor for each, nor serve them one after the other, and tries the
// reader again ever more rarely — unless its client sends one request at
// a time: a request that comes with nothing else in flight and no input
// behind it, after aloneRun such requests in a row, is served by the
// reader however slow the last ones were (there is nothing to serve side
// by side with it, and a worker would only add a hand-off).
//
// Batches and the messages of a MessageReader always go to workers.

const (
	inlineFor  = time.Millisecond
	inlineSlow = 100 * time.Microsecond
	minBackoff = 64
	aloneRun   = 4
	maxBackoff = 4096
)

// clockStart is the origin of the reader's timing of what it serves.
var clockStart = time.Now()

// flushing stands for the reader's writing of what it held, in c.inline:
// a peer that does not read blocks that write, and the input goes on
// being read all the same.
var flushing = &call{}

// errHandedOn ends a reader's loop once another goroutine reads.
var errHandedOn = errors.New("stdio: reading handed on")

// reading runs read, the reading loop, on the goroutine that reads, and
// reports how it ended unless it handed reading on.
func (c *conn) reading(read func() error) {
	err := func() (err error) {
		defer func() {
			// A fault of mcpkit's own reading code ends the connection
			// with an error, not the process.
			if p := recover(); p != nil {
				c.logger.Error("stdio: panic reading input", "panic", p, "stack", string(debug.Stack()))
				err = fmt.Errorf("stdio: internal error reading input: %v", p)
			}
		}()
		return read()
	}()
	if err == errHandedOn {
		return
	}
	c.endRead.Do(func() {
		c.readErr <- err
		close(c.readerDone)
	})
}

// startWatch starts the goroutine that hands reading on when a request
// served by the reader (or the reader's write) runs longer than inlineFor;
// stop ends it. The watch ticks every inlineFor while the reader serves
// and sleeps once it finds the reader idle (the reader wakes it, begin):
// no timer is set per request. What the reader serves at two ticks in a
// row, without having started anything else in between, has run at least
// inlineFor.
func (c *conn) startWatch() (stop func()) {
	c.watch = time.NewTimer(time.Hour)
	c.watch.Stop()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var last uint64
		for {
			select {
			case <-c.watch.C:
			case <-quit:
				return
			}
			c.rmu.Lock()
			busy, started := c.inline != nil, c.started
			if !busy {
				c.watching = false
			}
			c.rmu.Unlock()
			if !busy {
				continue
			}
			if started == last {
				c.handOn(nil)
			}
			last = started
			c.watch.Reset(inlineFor)
		}
	}()
	return func() {
		close(quit)
		<-done
		c.watch.Stop()
	}
}

// begin marks what the reader now serves itself (a request, or flushing);
// c.rmu is held. It reports whether the watch must be woken.
func (c *conn) begin(what *call) (wake bool) {
	c.inline = what
	c.started++
	if !c.watching {
		c.watching = true
		return true
	}
	return false
}

// serveInline reports whether the reader serves cl itself (serveNext, once
// the line it came in is done with): when a worker's turn is free, and no
// hand-off or slow request happened lately — or the client sends one
// request at a time: cl and the aloneRun requests before it each came
// when nothing else was in flight, and no input waits (side by side with
// nothing, a worker would only add a hand-off, and the reader would only
// wait for input).
func (c *conn) serveInline(cl *call, alone bool) bool {
	if alone {
		c.alone++
	} else {
		c.alone = 0
	}
	if c.inlineOff.Load() > 0 {
		if c.alone <= aloneRun || c.lines.Buffered() > 0 {
			c.inlineOff.Add(-1)
			return false
		}
	}
	if !c.work.claim() {
		return false
	}
	cl.inline = true
	c.next = cl
	return true
}

// serveNext serves the request the reader took for itself, if any, and
// reports whether reading was handed on meanwhile: then the caller no
// longer reads.
func (c *conn) serveNext() (handedOn bool) {
	cl := c.next
	if cl == nil {
		return false
	}
	c.next = nil
	c.rmu.Lock()
	wake := c.begin(cl)
	c.rmu.Unlock()
	if wake {
		c.watch.Reset(inlineFor)
	}
	start := time.Since(clockStart) // the monotonic clock only
	c.serve(cl)
	slow := time.Since(clockStart)-start > inlineSlow
	c.rmu.Lock()
	handedOn = c.inline != cl
	if !handedOn {
		c.inline = nil
	}
	if cl.held {
		// Its turn lasts until its response is written: by whoever
		// reads now, before it waits for input (flushHeld).
		c.heldTurns++
	}
	c.rmu.Unlock()
	if !cl.held {
		c.work.release()
	}
	switch {
	case !slow:
		c.backoff.Store(minBackoff)
	case !handedOn: // handOn backed off already
		// Requests that wait (on a database, say) are better served
		// side by side by workers than one after the other by the reader.
		c.backOff()
	}
	return handedOn
}

// handOn starts a new reader when the reader serves a request (only, when
// not nil): the request's goroutine no longer reads.
func (c *conn) handOn(only *call) {
	c.rmu.Lock()
	cl := c.inline
	if cl == nil || (only != nil && cl != only) {
		c.rmu.Unlock()
		return
	}
	c.inline = nil
	c.rmu.Unlock()
	if cl != flushing {
		// A slow request: the next ones go to workers for a while. A
		// slow write needs no such thing: what the next reader holds
		// is written by the blocked writer once it can go on.
		c.backOff()
	}
	ctx := c.readCtx
	go c.reading(func() error { return c.readOn(ctx) })
}

// flushHeld writes what the reader held, before it waits for input, and
// reports whether reading was handed on meanwhile: the write took longer
// than inlineFor (a peer that does not read what it is sent).
func (c *conn) flushHeld() (handedOn bool, err error) {
	c.rmu.Lock()
	turns := c.heldTurns
	if turns == 0 && !c.out.holds() {
		c.rmu.Unlock()
		return false, nil
	}
	c.heldTurns = 0
	wake := c.begin(flushing)
	c.rmu.Unlock()
	if wake {
		c.watch.Reset(inlineFor)
	}
	err = c.out.writeAll()
	for range turns {
		c.work.release()
	}
	c.rmu.Lock()
	handedOn = c.inline != flushing
	if !handedOn {
		c.inline = nil
	}
	c.rmu.Unlock()
	return handedOn, err
}

// backOff sends the next requests to workers, twice as many as last time
// (minBackoff to maxBackoff).
func (c *conn) backOff() {
	n := c.backoff.Load()
	if n < minBackoff {
		n = minBackoff
	}
	c.inlineOff.Store(n)
	c.backoff.Store(min(2*n, maxBackoff))
}

// send queues a response: held for the reader to write with the others
// of its input when the reader serves cl and still reads, else written.
func (c *conn) send(cl *call, b []byte) {
	if cl.inline {
		c.rmu.Lock()
		if c.inline == cl {
			cl.held = c.out.hold(b) == nil
			c.rmu.Unlock()
			return
		}
		c.rmu.Unlock()
	}
	c.write(b)
}
