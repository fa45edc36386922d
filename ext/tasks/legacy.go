package tasks

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// The 2025-11-25 form of tasks, served to legacy sessions of that
// revision whose client declared its tasks capability in initialize: the
// same tasks, in the same Store, bound to the same principal, through
// that revision's methods and shapes.

// Methods, notification and _meta key of the 2025-11-25 form.
const (
	// MethodResult is tasks/result: it blocks until the task is terminal
	// and returns what the tools/call would have.
	MethodResult = "tasks/result"
	// MethodList is tasks/list: the caller's tasks, paginated.
	MethodList = "tasks/list"
	// NotificationLegacyStatus is sent on a 2025-11-25 session's standalone
	// stream at each change of status of the tasks it created.
	NotificationLegacyStatus = "notifications/tasks/status"
	// MetaRelatedTask is the _meta key that relates a result to its task.
	MetaRelatedTask = "io.modelcontextprotocol/related-task"
)

// Lister is implemented by the stores that can list a principal's tasks,
// which tasks/list of revision 2025-11-25 needs (MemoryStore and
// SQLiteStore do). With a Store that does not, the legacy tasks
// capability leaves list out and tasks/list is unknown (-32601).
type Lister interface {
	// List returns up to limit unexpired tasks of principal whose ids
	// sort after the id after, in the order of their ids.
	List(ctx context.Context, principal, after string, limit int) ([]*Record, error)
}

// listPage is how many tasks a tasks/list page holds.
const listPage = 100

// legacyTask is a task in the 2025-11-25 shape.
type legacyTask struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

type (
	legacyTaskResult struct {
		protocol.ResultHeader
		legacyTask
	}
	legacyCreateResult struct {
		protocol.ResultHeader
		Task legacyTask `json:"task"`
	}
	legacyListResult struct {
		protocol.ResultHeader
		Tasks      []legacyTask `json:"tasks"`
		NextCursor string       `json:"nextCursor,omitempty"`
	}
)

// legacyWire returns the record in the 2025-11-25 shape, where a tool
// result with isError is a failed task.
func (r *Record) legacyWire() legacyTask {
	w := r.wire()
	t := legacyTask{TaskID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage, CreatedAt: w.CreatedAt,
		LastUpdatedAt: w.LastUpdatedAt, TTL: w.TTLMs, PollInterval: w.PollIntervalMs}
	if r.Status == Completed {
		var res struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(r.Result, &res) == nil && res.IsError {
			t.Status = Failed
		}
	}
	return t
}

// legacyDeclared reports whether the request is a legacy session's whose
// client declared the 2025-11-25 tasks capability (only that revision's
// sessions can: the adapter drops it from older ones).
func legacyDeclared(r *server.Request) bool {
	caps := r.ClientCapabilities()
	return r.Legacy() && caps != nil && caps.Tasks != nil
}

func notDeclared(method string) error {
	return jsonrpc.NewError(protocol.CodeMethodNotFound, method+": the client did not declare the tasks capability", nil)
}

// registerLegacy advertises the 2025-11-25 tasks capability and adds the
// execution.taskSupport of tools to legacy tools/list results.
func (x *Extension) registerLegacy(s *server.Server) {
	caps := protocol.Object{
		"cancel":   json.RawMessage(`{}`),
		"requests": json.RawMessage(`{"tools":{"call":{}}}`),
	}
	if _, ok := x.store.(Lister); ok {
		caps["list"] = json.RawMessage(`{}`)
	}
	s.SetLegacyTasks(caps)
	m, ok := s.LookupMethod(protocol.MethodToolsList)
	if !ok {
		return
	}
	list := m.Handler
	m.Handler = func(ctx context.Context, r *server.Request) (protocol.Result, error) {
		res, err := list(ctx, r)
		if err != nil || !r.Legacy() {
			return res, err
		}
		if lt, ok := res.(*protocol.ListToolsResult); ok {
			lt.Tools = x.withTaskSupport(lt.Tools)
		}
		return res, err
	}
	s.HandleMethod(m)
}

// withTaskSupport returns tools with the execution.taskSupport of their
// Policy: optional for May, required for Must; Never leaves it out (the
// revision's default, forbidden). The tools given are not changed.
func (x *Extension) withTaskSupport(tools []*protocol.Tool) []*protocol.Tool {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]*protocol.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
		support := ""
		switch x.policies[t.Name].Mode {
		case May:
			support = "optional"
		case Must:
			support = "required"
		}
		if support != "" {
			c := *t
			c.Execution = &protocol.ToolExecution{TaskSupport: support}
			out[i] = &c
		}
	}
	return out
}

// legacyCall is the middleware's part in a legacy session's tools/call: a
// call with params.task from a client that declared the tasks capability
// becomes a task at once (the client asks, as that revision has it); the
// others run synchronously. As the revision requires, a task asked of a
// Never tool, and a Must tool called without one, are refused with -32601.
func (x *Extension) legacyCall(ctx context.Context, next server.ToolCallFunc, call *server.CallRequest, p Policy) (protocol.Result, error) {
	declared := legacyDeclared(call.Request)
	if !declared {
		if p.Mode == Must {
			return nil, missing()
		}
		return next(ctx, call)
	}
	var params struct {
		Task *struct {
			TTL *int64 `json:"ttl"`
		} `json:"task"`
	}
	if err := call.DecodeParams(&params); err != nil {
		return nil, err
	}
	asked := params.Task != nil
	switch {
	case p.Mode == Never && asked:
		return nil, jsonrpc.NewError(protocol.CodeMethodNotFound, "tool "+call.Name+" does not run as a task", nil)
	case p.Mode == Never, p.Mode == May && !asked:
		return next(ctx, call)
	case !asked:
		return nil, jsonrpc.NewError(protocol.CodeMethodNotFound, "tool "+call.Name+" runs only as a task: call it with params.task", nil)
	}
	if !x.reserve(call.Principal) {
		return nil, errBusy
	}
	ttl := x.opts.TTL
	if ms := params.Task.TTL; ms != nil && *ms > 0 && *ms < ttl.Milliseconds() {
		ttl = max(time.Duration(*ms)*time.Millisecond, time.Second)
	}
	d, err := call.Detach(nil)
	if err != nil {
		x.releaseSlot(call.Principal)
		return nil, err
	}
	t := &run{x: x, principal: call.Principal, tool: call.Name, next: next, call: d,
		promote: make(chan struct{}, 1), done: make(chan outcome, 1), executing: true}
	t.session = call.SessionID()
	t.ctx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	t.ctx = context.WithValue(t.ctx, runKey{}, t)
	rec, err := x.record(ctx, t, ttl)
	if err != nil {
		t.cancel()
		x.release(t)
		return nil, err
	}
	x.wg.Add(1)
	go x.execute(t, d)
	return &legacyCreateResult{Task: rec.legacyWire()}, nil
}

// notifyLegacy sends the task's status to the legacy session that created
// it, if one did and the task still runs here.
func (x *Extension) notifyLegacy(rec *Record) {
	x.mu.Lock()
	t := x.runs[rec.ID]
	x.mu.Unlock()
	s := x.srv.Load()
	if t == nil || t.session == "" || s == nil {
		return
	}
	params, err := json.Marshal(rec.legacyWire())
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.QueueLegacy(ctx, t.session, jsonrpc.AppendNotification(nil, NotificationLegacyStatus, params)); err != nil {
		x.log.Warn("tasks: legacy status notification", "task", rec.ID, "err", err)
	}
}

// legacyGet answers a legacy session's tasks/get: the task, flat.
func (x *Extension) legacyGet(ctx context.Context, r *server.Request) (protocol.Result, error) {
	if !legacyDeclared(r) {
		return nil, notDeclared(r.Method)
	}
	rec, err := x.lookupParams(ctx, r, "retrieve task")
	if err != nil {
		return nil, err
	}
	return &legacyTaskResult{legacyTask: rec.legacyWire()}, nil
}

// legacyCancel answers a legacy session's tasks/cancel: the cancelled
// task; a task already terminal is refused with -32602.
func (x *Extension) legacyCancel(ctx context.Context, r *server.Request) (protocol.Result, error) {
	if !legacyDeclared(r) {
		return nil, notDeclared(r.Method)
	}
	rec, err := x.lookupParams(ctx, r, "cancel task")
	if err != nil {
		return nil, err
	}
	if rec.Status.Terminal() {
		return nil, protocol.InvalidParams("Cannot cancel task: already in terminal status " + string(rec.Status))
	}
	x.cancelTask(ctx, rec)
	if rec, err = x.lookup(ctx, r, rec.ID, "cancel task"); err != nil {
		return nil, err
	}
	return &legacyTaskResult{legacyTask: rec.legacyWire()}, nil
}

// resultPoll bounds the wait of tasks/result between looks at the store,
// for changes no notification of this process announces (expiry).
const resultPoll = time.Second

// serveResult answers tasks/result: it waits until the task is terminal
// and returns the tool's result with the related-task _meta, or its
// JSON-RPC error. While the task is input_required it answers with the
// task's input requests, which the legacy session sends its client as
// elicitation/create or sampling/createMessage requests; their answers
// come back on the session's retry of tasks/result (inputResponses) and
// resume the task, as tasks/update does in the modern era.
func (x *Extension) serveResult(ctx context.Context, r *server.Request) (protocol.Result, error) {
	if !legacyDeclared(r) {
		return nil, notDeclared(r.Method)
	}
	var p updateParams
	if err := r.DecodeParams(&p); err != nil {
		return nil, err
	}
	if len(p.InputResponses) > x.opts.MaxInputResponses {
		return nil, protocol.InvalidParams("tasks/result: too many inputResponses")
	}
	rec, err := x.lookup(ctx, r, p.TaskID, "retrieve task result")
	if err != nil {
		return nil, err
	}
	if len(p.InputResponses) > 0 {
		if err := x.answer(ctx, rec, p.InputResponses); err != nil {
			return nil, err
		}
	}
	timer := time.NewTimer(resultPoll)
	defer timer.Stop()
	for {
		x.mu.Lock()
		changed := x.changed
		x.mu.Unlock()
		rec, err := x.lookup(ctx, r, p.TaskID, "retrieve task result")
		if err != nil {
			return nil, err
		}
		switch {
		case rec.Status.Terminal():
			return legacyPayload(rec)
		case rec.Status == InputRequired && len(rec.InputRequests) > 0:
			return inputRequired(rec), nil
		}
		timer.Reset(resultPoll)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		case <-timer.C:
		}
	}
}

// legacyPayload returns what the task's tools/call would have returned,
// with the related-task _meta on a result.
func legacyPayload(rec *Record) (protocol.Result, error) {
	switch rec.Status {
	case Failed:
		if rec.Error != nil {
			return nil, rec.Error
		}
		return nil, protocol.InternalError(rec.StatusMessage)
	case Cancelled:
		return nil, protocol.InternalError("the task was cancelled: " + rec.StatusMessage)
	}
	res := &protocol.CallToolResult{}
	if err := json.Unmarshal(rec.Result, res); err != nil {
		return nil, protocol.InternalError("reading the task's result: " + err.Error())
	}
	res.ResultType = ""
	related, _ := json.Marshal(map[string]string{"taskId": rec.ID})
	meta := &protocol.ResultMeta{}
	if res.Meta != nil {
		meta.Extra = make(map[string]json.RawMessage, len(res.Meta.Extra)+1)
		for k, v := range res.Meta.Extra {
			meta.Extra[k] = v
		}
	} else {
		meta.Extra = make(map[string]json.RawMessage, 1)
	}
	meta.Extra[MetaRelatedTask] = related
	res.Meta = meta
	return res, nil
}

// inputRequired returns the task's outstanding input requests as the
// input_required result the legacy session turns into requests to its
// client.
func inputRequired(rec *Record) *protocol.InputRequiredResult {
	reqs := make(map[string]*protocol.InputRequest, len(rec.InputRequests))
	for k, raw := range rec.InputRequests {
		var in struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(raw, &in) != nil {
			continue
		}
		ir := &protocol.InputRequest{Method: in.Method}
		if len(in.Params) > 0 {
			ir.Params = in.Params
		}
		reqs[k] = ir
	}
	return &protocol.InputRequiredResult{InputRequests: reqs}
}

// serveList answers tasks/list: the caller's unexpired tasks, a page at a
// time, after an opaque cursor (the last task id of the page before).
func (x *Extension) serveList(ctx context.Context, r *server.Request) (protocol.Result, error) {
	if !legacyDeclared(r) {
		return nil, notDeclared(r.Method)
	}
	lister, ok := x.store.(Lister)
	if !ok {
		return nil, protocol.MethodNotFound(r.Method)
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	if err := r.DecodeParams(&p); err != nil {
		return nil, err
	}
	after := ""
	if p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		if len(p.Cursor) > 2*maxIDLen || err != nil || len(b) > maxIDLen {
			return nil, protocol.InvalidParams("tasks/list: invalid cursor")
		}
		after = string(b)
	}
	recs, err := lister.List(ctx, r.Principal, after, listPage+1)
	if err != nil {
		return nil, storeError("listing tasks", err)
	}
	res := &legacyListResult{Tasks: make([]legacyTask, 0, min(len(recs), listPage))}
	if len(recs) > listPage {
		recs = recs[:listPage]
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(recs[len(recs)-1].ID))
	}
	for _, rec := range recs {
		res.Tasks = append(res.Tasks, rec.legacyWire())
	}
	return res, nil
}
