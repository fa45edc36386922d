package sqlserver

import (
	"context"
	"errors"
	"time"
)

// interruptGrace is how long past its deadline a statement is given to
// notice that it was interrupted before its call is answered anyway.
const interruptGrace = 500 * time.Millisecond

// errClosed is returned for calls made after Close.
var errClosed = errors.New("sqlserver: the database is closed")

// acquire takes one of the places in slots (d.slots: MaxConcurrent),
// waiting at most QueueTimeout for one.
func (d *DB) acquire(ctx context.Context, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(d.opts.QueueTimeout)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-d.closing:
		return errClosed
	case <-t.C:
		if slots != d.slots {
			return &limitError{"the ask prompt's data profile is busy: an earlier statement of it is still running; try again shortly"}
		}
		return &limitError{busyMessage(d.opts.MaxConcurrent, d.opts.QueueTimeout)}
	}
}

// enter counts a statement in, unless Close has begun.
func (d *DB) enter() bool {
	d.runMu.Lock()
	defer d.runMu.Unlock()
	if d.closed {
		return false
	}
	d.running.Add(1)
	return true
}

// drain refuses new statements and waits for the running ones to end.
func (d *DB) drain() {
	d.runMu.Lock()
	d.closed = true
	d.runMu.Unlock()
	close(d.closing)
	d.running.Wait()
}

// statement runs fn under the server's limits: it takes one of
// MaxConcurrent places, gives fn Options.StatementTimeout, and answers by
// that deadline (and interruptGrace) even when fn does not return.
// Cancellation interrupts a statement between its steps (sqlite3_interrupt,
// a PostgreSQL cancel request), but one SQLite step — a function over a
// long string — can run on for long after it: such a statement is left to
// end on a goroutine the DB owns, keeps its place until it ends (so that
// runaway statements cannot pile up), and Close waits for it. Where the
// dialect ends every statement within interruptGrace of its cancellation
// (PostgreSQL, endsOnCancel), fn runs on the caller's goroutine: no
// goroutine, no hand-off per call.
func (d *DB) statement(ctx context.Context, fn func(ctx context.Context) error) error {
	return d.statementIn(ctx, d.slots, fn)
}

// statementIn is statement taking its place in slots.
func (d *DB) statementIn(ctx context.Context, slots chan struct{}, fn func(ctx context.Context) error) error {
	ctx, err := d.withIdentity(ctx)
	if err != nil {
		return err
	}
	if !d.enter() {
		return errClosed
	}
	if err := d.acquire(ctx, slots); err != nil {
		d.running.Done()
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, d.opts.StatementTimeout)
	defer cancel()
	if d.dialect.endsOnCancel() {
		defer d.running.Done()
		defer func() { <-slots }()
		return d.dbError(sctx, fn(sctx))
	}
	done := make(chan error, 1)
	started := time.Now()
	go func() {
		defer d.running.Done()
		defer func() { <-slots }()
		err := fn(sctx)
		if over := time.Since(started) - d.opts.StatementTimeout; over > interruptGrace {
			d.opts.Logger.Warn("sqlserver: a statement ended long after its deadline; it held its place until then",
				"over", over.Round(time.Millisecond))
		}
		done <- err
	}()
	select {
	case err := <-done:
		return d.dbError(sctx, err)
	case <-sctx.Done():
	}
	t := time.NewTimer(interruptGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return d.dbError(sctx, err)
	case <-t.C:
		return d.dbError(sctx, sctx.Err())
	}
}
