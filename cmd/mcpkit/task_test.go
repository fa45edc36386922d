package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/conformance/everything"
)

// newEverythingTasks serves the everything fixtures with the Tasks
// extension and its task tools, and returns the endpoint URL.
func newEverythingTasks(t *testing.T) string {
	t.Helper()
	srv, tx := everything.NewWithTasks(nil, nil)
	t.Cleanup(func() { tx.Close() }) // runs first: before the server closes
	return serveCore(t, srv)
}

// TestCallTask: call --task follows a task to its result and shows its
// status (JSON lines on stderr off a terminal, a line on a terminal);
// --detach prints the task id, and task get, wait and cancel resume it by
// id from other runs; wait answers a task's input (--answer) through
// tasks/update; without --task the same tool answers synchronously.
func TestCallTask(t *testing.T) {
	url := newEverythingTasks(t)

	r := mcpkit(t, "call", url, "slow_compute", "seconds=0.3", "label=x", "--task")
	if r.code != exitOK || r.stdout != "Computed x in 0.3s\n" {
		t.Fatalf("call --task: %d %q %s", r.code, r.stdout, r.stderr)
	}
	var first struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	}
	line, _, _ := strings.Cut(r.stderr, "\n")
	if err := json.Unmarshal([]byte(line), &first); err != nil || first.TaskID == "" || first.Status != "working" {
		t.Errorf("status lines: %q (%v)", r.stderr, err)
	}
	if !strings.Contains(r.stderr, `"status":"completed"`) {
		t.Errorf("no completed status line: %q", r.stderr)
	}
	r = mcpkit(t, "call", url, "slow_compute", "seconds=0.3", "label=y")
	if r.code != exitOK || r.stdout != "Computed y in 0.3s\n" || r.stderr != "" {
		t.Errorf("call without --task: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = mcpkitWith(t, terminal{stderr: true}, "", "call", url, "slow_compute", "seconds=0.3", "label=z", "--task")
	if r.code != exitOK || r.stdout != "Computed z in 0.3s\n" || !strings.Contains(r.stderr, "the call is task ") ||
		!strings.Contains(r.stderr, "task working") {
		t.Errorf("call --task on a terminal: %d %q %q", r.code, r.stdout, r.stderr)
	}

	detach := func(args ...string) string {
		t.Helper()
		r := mcpkit(t, append([]string{"call", url, "--task", "--detach"}, args...)...)
		id := strings.TrimSpace(r.stdout)
		if r.code != exitOK || id == "" || strings.Contains(id, "\n") {
			t.Fatalf("call --detach %v: %d %q %s", args, r.code, r.stdout, r.stderr)
		}
		return id
	}
	id := detach("slow_compute", "seconds=0.3", "label=later")
	r = mcpkit(t, "task", "get", url, id)
	if r.code != exitOK || !strings.Contains(r.stdout, `"taskId": "`+id+`"`) {
		t.Errorf("task get: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = mcpkit(t, "task", "wait", url, id)
	if r.code != exitOK || r.stdout != "Computed later in 0.3s\n" {
		t.Errorf("task wait: %d %q %s", r.code, r.stdout, r.stderr)
	}

	id = detach("confirm_delete", "filename=a.txt")
	r = mcpkit(t, "task", "wait", url, id, "--answer", "confirm=true")
	if r.code != exitOK || r.stdout != "Deleted a.txt\n" {
		t.Errorf("task wait --answer: %d %q %s", r.code, r.stdout, r.stderr)
	}

	id = detach("slow_compute", "seconds=600")
	if r = mcpkit(t, "task", "cancel", url, id); r.code != exitOK {
		t.Errorf("task cancel: %d %s", r.code, r.stderr)
	}
	r = mcpkit(t, "task", "wait", url, id)
	if r.code != exitFailed || !strings.Contains(r.stderr, "cancelled") {
		t.Errorf("task wait of a cancelled task: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = mcpkit(t, "task", "get", url, "no-such-task")
	if r.code != exitFailed || !strings.Contains(r.stderr, "no-such-task") && !strings.Contains(r.stderr, "task") {
		t.Errorf("task get of an unknown id: %d %q %s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"task"}, {"task", "list", url}, {"task", "get", url}, {"task", "get", url, "a", "b"}} {
		if r = mcpkit(t, args...); r.code != exitUsage {
			t.Errorf("%v: %d %s", args, r.code, r.stderr)
		}
	}
}
