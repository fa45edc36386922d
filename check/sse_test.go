package check

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/sse"
)

// sseChecks counts the catalog's HTTP+SSE checks, which only an HTTP+SSE
// endpoint gets (and it gets only them, after era.detect).
var sseChecks = func() int {
	n := 0
	for id := range catalog {
		if strings.HasPrefix(id, "sse.") {
			n++
		}
	}
	return n
}()

// TestSSE: an HTTP+SSE endpoint is found the way clients find it (a
// refused initialize, then the GET) and gets the HTTP+SSE checks only; a
// server whose message endpoint refuses the messages fails them.
func TestSSE(t *testing.T) {
	core := everything.New(&server.Options{Legacy: legacy.Options{ModernDisabled: true, Versions: []string{protocol.Version2024_11_05}}})
	t.Cleanup(func() { core.Close() })
	rep := runCheck(t, sse.NewHandler(core, nil), Options{})
	if rep.Era != eraSSE || !rep.OK() {
		t.Fatalf("era %q, report %+v", rep.Era, rep.Results)
	}
	want := map[string]Status{"era.detect": Pass, "sse.endpoint": Pass, "sse.initialize": Pass, "sse.lists": Pass}
	got := statuses(rep)
	if len(got) != len(want) || len(want) != sseChecks+1 {
		t.Errorf("checks %v, want %v", got, want)
	}
	for id, s := range want {
		if got[id] != s {
			t.Errorf("%s: %s, want %s", id, got[id], s)
		}
	}
	for _, r := range rep.Results {
		if r.ID == "sse.initialize" && r.Got != "protocolVersion 2024-11-05, server mcpkit-everything-server" {
			t.Errorf("sse.initialize got %q", r.Got)
		}
	}

	// An endpoint announced, and every POST refused.
	broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("event: endpoint\ndata: /sse?sessionId=x\n\n"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		http.Error(w, "no", http.StatusMethodNotAllowed)
	})
	rep = runCheck(t, broken, Options{Timeout: 2e9})
	if got := statuses(rep); got["sse.endpoint"] != Pass || got["sse.initialize"] != Fail || got["sse.lists"] != Skip {
		t.Errorf("broken server: %v", got)
	}
}
