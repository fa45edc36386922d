package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// TestURLElicitationModern: revision 2026-07-28 has neither elicitationId
// nor notifications/elicitation/complete; the handler's id stays out of
// the input request, and ElicitationComplete does nothing.
func TestURLElicitationModern(t *testing.T) {
	s := newTestServer(nil)
	var completeErr error
	AddTool(s, &protocol.Tool{Name: "signin"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		p := &protocol.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/signin", ElicitationID: "e-1"}
		res, err := req.Elicit("u", p)
		if err != nil {
			return "", err
		}
		if p.ElicitationID != "e-1" {
			t.Errorf("Elicit changed the handler's params: %+v", p)
		}
		completeErr = req.ElicitationComplete("e-1")
		return res.Action, nil
	})
	const caps = `{"elicitation":{"url":{}}}`
	n := &collector{}
	r := result(t, doWith(t, context.Background(), s, protocol.MethodToolsCall, params(t, map[string]any{"name": "signin"}, caps), n))
	ir := string(mustJSON(r["inputRequests"]))
	if want := `{"u":{"method":"elicitation/create","params":{"message":"Sign in","mode":"url","url":"https://example.com/signin"}}}`; ir != want {
		t.Errorf("inputRequests\n got %s\nwant %s", ir, want)
	}
	r = callTool(t, s, caps, map[string]any{"name": "signin", "requestState": r["requestState"],
		"inputResponses": map[string]any{"u": map[string]any{"action": "accept"}}})
	if r["resultType"] != "complete" || !strings.Contains(string(mustJSON(r["content"])), "accept") {
		t.Fatalf("retry = %v", r)
	}
	if completeErr != nil {
		t.Errorf("ElicitationComplete on a modern request = %v, want nil", completeErr)
	}
	if got := n.all(); len(got) != 0 {
		t.Errorf("notifications sent: %s", got)
	}
	if err := s.ElicitationComplete("e-1"); !errors.Is(err, legacy.ErrUnknownElicitation) {
		t.Errorf("Server.ElicitationComplete = %v, want legacy.ErrUnknownElicitation", err)
	}
}
