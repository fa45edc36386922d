package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// ClientOptions configure the client side of the extension.
type ClientOptions struct {
	// MinPoll and MaxPoll bound the interval between two tasks/get: the
	// server's pollIntervalMs (one second when it gives none), longer
	// while the status does not change, never shorter than MinPoll
	// (0 means 100 ms) nor longer than MaxPoll (0 means 30 s). Each wait
	// is jittered by a tenth.
	MinPoll, MaxPoll time.Duration
	// OnStatus, when set, is called with the task's state each time it is
	// read (the CreateTaskResult first), for every call of the session.
	OnStatus func(*Task)
}

// Use declares the extension in o's capabilities and adds the middleware
// that resolves tasks (Middleware) to o.Middleware, outermost.
func Use(o *client.Options, opts *ClientOptions) {
	ext := make(map[string]protocol.Object, len(o.Extensions)+1)
	for k, v := range o.Extensions {
		ext[k] = v
	}
	ext[ID] = protocol.Object{}
	o.Extensions = ext
	o.Middleware = append([]client.Middleware{Middleware(opts)}, o.Middleware...)
}

// Middleware returns the client middleware that turns a task result into
// the call's final result: it polls tasks/get at the server's interval,
// answers input_required tasks with the session's input handlers
// (client.Options.Elicitation, Sampling, Roots) through tasks/update, and
// returns the completed task's result exactly as the synchronous call
// would have returned it, a failed task's JSON-RPC error as the call's
// error, and ErrCancelled for a cancelled task. Cancelling the call's
// context sends tasks/cancel. Under a context made by Detach, it returns
// a *StartedError with the task instead of waiting. The client must
// declare the extension (Use does both).
func Middleware(opts *ClientOptions) client.Middleware {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	return client.Middleware{Call: func(next client.CallFunc) client.CallFunc {
		return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
			res, err := next(ctx, c)
			if err != nil || resultType(res) != ResultTypeTask {
				return res, err
			}
			var t Task
			if err := jsonrpc.Unmarshal(res, &t); err != nil || t.TaskID == "" {
				return nil, fmt.Errorf("tasks: a malformed CreateTaskResult: %v", err)
			}
			if d, _ := ctx.Value(detachKey{}).(bool); d {
				o.report(ctx, &t)
				return nil, &StartedError{Task: &t}
			}
			p := &poller{opts: &o, session: c.Session(), call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
				b, err := json.Marshal(params)
				if err != nil {
					return nil, err
				}
				return next(ctx, &client.Call{Method: method, Params: b})
			}}
			return p.wait(ctx, &t)
		}
	}}
}

func resultType(raw json.RawMessage) protocol.ResultType {
	var h struct {
		ResultType protocol.ResultType `json:"resultType"`
	}
	_ = jsonrpc.Unmarshal(raw, &h)
	return h.ResultType
}

// ErrCancelled is returned for a call whose task ended cancelled.
var ErrCancelled = errors.New("tasks: the task was cancelled")

// StartedError is returned, under a context made by Detach, by a call that
// the server made a task: Task names it, to resume with Wait (from this
// process or another).
type StartedError struct{ Task *Task }

func (e *StartedError) Error() string { return "tasks: the call became task " + e.Task.TaskID }

type detachKey struct{}

// Detach returns a context under which a call that becomes a task returns
// at once with a *StartedError naming it, instead of waiting for it.
func Detach(ctx context.Context) context.Context { return context.WithValue(ctx, detachKey{}, true) }

type statusKey struct{}

// WithStatus returns a context under which f is called with the state of
// the task a call becomes each time it is read (besides
// ClientOptions.OnStatus).
func WithStatus(ctx context.Context, f func(*Task)) context.Context {
	return context.WithValue(ctx, statusKey{}, f)
}

func (o *ClientOptions) report(ctx context.Context, t *Task) {
	if f, _ := ctx.Value(statusKey{}).(func(*Task)); f != nil {
		f(t)
	}
	if o.OnStatus != nil {
		o.OnStatus(t)
	}
}

// Get returns the task id's state (tasks/get).
func Get(ctx context.Context, s *client.Session, id string) (*Task, error) {
	var t Task
	if err := s.Call(ctx, MethodGet, idParams{TaskID: id}, &t, nil); err != nil {
		return nil, err
	}
	return &t, nil
}

// Cancel asks the server to cancel the task id (tasks/cancel).
func Cancel(ctx context.Context, s *client.Session, id string) error {
	return s.Call(ctx, MethodCancel, idParams{TaskID: id}, nil, nil)
}

// Wait follows the task id to its end as the middleware does, from any
// session of the same principal (a new process resuming a task by id),
// and returns its result: the encoded result of the call (for tools/call,
// a CallToolResult), the failed task's JSON-RPC error, or ErrCancelled.
// Cancelling ctx stops waiting and cancels the task.
func Wait(ctx context.Context, s *client.Session, id string, opts *ClientOptions) (json.RawMessage, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	p := &poller{opts: &o, session: s, call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		var raw json.RawMessage
		err := s.Call(ctx, method, params, &raw, nil)
		return raw, err
	}}
	t, err := p.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return p.wait(ctx, t)
}

// WaitTool is Wait for a task of tools/call, its result decoded.
func WaitTool(ctx context.Context, s *client.Session, id string, opts *ClientOptions) (*protocol.CallToolResult, error) {
	raw, err := Wait(ctx, s, id, opts)
	if err != nil {
		return nil, err
	}
	var res protocol.CallToolResult
	if err := jsonrpc.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// poller follows one task.
type poller struct {
	opts    *ClientOptions
	session *client.Session
	call    func(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// maxGetFailures is how many tasks/get in a row may fail (not with a
// JSON-RPC error) before the wait gives up.
const maxGetFailures = 5

func (p *poller) get(ctx context.Context, id string) (*Task, error) {
	raw, err := p.call(ctx, MethodGet, idParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	var t Task
	if err := jsonrpc.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("tasks: a malformed tasks/get result: %w", err)
	}
	if t.TaskID != id {
		return nil, fmt.Errorf("tasks: tasks/get for %s answered for %q", id, t.TaskID)
	}
	return &t, nil
}

// wait polls t to its end.
func (p *poller) wait(ctx context.Context, t *Task) (json.RawMessage, error) {
	minPoll, maxPoll := p.opts.MinPoll, p.opts.MaxPoll
	if minPoll <= 0 {
		minPoll = 100 * time.Millisecond
	}
	if maxPoll <= 0 {
		maxPoll = 30 * time.Second
	}
	answered := map[string]bool{}
	var last Status
	var lastMsg string
	stale, failures := 0, 0
	for {
		p.opts.report(ctx, t)
		switch t.Status {
		case Completed:
			if len(t.Result) == 0 || t.Result[0] != '{' {
				return nil, errors.New("tasks: a completed task without a result object")
			}
			return asComplete(t.Result), nil
		case Failed:
			if t.Error == nil {
				return nil, errors.New("tasks: the task failed: " + t.StatusMessage)
			}
			return nil, t.Error
		case Cancelled:
			return nil, ErrCancelled
		case InputRequired:
			if err := p.answer(ctx, t, answered); err != nil {
				p.cancel(ctx, t.TaskID)
				return nil, err
			}
		}
		if t.Status == last && t.StatusMessage == lastMsg {
			stale++
		} else {
			stale = 0
		}
		last, lastMsg = t.Status, t.StatusMessage
		interval := time.Duration(t.PollIntervalMs) * time.Millisecond
		if interval <= 0 {
			interval = time.Second
		}
		// Back off while nothing changes: up to four times the server's
		// interval.
		for i := 0; i < stale && i < 4; i++ {
			interval += interval / 2
		}
		interval = min(max(interval, minPoll), maxPoll)
		if failures > 0 {
			interval = min(maxPoll, interval<<failures)
		}
		interval += time.Duration(rand.Int64N(int64(interval)/5+1)) - interval/10
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			p.cancel(ctx, t.TaskID)
			return nil, ctx.Err()
		case <-timer.C:
		}
		next, err := p.get(ctx, t.TaskID)
		if err != nil {
			var je *jsonrpc.Error
			if errors.As(err, &je) || ctx.Err() != nil || failures+1 >= maxGetFailures {
				if ctx.Err() != nil {
					p.cancel(ctx, t.TaskID)
				}
				return nil, err
			}
			failures++
			continue
		}
		failures = 0
		t = next
	}
}

// asComplete returns a task's inlined result as the synchronous call would
// have returned it: with resultType complete.
func asComplete(res json.RawMessage) json.RawMessage {
	if resultType(res) != "" {
		return res
	}
	out := make([]byte, 0, len(res)+26)
	out = append(out, `{"resultType":"complete"`...)
	if rest := strings.TrimSpace(string(res[1:])); rest != "}" {
		out = append(out, ',')
	}
	return append(out, res[1:]...)
}

// answer answers the input requests of t not answered yet, with the
// session's handlers, in one tasks/update.
func (p *poller) answer(ctx context.Context, t *Task, answered map[string]bool) error {
	responses := map[string]json.RawMessage{}
	for k, raw := range t.InputRequests {
		if answered[k] {
			continue
		}
		if p.session == nil {
			return errors.New("tasks: the task needs input and the call has no session to answer it")
		}
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := jsonrpc.Unmarshal(raw, &req); err != nil {
			return fmt.Errorf("tasks: a malformed input request %q: %w", k, err)
		}
		res, err := p.session.Answer(ctx, req.Method, req.Params)
		if err != nil {
			return err
		}
		responses[k] = res
	}
	if len(responses) == 0 {
		return nil
	}
	if _, err := p.call(ctx, MethodUpdate, updateParams{TaskID: t.TaskID, InputResponses: responses}); err != nil {
		return err
	}
	for k := range responses {
		answered[k] = true
	}
	return nil
}

// cancel sends tasks/cancel for a wait that is given up, best effort.
func (p *poller) cancel(ctx context.Context, id string) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	_, _ = p.call(ctx, MethodCancel, idParams{TaskID: id})
}
