package conformance

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestConformanceTypeScriptTasksClient: the official TypeScript Tasks
// client (@modelcontextprotocol/ext-tasks, pinned in package.json) calls
// two of the everything-server's tools over revision 2026-07-28 with the
// Tasks extension declared: slow_compute, which becomes a task and is
// polled to its result, and confirm_delete, a task that asks for
// confirmation, answered through tasks/update. Both end with the results
// the tools return.
func TestConformanceTypeScriptTasksClient(t *testing.T) {
	bin := suiteBin(t)
	url := serveTasksEverything(t)
	out := runNodeClient(t, bin, "tasks-client.mjs", url)
	type result struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	var got struct {
		Era   string            `json:"era"`
		Calls map[string]result `json:"calls"`
		Seen  struct {
			ResultTypes []string `json:"resultTypes"`
			Methods     []string `json:"methods"`
		} `json:"seen"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	t.Logf("client saw: %s", out)
	if got.Era != "modern" {
		t.Errorf("era %q, want modern", got.Era)
	}
	for tool, want := range map[string]string{
		"slow_compute":   "Computed from typescript in 1s",
		"confirm_delete": "Deleted ts.txt",
	} {
		r := got.Calls[tool]
		if r.IsError || len(r.Content) != 1 || r.Content[0].Text != want {
			t.Errorf("%s: %+v, want the text %q", tool, r, want)
		}
	}
	// Both calls became tasks: the server answered tools/call with a task,
	// the client polled tasks/get and answered the input through tasks/update.
	if n := countOf(got.Seen.ResultTypes, "task"); n != 2 {
		t.Errorf("%d task results, want 2 (seen %v)", n, got.Seen.ResultTypes)
	}
	for _, m := range []string{"tools/call", "tasks/get", "tasks/update"} {
		if !slices.Contains(got.Seen.Methods, m) {
			t.Errorf("the client never sent %s (sent %v)", m, got.Seen.Methods)
		}
	}
}

// serveTasksEverything serves the everything-server with the Tasks
// extension at /mcp on loopback for the test, and returns its URL.
func serveTasksEverything(t *testing.T) string {
	srv, tx := everything.NewWithTasks(nil, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable.NewHandler(srv, nil))
	addr := serveLoopback(t, mux)
	t.Cleanup(func() { tx.Close(); srv.Close() })
	return "http://" + addr + "/mcp"
}

// countOf is how many elements of s are v.
func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
