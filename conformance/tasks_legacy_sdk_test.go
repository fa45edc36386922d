package conformance

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestConformanceTypeScriptLegacyTasksClient: the official TypeScript
// SDK's Client (@modelcontextprotocol/sdk, pinned) negotiates revision
// 2025-11-25 with the everything-server, declares that revision's tasks
// capability and calls slow_compute and confirm_delete as tasks
// (params.task), following them to their results through tasks/get and
// tasks/result (confirm_delete's confirmation arriving as an
// elicitation/create on the tasks/result stream), lists its tasks and
// cancels a failing_job task.
func TestConformanceTypeScriptLegacyTasksClient(t *testing.T) {
	bin := suiteBin(t)
	url := serveTasksEverything(t)
	out := runNodeClient(t, bin, "tasks-legacy-client.mjs", url)
	t.Logf("client saw: %s", out)
	var got struct {
		ServerTasks *struct {
			Requests struct {
				Tools struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"serverTasks"`
		TaskSupport map[string]string          `json:"taskSupport"`
		Calls       map[string]json.RawMessage `json:"calls"`
		Messages    map[string][]string        `json:"messages"`
		Elicited    []string                   `json:"elicited"`
		Listed      []string                   `json:"listed"`
		Cancelled   string                     `json:"cancelled"`
		AfterCancel string                     `json:"afterCancel"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if got.ServerTasks == nil || got.ServerTasks.Requests.Tools.Call == nil {
		t.Errorf("the initialize result's tasks capability: %s", out)
	}
	if got.TaskSupport["slow_compute"] != "optional" || got.TaskSupport["failing_job"] != "required" || got.TaskSupport["greet"] != "" {
		t.Errorf("taskSupport: %v", got.TaskSupport)
	}
	for tool, want := range map[string]string{
		"slow_compute":   "Computed from typescript in 1s",
		"confirm_delete": "Deleted ts.txt",
	} {
		var r struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(got.Calls[tool], &r); err != nil || r.IsError || len(r.Content) != 1 || r.Content[0].Text != want {
			t.Errorf("%s: %s, want the text %q", tool, got.Calls[tool], want)
		}
		if m := got.Messages[tool]; len(m) == 0 || m[0] != "taskCreated" || m[len(m)-1] != "result" {
			t.Errorf("%s: the stream's messages %v, want taskCreated first and result last", tool, m)
		}
		var id string
		_ = json.Unmarshal(got.Calls[tool+":taskId"], &id)
		if id == "" || !slices.Contains(got.Listed, id) {
			t.Errorf("%s: task %q not in tasks/list %v", tool, id, got.Listed)
		}
	}
	if len(got.Elicited) != 1 || got.Elicited[0] != "Delete ts.txt?" {
		t.Errorf("elicitations: %q", got.Elicited)
	}
	if got.Cancelled != "cancelled" || got.AfterCancel != "cancelled" {
		t.Errorf("cancelled failing_job: %q then %q", got.Cancelled, got.AfterCancel)
	}
}
