package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// run is one call of a task tool: running synchronously until it is
// promoted to a task, then in the background, possibly waiting for input
// between runs of its handler.
type run struct {
	x         *Extension
	principal string
	tool      string
	next      server.ToolCallFunc
	ctx       context.Context // the handler's: the run's value, cancelled by cancel
	cancel    context.CancelFunc
	promote   chan struct{} // Promote's signal, buffered
	done      chan outcome  // the handler's outcome, buffered

	mu        sync.Mutex // serializes tasks/update and the settling of an outcome
	id        string     // "" until promoted; set once, under x.mu
	call      *server.CallRequest
	answers   map[string]json.RawMessage
	message   string    // SetStatus's latest
	lastWrite time.Time // of a status message
	executing bool      // a handler runs (false while waiting for input)

	// session is the legacy session that created the task (nil for a
	// modern client): it is sent notifications/tasks/status.
	session string

	promoted  atomic.Bool
	cancelled atomic.Bool
	released  atomic.Bool
}

type outcome struct {
	res protocol.Result
	err error
}

type runKey struct{}

func runOf(ctx context.Context) *run {
	t, _ := ctx.Value(runKey{}).(*run)
	return t
}

// Promote makes the call whose handler runs with ctx a task now, if the
// client declared the extension and it is not one yet: the client gets
// the CreateTaskResult while the handler goes on. It reports whether the
// call is (or is becoming) a task. Handlers call it once they know they
// will take long, or before asking for input that should be given to the
// task (an input request before it is answered synchronously, by MRTR).
func Promote(ctx context.Context) bool {
	t := runOf(ctx)
	if t == nil {
		return false
	}
	select {
	case t.promote <- struct{}{}:
	default:
	}
	return true
}

// TaskID returns the id of the task whose handler runs with ctx, or "" when
// the call is not (yet) a task.
func TaskID(ctx context.Context) string {
	t := runOf(ctx)
	if t == nil {
		return ""
	}
	t.x.mu.Lock()
	defer t.x.mu.Unlock()
	return t.id
}

// minStatusInterval spaces the writes of status messages of one task.
const minStatusInterval = 250 * time.Millisecond

// SetStatus sets the status message of the task whose handler runs with
// ctx (progress, for instance "12 s, 40,000 rows read"); it is what
// tasks/get and status notifications report while the task works. Writes
// are spaced at least a quarter of a second apart (the latest message
// wins). It does nothing for a call that is not a task tool's.
func SetStatus(ctx context.Context, message string) {
	t := runOf(ctx)
	if t == nil {
		return
	}
	t.mu.Lock()
	t.message = message
	id := TaskID(ctx)
	if id == "" || time.Since(t.lastWrite) < minStatusInterval {
		t.mu.Unlock()
		return
	}
	t.lastWrite = time.Now()
	t.mu.Unlock()
	rec, err := t.x.store.Update(context.WithoutCancel(ctx), id, func(r *Record) error {
		if r.Status != Working || r.StatusMessage == message {
			return ErrUnchanged
		}
		r.StatusMessage, r.UpdatedAt = message, time.Now()
		return nil
	})
	if err == nil {
		t.x.notify(rec)
	}
}

// middleware is the extension's part in every tools/call.
func (x *Extension) middleware(next server.ToolCallFunc) server.ToolCallFunc {
	return func(ctx context.Context, call *server.CallRequest) (protocol.Result, error) {
		if runOf(ctx) != nil { // a task's own run: already decided
			return next(ctx, call)
		}
		p := x.policy(call.Name)
		if call.Legacy() {
			return x.legacyCall(ctx, next, call, p)
		}
		if p.Mode == Never {
			return next(ctx, call)
		}
		if !declared(call.Request) {
			if p.Mode == Must {
				return nil, missing()
			}
			return next(ctx, call)
		}
		if !x.reserve(call.Principal) {
			if p.Mode == Must {
				return nil, errBusy
			}
			return next(ctx, call)
		}
		return x.start(ctx, next, call, p)
	}
}

// start runs call on a goroutine of its own and answers with its result
// when it ends before p.After (or before it is promoted), with a
// CreateTaskResult otherwise.
func (x *Extension) start(ctx context.Context, next server.ToolCallFunc, call *server.CallRequest, p Policy) (protocol.Result, error) {
	d, err := call.Detach(nil)
	if err != nil {
		x.releaseSlot(call.Principal)
		return nil, err
	}
	t := &run{x: x, principal: call.Principal, tool: call.Name, next: next, call: d, answers: d.Answers(),
		promote: make(chan struct{}, 1), done: make(chan outcome, 1)}
	t.ctx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	t.ctx = context.WithValue(t.ctx, runKey{}, t)
	t.executing = true
	x.wg.Add(1)
	go x.execute(t, d)
	timer := time.NewTimer(p.After)
	defer timer.Stop()
	promote := t.promote
	for {
		select {
		case o := <-t.done:
			select {
			case <-promote:
				// The handler asked to be a task and ended at once: a task
				// it is, already settled.
				t.done <- o
				if res, err := x.create(ctx, t); err == nil {
					return res, nil
				}
				<-t.done
			default:
			}
			t.cancel()
			x.release(t)
			return o.res, o.err
		case <-ctx.Done():
			// The client gave up before the call became a task.
			t.cancel()
			x.wg.Add(1)
			go func() {
				defer x.wg.Done()
				<-t.done
				x.release(t)
			}()
			return nil, ctx.Err()
		case <-timer.C:
		case <-promote:
		}
		res, err := x.create(ctx, t)
		if err == nil {
			if ctx.Err() != nil {
				// The client left before it could learn the task's id:
				// nobody can follow or cancel it.
				x.cancelRun(ctx, t, "The client cancelled the request that created the task.")
			}
			return res, nil
		}
		if p.Mode == Must {
			// Cannot be a task: stop it rather than hold the request.
			t.cancel()
			x.wg.Add(1)
			go func() {
				defer x.wg.Done()
				<-t.done
				x.release(t)
			}()
			return nil, err
		}
		// A May tool the store cannot take goes on synchronously.
		timer.Reset(time.Hour * 24 * 365)
		promote = nil
	}
}

// releaseSlot gives back a slot reserved for principal before any run.
func (x *Extension) releaseSlot(principal string) {
	x.release(&run{principal: principal})
}

// execute runs the handler once and hands its outcome to t.done.
func (x *Extension) execute(t *run, call *server.CallRequest) {
	defer x.wg.Done()
	res, err := x.guarded(t.ctx, t.next, call)
	t.done <- outcome{res, err}
}

// create records t as a task and answers with the CreateTaskResult; the
// handler goes on, and a goroutine waits for its outcome.
func (x *Extension) create(ctx context.Context, t *run) (protocol.Result, error) {
	rec, err := x.record(ctx, t, x.opts.TTL)
	if err != nil {
		return nil, err
	}
	res := &taskResult{Task: rec.wire()}
	res.ResultType = ResultTypeTask
	return res, nil
}

// record records t as a task that lives for ttl and starts the goroutine
// that waits for its outcome.
func (x *Extension) record(ctx context.Context, t *run, ttl time.Duration) (*Record, error) {
	now := time.Now()
	t.mu.Lock()
	msg := t.message
	t.mu.Unlock()
	rec := &Record{ID: newID(), Principal: t.principal, Tool: t.tool, Status: Working, StatusMessage: msg,
		CreatedAt: now, UpdatedAt: now, TTL: ttl, PollInterval: x.opts.PollInterval}
	x.sweep(ctx, now)
	if err := x.store.Create(context.WithoutCancel(ctx), rec); err != nil {
		if errors.Is(err, ErrFull) {
			return nil, errBusy
		}
		x.log.Error("tasks: recording a task", "err", err)
		return nil, storeError("recording the task", err)
	}
	x.mu.Lock()
	t.id = rec.ID
	x.runs[rec.ID] = t
	x.mu.Unlock()
	t.promoted.Store(true)
	x.wg.Add(1)
	go x.await(t, rec.Expires())
	return rec, nil
}

// await waits for the outcome of t's handler (or the end of its TTL) and
// records it.
func (x *Extension) await(t *run, expires time.Time) {
	defer x.wg.Done()
	timer := time.NewTimer(time.Until(expires))
	defer timer.Stop()
	select {
	case o := <-t.done:
		x.settle(t, o)
	case <-timer.C:
		t.cancelled.Store(true)
		t.cancel()
		<-t.done
		x.release(t) // its record expired with it
	}
}

// settle records the outcome of a run of t's handler.
func (x *Extension) settle(t *run, o outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	x.settleLocked(t, o)
}

// settleLocked is settle with t.mu held.
func (x *Extension) settleLocked(t *run, o outcome) {
	ctx := context.Background()
	now := time.Now()
	var update func(r *Record)
	parked := false
	switch res := o.res.(type) {
	case nil:
		err := o.err
		if err == nil {
			err = protocol.InternalError("the tool returned neither a result nor an error")
		}
		var pe *jsonrpc.Error
		switch {
		case t.cancelled.Load() || errors.Is(err, context.Canceled):
			update = func(r *Record) { r.Status, r.StatusMessage = Cancelled, "The task was cancelled." }
		case errors.As(err, &pe):
			update = func(r *Record) { r.Status, r.StatusMessage, r.Error = Failed, pe.Message, pe }
		default:
			e := protocol.InternalError(err.Error())
			update = func(r *Record) { r.Status, r.StatusMessage, r.Error = Failed, e.Message, e }
		}
	case *protocol.InputRequiredResult:
		reqs := make(map[string]json.RawMessage, len(res.InputRequests))
		for k, ir := range res.InputRequests {
			b, err := json.Marshal(ir)
			if err != nil {
				continue
			}
			reqs[k] = b
		}
		parked = true
		update = func(r *Record) {
			r.Status, r.InputRequests = InputRequired, reqs
			r.StatusMessage = "The task needs input: answer its inputRequests with tasks/update."
		}
	default:
		if h := res.Header(); h != nil {
			// The result as the synchronous call would carry it
			// (resultType complete), without the server's own _meta.
			h.ResultType = protocol.ResultComplete
			h.Meta = h.Meta.WithoutServerInfo()
		}
		b, err := json.Marshal(res)
		switch {
		case err != nil:
			e := protocol.InternalError("encoding the result: " + err.Error())
			update = func(r *Record) { r.Status, r.StatusMessage, r.Error = Failed, e.Message, e }
		case len(b) > x.opts.MaxResultBytes:
			e := protocol.InternalError("the result is larger than the server keeps for a task")
			update = func(r *Record) { r.Status, r.StatusMessage, r.Error = Failed, e.Message, e }
		default:
			update = func(r *Record) { r.Status, r.StatusMessage, r.Result = Completed, "", b }
		}
	}
	rec, err := x.store.Update(ctx, t.id, func(r *Record) error {
		if r.Status.Terminal() {
			return ErrUnchanged
		}
		update(r)
		r.UpdatedAt = now
		if r.Status != InputRequired {
			r.InputRequests = nil
		}
		return nil
	})
	switch {
	case err == nil:
		x.notify(rec)
	case !errors.Is(err, ErrUnchanged) && !errors.Is(err, ErrNotFound):
		x.log.Error("tasks: recording the outcome of a task", "task", t.id, "err", err)
	}
	t.executing = false
	if !parked || err != nil {
		t.cancel()
		x.release(t)
	}
}

// resume runs t's handler again, with the answers gathered so far.
func (x *Extension) resume(t *run) error {
	d, err := t.call.Detach(t.answers)
	if err != nil {
		return err
	}
	t.call = d
	x.mu.Lock()
	closed := x.closed
	if !closed {
		x.wg.Add(2)
	}
	x.mu.Unlock()
	if closed {
		return errors.New("the server is shutting down")
	}
	t.executing = true
	go x.execute(t, d)
	rec, err := x.store.Get(context.Background(), t.id)
	expires := time.Now().Add(x.opts.TTL)
	if err == nil {
		expires = rec.Expires()
	}
	go x.await(t, expires)
	return nil
}

// cancelRun cancels t: its record says cancelled at once, and its handler
// (if running) sees its context cancelled.
func (x *Extension) cancelRun(ctx context.Context, t *run, message string) {
	t.cancelled.Store(true)
	t.cancel()
	x.mu.Lock()
	id := t.id
	x.mu.Unlock()
	if id == "" {
		return
	}
	rec, err := x.store.Update(context.WithoutCancel(ctx), id, func(r *Record) error {
		if r.Status.Terminal() {
			return ErrUnchanged
		}
		r.Status, r.StatusMessage, r.InputRequests, r.UpdatedAt = Cancelled, message, nil, time.Now()
		return nil
	})
	if err == nil {
		x.notify(rec)
	}
	// A run waiting for input holds no goroutine: it ends here.
	t.mu.Lock()
	waiting := !t.executing
	t.mu.Unlock()
	if waiting {
		x.release(t)
	}
}
