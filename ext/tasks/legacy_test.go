package tasks_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/ext/tasks"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// TestLegacyClientsGetNoTasks: a legacy-era client that does not declare
// the 2025-11-25 tasks capability, even one that declares the extension
// (as mcpkit's client does), is never sent a task: a May tool answers
// synchronously, a Must tool is refused (-32021, which the legacy era
// reports as -32600).
func TestLegacyClientsGetNoTasks(t *testing.T) {
	s, _ := testServer(t, nil, nil)
	both := legacy.New(s, nil)
	t.Cleanup(func() { both.Close() })
	for _, declare := range []bool{false, true} {
		sess := connect(t, both, declare, &client.Options{Era: client.EraLegacy})
		if sess.Era() != client.EraLegacy {
			t.Fatalf("era %v", sess.Era())
		}
		ctx := testCtx(t)
		res, err := sess.CallTool(ctx, "slow", map[string]any{"ms": 200}, nil)
		if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*protocol.TextContent).Text != "slept 200 ms" {
			t.Errorf("declared %v: slow: %+v %v", declare, res, err)
		}
		_, err = sess.CallTool(ctx, "held", map[string]any{"text": "x"}, nil)
		if c := code(err); c != protocol.CodeMissingRequiredClientCapability && c != -32600 {
			t.Errorf("declared %v: held: %v, want the missing capability", declare, err)
		}
	}
}

const legacyCaps = `{"tasks":{"cancel":{},"list":{}},"elicitation":{}}`

type legacyTaskWire struct {
	TaskID        string       `json:"taskId"`
	Status        tasks.Status `json:"status"`
	StatusMessage string       `json:"statusMessage"`
	CreatedAt     string       `json:"createdAt"`
	LastUpdatedAt string       `json:"lastUpdatedAt"`
	TTL           *int64       `json:"ttl"`
	PollInterval  int64        `json:"pollInterval"`
}

func decodeLegacyTask(t testing.TB, raw json.RawMessage) legacyTaskWire {
	t.Helper()
	var tk legacyTaskWire
	if err := json.Unmarshal(raw, &tk); err != nil || tk.TaskID == "" || tk.CreatedAt == "" || tk.LastUpdatedAt == "" || tk.TTL == nil {
		t.Fatalf("not a 2025-11-25 task: %s (%v)", raw, err)
	}
	return tk
}

// startLegacy calls tool with params.task and returns the task of the
// CreateTaskResult.
func startLegacy(t testing.TB, c *legacyClient, tool string, args map[string]any, ttl int64) legacyTaskWire {
	t.Helper()
	raw, e := c.call("tools/call", map[string]any{"name": tool, "arguments": args, "task": map[string]any{"ttl": ttl}})
	if e != nil {
		t.Fatalf("tools/call %s as a task: %v", tool, e)
	}
	var res struct {
		Task       json.RawMessage `json:"task"`
		ResultType string          `json:"resultType"`
		Content    json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Task == nil || res.ResultType != "" || res.Content != nil {
		t.Fatalf("not a 2025-11-25 CreateTaskResult: %s", raw)
	}
	return decodeLegacyTask(t, res.Task)
}

// TestLegacyTaskLifecycle: a 2025-11-25 client that declared the tasks
// capability sees it advertised, the tools' taskSupport, creates a task
// with params.task, reads it with tasks/get and tasks/list, gets its
// result with tasks/result (related-task _meta) and cancels another.
func TestLegacyTaskLifecycle(t *testing.T) {
	g := newGate()
	s, _ := testServer(t, nil, g)
	legacyTransports(t, s, "", func(t *testing.T, open func(version, caps string) (*legacyClient, json.RawMessage)) {
		c, init := open("2025-11-25", legacyCaps)
		var ir struct {
			Capabilities struct {
				Tasks *struct {
					List     json.RawMessage `json:"list"`
					Cancel   json.RawMessage `json:"cancel"`
					Requests struct {
						Tools struct {
							Call json.RawMessage `json:"call"`
						} `json:"tools"`
					} `json:"requests"`
				} `json:"tasks"`
				Extensions json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(init, &ir); err != nil || ir.Capabilities.Tasks == nil || ir.Capabilities.Tasks.Requests.Tools.Call == nil ||
			ir.Capabilities.Tasks.List == nil || ir.Capabilities.Tasks.Cancel == nil || ir.Capabilities.Extensions != nil {
			t.Fatalf("initialize result: %s", init)
		}

		raw, e := c.call("tools/list", map[string]any{})
		if e != nil {
			t.Fatal(e)
		}
		var tl struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution *struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(raw, &tl)
		support := map[string]string{}
		for _, tool := range tl.Tools {
			if tool.Execution != nil {
				support[tool.Name] = tool.Execution.TaskSupport
			}
		}
		if support["slow"] != "optional" || support["held"] != "required" || support["echo"] != "" {
			t.Errorf("taskSupport: %v (%s)", support, raw)
		}

		// A task, polled, then its result through tasks/result.
		tk := startLegacy(t, c, "slow", map[string]any{"ms": 100}, 60_000)
		if tk.Status != tasks.Working || *tk.TTL != 60_000 {
			t.Errorf("created: %+v", tk)
		}
		raw, e = c.call("tasks/get", map[string]any{"taskId": tk.TaskID})
		if e != nil || decodeLegacyTask(t, raw).TaskID != tk.TaskID {
			t.Fatalf("tasks/get: %s %v", raw, e)
		}
		raw, e = c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
		if e != nil {
			t.Fatalf("tasks/result: %v", e)
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Meta       map[string]json.RawMessage `json:"_meta"`
			ResultType *string                    `json:"resultType"`
		}
		_ = json.Unmarshal(raw, &res)
		if len(res.Content) != 1 || res.Content[0].Text != "slept 100 ms" || res.ResultType != nil ||
			string(res.Meta["io.modelcontextprotocol/related-task"]) != `{"taskId":"`+tk.TaskID+`"}` {
			t.Errorf("tasks/result: %s", raw)
		}
		raw, _ = c.call("tasks/get", map[string]any{"taskId": tk.TaskID})
		if got := decodeLegacyTask(t, raw); got.Status != tasks.Completed {
			t.Errorf("after the result: %+v", got)
		}
		if _, e := c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID}); e == nil || e.Code != protocol.CodeInvalidParams {
			t.Errorf("cancelling a completed task: %v, want -32602", e)
		}

		// A Must tool's task, cancelled: the handler's context ends.
		held := startLegacy(t, c, "held", map[string]any{"text": "x"}, 0)
		if *held.TTL != time.Hour.Milliseconds() {
			t.Errorf("default ttl: %d", *held.TTL)
		}
		<-g.started
		raw, e = c.call("tasks/list", map[string]any{})
		if e != nil || !strings.Contains(string(raw), held.TaskID) || !strings.Contains(string(raw), tk.TaskID) {
			t.Errorf("tasks/list: %s %v", raw, e)
		}
		raw, e = c.call("tasks/cancel", map[string]any{"taskId": held.TaskID})
		if e != nil || decodeLegacyTask(t, raw).Status != tasks.Cancelled {
			t.Fatalf("tasks/cancel: %s %v", raw, e)
		}
		if err := <-g.stopped; err == nil {
			t.Error("the cancelled task's handler was not cancelled")
		}
		if _, e := c.call("tasks/result", map[string]any{"taskId": held.TaskID}); e == nil {
			t.Error("tasks/result of a cancelled task: no error")
		}
		g.startOne = sync.Once{}
		g.started = make(chan struct{})

		// Refusals of the revision: -32601 for a task of a Never tool and for
		// a Must tool called without one; -32602 for an unknown id.
		if _, e := c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}}); e == nil || e.Code != protocol.CodeMethodNotFound {
			t.Errorf("echo as a task: %v, want -32601", e)
		}
		if _, e := c.call("tools/call", map[string]any{"name": "held", "arguments": map[string]any{"text": "x"}}); e == nil || e.Code != protocol.CodeMethodNotFound {
			t.Errorf("held without a task: %v, want -32601", e)
		}
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			if _, e := c.call(m, map[string]any{"taskId": "AAAAAAAAAAAAAAAAAAAAAA"}); e == nil || e.Code != protocol.CodeInvalidParams {
				t.Errorf("%s of an unknown id: %v, want -32602", m, e)
			}
		}
		// May tool without params.task: synchronous.
		raw, e = c.call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"ms": 1}})
		if e != nil || !strings.Contains(string(raw), "slept 1 ms") {
			t.Errorf("slow without a task: %s %v", raw, e)
		}
	})
}

// TestLegacyTaskInput: a legacy task that asks for input is answered
// through tasks/result: the session sends elicitation/create to its
// client, the answer resumes the task, and tasks/result returns its
// result.
func TestLegacyTaskInput(t *testing.T) {
	s, _ := testServer(t, nil, nil)
	legacyTransports(t, s, "", func(t *testing.T, open func(version, caps string) (*legacyClient, json.RawMessage)) {
		c, _ := open("2025-11-25", legacyCaps)
		c.answer = func(method string, params json.RawMessage) any {
			if method != "elicitation/create" {
				t.Errorf("asked %s", method)
			}
			return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}
		}
		tk := startLegacy(t, c, "ask", nil, 60_000)
		raw, e := c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
		if e != nil || !strings.Contains(string(raw), "Hello, Ada!") || c.asked.Load() != 1 {
			t.Fatalf("tasks/result: %s %v (asked %d)", raw, e, c.asked.Load())
		}
	})
}

// TestLegacyTasksForeignAndUndeclared: another principal's task is
// unknown to a session (-32602); a 2025-11-25 client that did not declare
// the capability, and a 2025-06-18 one that did, never get a task: a call
// with params.task runs synchronously and the task methods are unknown.
func TestLegacyTasksForeignAndUndeclared(t *testing.T) {
	s, _ := testServer(t, nil, nil)
	alice, _ := openLegacy(t, as(s, "alice"), "", "2025-11-25", legacyCaps)
	tk := startLegacy(t, alice, "slow", map[string]any{"ms": 1}, 60_000)
	bob, _ := openLegacy(t, as(s, "bob"), "", "2025-11-25", legacyCaps)
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if _, e := bob.call(m, map[string]any{"taskId": tk.TaskID}); e == nil || e.Code != protocol.CodeInvalidParams {
			t.Errorf("%s of another's task: %v, want -32602", m, e)
		}
	}
	if raw, e := bob.call("tasks/list", map[string]any{}); e != nil || strings.Contains(string(raw), tk.TaskID) {
		t.Errorf("tasks/list shows another's task: %s %v", raw, e)
	}
	for _, open := range []struct{ version, caps string }{{"2025-11-25", `{"elicitation":{}}`}, {"2025-06-18", legacyCaps}} {
		c, init := openLegacy(t, as(s, "alice"), "", open.version, open.caps)
		if open.version != "2025-11-25" && strings.Contains(string(init), `"tasks"`) {
			t.Errorf("%s: initialize advertises tasks: %s", open.version, init)
		}
		raw, e := c.call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"ms": 1}, "task": map[string]any{"ttl": 1000}})
		if e != nil || !strings.Contains(string(raw), "slept 1 ms") || strings.Contains(string(raw), "taskId") {
			t.Errorf("%s %s: a call with params.task: %s %v", open.version, open.caps, raw, e)
		}
		if _, e := c.call("tasks/get", map[string]any{"taskId": tk.TaskID}); e == nil || e.Code != protocol.CodeMethodNotFound {
			t.Errorf("%s %s: tasks/get: %v, want -32601", open.version, open.caps, e)
		}
		raw, _ = c.call("tools/list", map[string]any{})
		if open.version != "2025-11-25" && strings.Contains(string(raw), "taskSupport") {
			t.Errorf("%s: tools/list: %s", open.version, raw)
		}
	}
}

// TestLegacyTaskStatusNotifications: the session that created a task gets
// notifications/tasks/status on its standalone stream as the task
// changes.
func TestLegacyTaskStatusNotifications(t *testing.T) {
	s, _ := testServer(t, nil, nil)
	c, _ := openLegacy(t, s, "", "2025-11-25", legacyCaps)
	tk := startLegacy(t, c, "slow", map[string]any{"ms": 1}, 60_000)
	ls := c.sess.(*legacy.Session)
	ctx := testCtx(t)
	for {
		msg, err := ls.Next(ctx)
		if err != nil {
			t.Fatalf("no completed status notification: %v", err)
		}
		var n struct {
			Method string         `json:"method"`
			Params legacyTaskWire `json:"params"`
		}
		if err := json.Unmarshal(msg, &n); err != nil || n.Method != "notifications/tasks/status" || n.Params.TaskID != tk.TaskID {
			continue
		}
		if n.Params.Status == tasks.Completed {
			break
		}
	}
}

// TestLegacyTasksList pages through a principal's tasks with an opaque
// cursor; a forged cursor is refused.
func TestLegacyTasksList(t *testing.T) {
	s, _ := testServer(t, nil, nil)
	c, _ := openLegacy(t, s, "", "2025-11-25", legacyCaps)
	want := map[string]bool{}
	for range 105 {
		want[startLegacy(t, c, "slow", map[string]any{"ms": 0}, 60_000).TaskID] = true
	}
	got := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, e := c.call("tasks/list", params)
		if e != nil || pages > 3 {
			t.Fatalf("tasks/list: %v (page %d)", e, pages)
		}
		var page struct {
			Tasks      []legacyTaskWire `json:"tasks"`
			NextCursor string           `json:"nextCursor"`
		}
		_ = json.Unmarshal(raw, &page)
		if len(page.Tasks) > 100 {
			t.Errorf("page %d: %d tasks, more than 100", pages, len(page.Tasks))
		}
		for _, tk := range page.Tasks {
			got[tk.TaskID] = true
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(got) != len(want) {
		t.Errorf("listed %d tasks, want %d", len(got), len(want))
	}
	if _, e := c.call("tasks/list", map[string]any{"cursor": strings.Repeat("x", 1000)}); e == nil || e.Code != protocol.CodeInvalidParams {
		t.Errorf("forged cursor: %v, want -32602", e)
	}
}

// TestLegacyToolErrorIsFailed: a tool result with isError is a failed
// task in the 2025-11-25 shape, and tasks/result returns that result.
func TestLegacyToolErrorIsFailed(t *testing.T) {
	s, _ := testServer(t, nil, nil)
	c, _ := openLegacy(t, s, "", "2025-11-25", legacyCaps)
	tk := startLegacy(t, c, "toolerror", nil, 60_000)
	raw, e := c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
	if e != nil || !strings.Contains(string(raw), `"isError":true`) {
		t.Fatalf("tasks/result: %s %v", raw, e)
	}
	raw, _ = c.call("tasks/get", map[string]any{"taskId": tk.TaskID})
	if got := decodeLegacyTask(t, raw); got.Status != tasks.Failed {
		t.Errorf("tasks/get: %+v, want failed", got)
	}
}
