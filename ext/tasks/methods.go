package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// maxIDLen bounds a taskId the server looks up: its own are 22 bytes.
const maxIDLen = 128

type idParams struct {
	TaskID string `json:"taskId"`
}

// lookupParams decodes params naming one task ({"taskId"}) and looks the
// task up for the request's principal, as lookup does.
func (x *Extension) lookupParams(ctx context.Context, r *server.Request, action string) (*Record, error) {
	var p idParams
	if err := r.DecodeParams(&p); err != nil {
		return nil, err
	}
	return x.lookup(ctx, r, p.TaskID, action)
}

type updateParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// errNotFound is the answer for a task that is unknown, expired or
// another principal's: the three are not told apart.
func errNotFound(method string) error {
	return protocol.InvalidParams("Failed to " + method + ": Task not found")
}

// lookup returns the caller's task named by params.
func (x *Extension) lookup(ctx context.Context, r *server.Request, id, what string) (*Record, error) {
	if id == "" {
		return nil, protocol.InvalidParams(r.Method + " needs a taskId")
	}
	if len(id) > maxIDLen {
		return nil, errNotFound(what)
	}
	rec, err := x.store.Get(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, errNotFound(what)
	case err != nil:
		x.log.Error("tasks: reading a task", "err", err)
		return nil, storeError("reading the task", err)
	case rec.Principal != r.Principal:
		return nil, errNotFound(what)
	}
	return rec, nil
}

// serveGet answers tasks/get.
func (x *Extension) serveGet(ctx context.Context, r *server.Request) (protocol.Result, error) {
	if r.Legacy() {
		return x.legacyGet(ctx, r)
	}
	if !declared(r) {
		return nil, missing()
	}
	rec, err := x.lookupParams(ctx, r, "retrieve task")
	if err != nil {
		return nil, err
	}
	return &taskResult{Task: rec.wire()}, nil
}

// serveUpdate answers tasks/update: answers to the outstanding input
// requests are kept; once every one is answered, the handler runs again
// with them all. Answers under other keys are ignored.
func (x *Extension) serveUpdate(ctx context.Context, r *server.Request) (protocol.Result, error) {
	if !declared(r) {
		return nil, missing()
	}
	var p updateParams
	if err := r.DecodeParams(&p); err != nil {
		return nil, err
	}
	if len(p.InputResponses) > x.opts.MaxInputResponses {
		return nil, protocol.InvalidParams(fmt.Sprintf("tasks/update: %d inputResponses, more than %d", len(p.InputResponses), x.opts.MaxInputResponses))
	}
	rec, err := x.lookup(ctx, r, p.TaskID, "update task")
	if err != nil {
		return nil, err
	}
	if err := x.answer(ctx, rec, p.InputResponses); err != nil {
		return nil, err
	}
	return &protocol.EmptyResult{}, nil
}

// asked returns the answers under the keys of rec's outstanding input
// requests, each a JSON object.
func asked(rec *Record, responses map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	got := map[string]json.RawMessage{}
	for k, v := range responses {
		if _, ok := rec.InputRequests[k]; !ok {
			continue
		}
		if len(v) == 0 || v[0] != '{' {
			return nil, protocol.InvalidParams(fmt.Sprintf("inputResponses[%q] must be an object", k))
		}
		got[k] = v
	}
	return got, nil
}

// answer gives the answers under the keys of rec's outstanding input
// requests to its run; once every one is answered, the handler runs again
// with them all. Answers under other keys are ignored.
func (x *Extension) answer(ctx context.Context, rec *Record, responses map[string]json.RawMessage) error {
	if rec.Status != InputRequired {
		return nil
	}
	got, err := asked(rec, responses)
	if err != nil || len(got) == 0 {
		return err
	}
	x.mu.Lock()
	t := x.runs[rec.ID]
	x.mu.Unlock()
	if t == nil {
		// Another replica runs it (or none does any more).
		if published, err := x.forward(ctx, controlUpdate, rec, got); !published {
			return err
		}
		x.awaitApplied(ctx, rec.ID, got)
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	resume := false
	rec, err = x.store.Update(ctx, rec.ID, func(rr *Record) error {
		if rr.Status != InputRequired {
			return ErrUnchanged
		}
		pending := make(map[string]json.RawMessage, len(rr.InputRequests))
		for k, v := range rr.InputRequests {
			if _, ok := got[k]; !ok {
				pending[k] = v
			}
		}
		rr.InputRequests, rr.UpdatedAt = pending, time.Now()
		if len(pending) == 0 {
			rr.Status, rr.InputRequests, rr.StatusMessage = Working, nil, ""
			resume = true
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrUnchanged):
		return nil
	case err != nil:
		return storeError("updating the task", err)
	}
	if t.answers == nil {
		t.answers = map[string]json.RawMessage{}
	}
	for k, v := range got {
		t.answers[k] = v
	}
	if resume {
		if err := x.resume(t); err != nil {
			t.executing = false
			x.settleLocked(t, outcome{err: protocol.InternalError("resuming the task: " + err.Error())})
			return nil
		}
	}
	x.notify(rec)
	return nil
}

// serveCancel answers tasks/cancel: idempotent, cooperative.
func (x *Extension) serveCancel(ctx context.Context, r *server.Request) (protocol.Result, error) {
	if r.Legacy() {
		return x.legacyCancel(ctx, r)
	}
	if !declared(r) {
		return nil, missing()
	}
	rec, err := x.lookupParams(ctx, r, "cancel task")
	if err != nil {
		return nil, err
	}
	if !rec.Status.Terminal() {
		x.cancelTask(ctx, rec)
	}
	return &protocol.EmptyResult{}, nil
}

// cancelTask cancels the task of rec, not terminal: its run if this
// process has it, its record in any case.
func (x *Extension) cancelTask(ctx context.Context, rec *Record) {
	x.mu.Lock()
	t := x.runs[rec.ID]
	x.mu.Unlock()
	if t != nil {
		x.cancelRun(ctx, t, msgCancelledByClient)
		return
	}
	updated, err := x.store.Update(ctx, rec.ID, func(rr *Record) error {
		if rr.Status.Terminal() {
			return ErrUnchanged
		}
		rr.Status, rr.StatusMessage, rr.InputRequests, rr.UpdatedAt = Cancelled, msgCancelledByClient, nil, time.Now()
		return nil
	})
	if err == nil {
		x.notify(updated)
	}
	// Another replica may run it: stop its handler there.
	_, _ = x.forward(ctx, controlCancel, rec, nil)
}

// msgCancelledByClient is the status message of a task cancelled by
// tasks/cancel.
const msgCancelledByClient = "The task was cancelled at the client's request."

// maxListenTasks bounds the taskIds of one listen request.
const maxListenTasks = 1000

// acceptListen takes the taskIds member of a subscriptions/listen
// filter: the caller's own tasks among them are watched.
func (x *Extension) acceptListen(ctx context.Context, r *server.Request, value json.RawMessage) (json.RawMessage, []string, error) {
	if !declared(r) {
		return nil, nil, missing()
	}
	var ids []string
	if err := jsonrpc.Unmarshal(value, &ids); err != nil {
		return nil, nil, protocol.InvalidParams("subscriptions/listen: taskIds must be an array of strings")
	}
	if len(ids) > maxListenTasks {
		return nil, nil, protocol.InvalidParams(fmt.Sprintf("subscriptions/listen: %d taskIds, more than %d", len(ids), maxListenTasks))
	}
	acked := []string{}
	var topics []string
	for _, id := range ids {
		if len(id) > maxIDLen {
			continue
		}
		rec, err := x.store.Get(ctx, id)
		if err != nil || rec.Principal != r.Principal {
			continue
		}
		acked = append(acked, id)
		topics = append(topics, topic(id))
	}
	b, _ := json.Marshal(acked)
	return b, topics, nil
}

func topic(id string) string { return ID + "#" + id }

// notify sends the task's status to the listen streams watching it.
func (x *Extension) notify(rec *Record) {
	s := x.srv.Load()
	if s == nil || rec == nil {
		return
	}
	x.mu.Lock()
	close(x.changed)
	x.changed = make(chan struct{})
	x.mu.Unlock()
	if err := s.Notify(context.Background(), topic(rec.ID), NotificationStatus, rec.wire()); err != nil {
		x.log.Warn("tasks: status notification", "task", rec.ID, "err", err)
	}
	x.notifyLegacy(rec)
}

// sweepEvery is how often expired tasks are reclaimed, on task creation.
const sweepEvery = time.Minute

// sweep deletes the expired records, at most once a minute, and forgets
// the runs waiting for input whose tasks expired.
func (x *Extension) sweep(ctx context.Context, now time.Time) {
	x.mu.Lock()
	if now.Sub(x.lastSweep) < sweepEvery {
		x.mu.Unlock()
		return
	}
	x.lastSweep = now
	runs := make([]*run, 0, len(x.runs))
	for _, t := range x.runs {
		runs = append(runs, t)
	}
	x.mu.Unlock()
	if _, err := x.store.Sweep(context.WithoutCancel(ctx), now); err != nil {
		x.log.Warn("tasks: sweeping expired tasks", "err", err)
	}
	for _, t := range runs {
		t.mu.Lock()
		waiting := !t.executing
		t.mu.Unlock()
		if !waiting {
			continue // its own timer ends it
		}
		if _, err := x.store.Get(ctx, t.id); errors.Is(err, ErrNotFound) {
			t.cancel()
			x.release(t)
		}
	}
}
