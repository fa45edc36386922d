package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/feed"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// A task's handler runs in the process (replica) that created it. A
// tasks/cancel or tasks/update for it that lands on another replica is
// checked there (the caller's principal, the sizes, the answers), then
// forwarded through the change feed the replicas share, as a control
// event that the running replica applies as if the request had landed
// on it. With an in-process feed (one process) nothing is forwarded: the
// run is local or there is none.

// controlTopic is the topic of control events. Listen streams only show
// the topics their filters' Accept functions return (topic(id), with a
// '#'), so no stream shows it.
const controlTopic = ID + "/control"

// Control event methods.
const (
	controlCancel = "cancel"
	controlUpdate = "update"
)

// maxControlBytes bounds a control event's params, sent or applied (the
// Redis feed carries up to 256 KiB).
const maxControlBytes = 256 << 10

// relayBuffer is the feed subscription's buffer: a replica that falls
// further behind subscribes again.
const relayBuffer = 256

// relayRetry is the pause before subscribing again to a lost feed.
const relayRetry = time.Second

// control is a control event's params.
type control struct {
	TaskID         string                     `json:"taskId"`
	Principal      string                     `json:"principal"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// shared reports whether f reaches other processes.
func shared(f server.Feed) bool {
	_, local := f.(*feed.MemoryFeed)
	return f != nil && !local
}

// startRelay subscribes to s's feed, when it is shared, for the control
// events of the tasks this process runs.
func (x *Extension) startRelay(s *server.Server) {
	f := s.Feed()
	if !shared(f) {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	x.mu.Lock()
	x.stopRelay = stop
	x.mu.Unlock()
	// The first subscription is made before the extension serves, so that
	// no task starts here before its control events can reach it.
	ch, err := server.FeedEvents(ctx, f, relayBuffer)
	if err != nil {
		x.log.Warn("tasks: subscribing to the feed for control events", "err", err)
		ch = nil
	}
	x.wg.Add(1)
	go x.relay(ctx, f, ch)
}

// relay applies the control events of ch, subscribing again when the
// subscription ends, until ctx is done.
func (x *Extension) relay(ctx context.Context, f server.Feed, ch <-chan server.Event) {
	defer x.wg.Done()
	for {
		for e := range ch {
			if e.Kind == feed.Notification && e.Topic == controlTopic {
				x.applyControl(ctx, e)
			}
		}
		t := time.NewTimer(relayRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		var err error
		if ch, err = server.FeedEvents(ctx, f, relayBuffer); err != nil {
			x.log.Warn("tasks: subscribing to the feed for control events", "err", err)
			ch = nil
		}
	}
}

// forward publishes a control event for the task rec, which this process
// does not run, to the replica that runs it, and reports whether it did:
// it does nothing with an in-process feed.
func (x *Extension) forward(ctx context.Context, method string, rec *Record, responses map[string]json.RawMessage) (published bool, err error) {
	s := x.srv.Load()
	if s == nil || !shared(s.Feed()) {
		return false, nil
	}
	b, err := json.Marshal(control{TaskID: rec.ID, Principal: rec.Principal, InputResponses: responses})
	if err != nil {
		return false, protocol.InternalError("encoding the control event: " + err.Error())
	}
	if len(b) > maxControlBytes {
		return false, protocol.InvalidParams(fmt.Sprintf("%s: %d bytes of inputResponses, more than the server forwards to the replica that runs the task (%d)", MethodUpdate, len(b), maxControlBytes))
	}
	err = s.Feed().Publish(context.WithoutCancel(ctx), server.Event{Kind: feed.Notification, Topic: controlTopic, Method: method, Params: b})
	if err != nil {
		x.log.Error("tasks: forwarding to the replica that runs the task", "task", rec.ID, "err", err)
		return false, storeError("forwarding to the replica that runs the task", err)
	}
	return true, nil
}

// forwardWait bounds how long a tasks/update forwarded to the replica
// that runs the task waits for that replica to record it, and
// forwardPoll is how often it looks.
const (
	forwardWait = time.Second
	forwardPoll = 5 * time.Millisecond
)

// awaitApplied waits, up to forwardWait, until the stored task id no
// longer asks for the keys of answers (the replica that runs it recorded
// them), so that a tasks/get after the tasks/update, on any replica, sees
// them answered. Past the wait the update stays acknowledged as published.
func (x *Extension) awaitApplied(ctx context.Context, id string, answers map[string]json.RawMessage) {
	ctx, cancel := context.WithTimeout(ctx, forwardWait)
	defer cancel()
	t := time.NewTicker(forwardPoll)
	defer t.Stop()
	for {
		rec, err := x.store.Get(ctx, id)
		if err != nil || rec.Status != InputRequired {
			return
		}
		pending := false
		for k := range answers {
			if _, ok := rec.InputRequests[k]; ok {
				pending = true
				break
			}
		}
		if !pending {
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// applyControl applies a control event to the run it names, if this
// process has it and it is the principal's: as tasks/cancel or
// tasks/update would. Others (unknown, finished, malformed) are ignored.
func (x *Extension) applyControl(ctx context.Context, e server.Event) {
	if len(e.Params) > maxControlBytes {
		return
	}
	var c control
	if err := json.Unmarshal(e.Params, &c); err != nil || c.TaskID == "" || len(c.TaskID) > maxIDLen {
		return
	}
	x.mu.Lock()
	t := x.runs[c.TaskID]
	x.mu.Unlock()
	if t == nil || t.principal != c.Principal {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch e.Method {
	case controlCancel:
		x.cancelRun(ctx, t, msgCancelledByClient)
	case controlUpdate:
		if len(c.InputResponses) == 0 || len(c.InputResponses) > x.opts.MaxInputResponses {
			return
		}
		rec, err := x.store.Get(ctx, c.TaskID)
		if err != nil || rec.Principal != c.Principal {
			return
		}
		if err := x.answer(ctx, rec, c.InputResponses); err != nil {
			x.log.Warn("tasks: applying a forwarded tasks/update", "task", c.TaskID, "err", err)
		}
	}
}
