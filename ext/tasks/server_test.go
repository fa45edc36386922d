package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// TestSameResultEitherWay: the client returns the same result for a tool
// whether the server ran it as a task (the client declared the extension)
// or synchronously (it did not), and the task path was really taken.
func TestSameResultEitherWay(t *testing.T) {
	ctx := testCtx(t)
	s, _ := testServer(t, nil, nil)
	var seen []tasks.Status
	withTasks := connect(t, s, true, nil)
	plain := connect(t, s, false, nil)
	for _, args := range []map[string]any{{"ms": 150}, {"ms": 1, "promote": true}, {"ms": 0}} {
		got, err := withTasks.CallTool(tasks.WithStatus(ctx, func(tk *tasks.Task) { seen = append(seen, tk.Status) }), "slow", args, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.CallTool(ctx, "slow", args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: as a task %+v, synchronously %+v", args, got, want)
		}
	}
	// The first two calls became tasks (working, then completed each);
	// the instant one did not.
	if len(seen) < 4 || seen[0] != tasks.Working || seen[len(seen)-1] != tasks.Completed {
		t.Errorf("statuses seen %v, want tasks followed to completion", seen)
	}
	// A tool error is a completed task whose result has isError, as the
	// synchronous call returns it.
	got, err := withTasks.CallTool(ctx, "toolerror", nil, nil)
	if err != nil || !got.IsError {
		t.Errorf("toolerror: %+v, %v; want an isError result", got, err)
	}
	// A JSON-RPC error fails the task and is the call's error.
	_, err = withTasks.CallTool(ctx, "broken", nil, nil)
	if code(err) != -32000 || !strings.Contains(err.Error(), "backend down") {
		t.Errorf("broken: %v, want the -32000 error", err)
	}
}

// TestCreateResultShape: the CreateTaskResult is flat, exists before it is
// sent (an immediate tasks/get finds it), and tasks/get reports the
// inlined result once completed, without related-task _meta.
func TestCreateResultShape(t *testing.T) {
	ctx := testCtx(t)
	s, _ := testServer(t, &tasks.Options{TTL: time.Minute, PollInterval: 250 * time.Millisecond}, nil)
	raw, err := rpc(ctx, s, "", true, protocol.MethodToolsCall, map[string]any{"name": "slow", "arguments": map[string]any{"ms": 20, "promote": true}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		if m[k] == nil {
			t.Errorf("CreateTaskResult without %s: %s", k, raw)
		}
	}
	for _, k := range []string{"task", "result", "error", "inputRequests", "requestState", "ttl", "pollInterval"} {
		if m[k] != nil {
			t.Errorf("CreateTaskResult with %s: %s", k, raw)
		}
	}
	if string(m["resultType"]) != `"task"` || string(m["ttlMs"]) != "60000" || string(m["pollIntervalMs"]) != "250" {
		t.Errorf("CreateTaskResult %s", raw)
	}
	tk := decodeTask(t, raw)
	if len(tk.TaskID) != 22 {
		t.Errorf("task id %q: want 128 bits, base64url", tk.TaskID)
	}
	if _, err := rpc(ctx, s, "", true, tasks.MethodGet, map[string]any{"taskId": tk.TaskID}); err != nil {
		t.Fatalf("an immediate tasks/get: %v", err)
	}
	done := waitStatus(t, ctx, s, "", tk.TaskID, tasks.Completed)
	if done.Status != tasks.Completed || string(done.Result) != `{"resultType":"complete","content":[{"type":"text","text":"slept 20 ms"}]}` {
		t.Errorf("completed task %+v, result %s", done, done.Result)
	}
}

// TestCapabilityGate: a Must tool refuses a client that did not declare
// the extension with -32021 naming it; the task methods refuse it too; a
// May tool runs synchronously for it.
func TestCapabilityGate(t *testing.T) {
	ctx := testCtx(t)
	s, _ := testServer(t, nil, newGate())
	_, err := rpc(ctx, s, "", false, protocol.MethodToolsCall, map[string]any{"name": "held", "arguments": map[string]any{"text": "x"}})
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != protocol.CodeMissingRequiredClientCapability || !strings.Contains(string(e.Data), `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Errorf("Must tool without the extension: %v (%s)", err, e.Data)
	}
	for _, m := range []string{tasks.MethodGet, tasks.MethodUpdate, tasks.MethodCancel} {
		if _, err := rpc(ctx, s, "", false, m, map[string]any{"taskId": "x"}); code(err) != protocol.CodeMissingRequiredClientCapability {
			t.Errorf("%s without the extension: %v", m, err)
		}
	}
	raw, err := rpc(ctx, s, "", false, protocol.MethodToolsCall, map[string]any{"name": "slow", "arguments": map[string]any{"ms": 100, "promote": true}})
	if err != nil || strings.Contains(string(raw), "taskId") || !strings.Contains(string(raw), "slept 100 ms") {
		t.Errorf("May tool without the extension: %s, %v", raw, err)
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if _, err := rpc(ctx, s, "", true, m, map[string]any{"taskId": "x"}); code(err) != protocol.CodeMethodNotFound {
			t.Errorf("%s: %v, want -32601", m, err)
		}
	}
}

// TestOtherPrincipal: another principal can neither read, update nor
// cancel a task, nor listen to it: it is told the task does not exist,
// as for an unknown id; the owner still can.
func TestOtherPrincipal(t *testing.T) {
	ctx := testCtx(t)
	g := newGate()
	s, _ := testServer(t, nil, g)
	raw, err := rpc(ctx, s, "alice", true, protocol.MethodToolsCall, map[string]any{"name": "held", "arguments": map[string]any{"text": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	id := decodeTask(t, raw).TaskID
	<-g.started
	for _, m := range []string{tasks.MethodGet, tasks.MethodCancel, tasks.MethodUpdate} {
		for _, who := range []string{"bob", ""} {
			_, err := rpc(ctx, s, who, true, m, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
			if code(err) != protocol.CodeInvalidParams || !strings.Contains(err.Error(), "Task not found") {
				t.Errorf("%s by %q: %v, want -32602 task not found", m, who, err)
			}
		}
		if _, err := rpc(ctx, s, "alice", true, m, map[string]any{"taskId": "unknown-id"}); code(err) != protocol.CodeInvalidParams {
			t.Errorf("%s of an unknown id: %v", m, err)
		}
	}
	if tk := get(t, ctx, s, "alice", id); tk.Status != tasks.Working {
		t.Errorf("after bob's cancel the task is %s", tk.Status)
	}
	close(g.release)
	if tk := waitStatus(t, ctx, s, "alice", id, tasks.Completed); tk.Status != tasks.Completed {
		t.Errorf("task %+v", tk)
	}
}

// TestCancelStopsHandler: tasks/cancel cancels the handler's context; the
// task ends cancelled; a second cancel, and one of a finished task, are
// acknowledged alike.
func TestCancelStopsHandler(t *testing.T) {
	ctx := testCtx(t)
	g := newGate()
	s, _ := testServer(t, nil, g)
	raw, err := rpc(ctx, s, "", true, protocol.MethodToolsCall, map[string]any{"name": "held", "arguments": map[string]any{"text": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	id := decodeTask(t, raw).TaskID
	<-g.started
	if tk := get(t, ctx, s, "", id); tk.StatusMessage != "waiting for the gate" {
		t.Errorf("status message %q", tk.StatusMessage)
	}
	for i := 0; i < 2; i++ {
		ack, err := rpc(ctx, s, "", true, tasks.MethodCancel, map[string]any{"taskId": id})
		if err != nil || string(ack) != `{"resultType":"complete"}` {
			t.Fatalf("cancel %d: %s, %v", i, ack, err)
		}
	}
	select {
	case err := <-g.stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the handler ended with %v, want its context cancelled", err)
		}
	case <-ctx.Done():
		t.Fatal("the handler was not stopped")
	}
	if tk := waitStatus(t, ctx, s, "", id, tasks.Cancelled); tk.Status != tasks.Cancelled {
		t.Errorf("task %+v", tk)
	}
}

// TestInputRequired: a task that asks for input reports input_required
// with its inputRequests; tasks/update with answers under other keys
// changes nothing; the answer resumes it through the same handler code;
// and the client middleware does all this with the application's
// elicitation handler.
func TestInputRequired(t *testing.T) {
	ctx := testCtx(t)
	s, _ := testServer(t, nil, nil)
	raw, err := rpc(ctx, s, "", true, protocol.MethodToolsCall, map[string]any{"name": "ask"})
	if err != nil {
		t.Fatal(err)
	}
	id := decodeTask(t, raw).TaskID
	tk := waitStatus(t, ctx, s, "", id, tasks.InputRequired)
	if tk.Status != tasks.InputRequired || !strings.Contains(string(tk.InputRequests["name"]), `"method":"elicitation/create"`) {
		t.Fatalf("task %+v", tk)
	}
	if _, err := rpc(ctx, s, "", true, tasks.MethodUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{"other": map[string]any{"action": "accept"}}}); err != nil {
		t.Fatal(err)
	}
	if tk := waitStatus(t, ctx, s, "", id, tasks.InputRequired); tk.Status != tasks.InputRequired {
		t.Fatalf("after an answer to nothing asked: %+v", tk)
	}
	if _, err := rpc(ctx, s, "", true, tasks.MethodUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}); err != nil {
		t.Fatal(err)
	}
	tk = waitStatus(t, ctx, s, "", id, tasks.Completed)
	if tk.Status != tasks.Completed || !strings.Contains(string(tk.Result), "Hello, Ada!") {
		t.Fatalf("task %+v %s", tk, tk.Result)
	}

	asked := 0
	sess := connect(t, s, true, &client.Options{Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		asked++
		return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Grace"}}, nil
	}})
	res, err := sess.CallTool(ctx, "ask", nil, nil)
	if err != nil || res.Content[0].(*protocol.TextContent).Text != "Hello, Grace!" || asked != 1 {
		t.Fatalf("through the client: %+v, %v (asked %d times)", res, err, asked)
	}
}

// TestDetachAndResume: a client that leaves once its call became a task,
// and a new client of the same principal that resumes it by id, gets the
// result; cancelling the context of a wait cancels the task.
func TestDetachAndResume(t *testing.T) {
	ctx := testCtx(t)
	g := newGate()
	s, _ := testServer(t, nil, g)
	h := as(s, "alice")
	first := connect(t, h, true, nil)
	_, err := first.CallTool(tasks.Detach(ctx), "held", map[string]any{"text": "later"}, nil)
	var started *tasks.StartedError
	if !errors.As(err, &started) {
		t.Fatalf("detached call: %v, want a StartedError", err)
	}
	first.Close()
	<-g.started
	close(g.release)
	second := connect(t, h, true, nil)
	res, err := tasks.WaitTool(ctx, second, started.Task.TaskID, nil)
	if err != nil || res.Content[0].(*protocol.TextContent).Text != "released later" {
		t.Fatalf("resumed: %+v, %v", res, err)
	}
	if _, err := tasks.Get(ctx, connect(t, as(s, "bob"), true, nil), started.Task.TaskID); code(err) != protocol.CodeInvalidParams {
		t.Errorf("bob's tasks/get: %v", err)
	}

	// A wait given up cancels the task.
	g2 := newGate()
	s2, _ := testServer(t, nil, g2)
	sess := connect(t, s2, true, nil)
	wctx, cancel := context.WithCancel(ctx)
	wctx = tasks.WithStatus(wctx, func(tk *tasks.Task) {
		if tk.Status == tasks.Working {
			cancel() // once the call is a task, whose id the client knows
		}
	})
	if _, err := sess.CallTool(wctx, "held", map[string]any{"text": "x"}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	if err := <-g2.stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("the handler of a given-up wait ended with %v", err)
	}
}
