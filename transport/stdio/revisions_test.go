package stdio_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// newRevisionServer returns a server whose features carry members of
// every legacy revision:
//
//	weather  title, outputSchema, annotations, icons; returns
//	         structuredContent and its text
//	signin   asks for a URL elicitation with elicitationId "e-1" and, once
//	         accepted, announces its completion
func newRevisionServer(t *testing.T) *server.Server {
	t.Helper()
	srv := server.New(protocol.Implementation{Name: "rev", Version: "1", Title: "Revisions",
		Icons: []protocol.Icon{{Src: "https://example.com/s.png"}}}, nil)
	t.Cleanup(func() { srv.Close() })
	readOnly := true
	type forecast struct {
		Sky string `json:"sky"`
	}
	server.AddTool(srv, &protocol.Tool{Name: "weather", Title: "Weather",
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: &readOnly},
		Icons:       []protocol.Icon{{Src: "https://example.com/w.png"}},
	}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (forecast, error) {
		return forecast{Sky: "clear"}, nil
	})
	server.AddTool(srv, &protocol.Tool{Name: "signin"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		res, err := req.Elicit("signin", &protocol.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/signin", ElicitationID: "e-1"})
		if err != nil {
			return "", err
		}
		if res.Action == protocol.ElicitAccept {
			if err := req.ElicitationComplete("e-1"); err != nil {
				return "", err
			}
		}
		return res.Action, nil
	})
	return srv
}

// startRevision serves newRevisionServer over stdio and initializes a
// session at version with the client capabilities caps, returning the
// client and the initialize result.
func startRevision(t *testing.T, version, caps string) (*dualClient, json.RawMessage) {
	t.Helper()
	checkLeaks(t)
	c := &dualClient{pipeConn: startConn(t, newRevisionServer(t), nil), t: t, responses: map[string]string{}}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"c","version":"1"}}}`)
	init := resultOf(t, c.response("0"))
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c, init
}

// TestLegacyRevisionShapes: each legacy revision's session gets the members
// its schema defines, and none a later revision added.
func TestLegacyRevisionShapes(t *testing.T) {
	later := []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `"io.modelcontextprotocol/serverInfo"`}
	tests := []struct {
		version     string
		has, hasNot []string // in initialize, tools/list and tools/call
	}{
		{
			version: "2024-11-05",
			hasNot:  []string{`"title"`, `"outputSchema"`, `"structuredContent"`, `"annotations"`, `"icons"`, `"completions"`},
		},
		{
			version: "2025-03-26",
			has:     []string{`"annotations":{"readOnlyHint":true}`},
			hasNot:  []string{`"title"`, `"outputSchema"`, `"structuredContent"`, `"icons"`},
		},
		{
			version: "2025-06-18",
			has:     []string{`"annotations":{"readOnlyHint":true}`, `"title":"Weather"`, `"title":"Revisions"`, `"outputSchema"`, `"structuredContent":{"sky":"clear"}`},
			hasNot:  []string{`"icons"`},
		},
		{
			version: "2025-11-25",
			has:     []string{`"annotations":{"readOnlyHint":true}`, `"title":"Weather"`, `"outputSchema"`, `"structuredContent":{"sky":"clear"}`, `"icons":[{"src":"https://example.com/w.png"}]`, `"icons":[{"src":"https://example.com/s.png"}]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			c, init := startRevision(t, tt.version, `{}`)
			if v, _ := jsonrpc.StringValue(member(init, "protocolVersion")); v != tt.version {
				t.Fatalf("negotiated %q, want %q: %s", v, tt.version, init)
			}
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, legacyCall("2", "weather", `{}`))
			list := resultOf(t, c.response("1"))
			call := resultOf(t, c.response("2"))
			all := string(init) + "\n" + string(list) + "\n" + string(call)
			for _, m := range tt.has {
				if !strings.Contains(all, m) {
					t.Errorf("no %s in\n%s", m, all)
				}
			}
			for _, m := range append(tt.hasNot, later...) {
				if strings.Contains(all, m) {
					t.Errorf("%s in\n%s", m, all)
				}
			}
			if got := member(call, "content"); string(got) != `[{"type":"text","text":"{\"sky\":\"clear\"}"}]` {
				t.Errorf("content %s, want the structured content's text", got)
			}
		})
	}
}

// TestLegacyURLElicitation: a 2025-11-25 client that declared url mode is
// asked with mode url and the handler's elicitationId, answers, and is
// told of the completion before the response; others are refused.
func TestLegacyURLElicitation(t *testing.T) {
	c, _ := startRevision(t, "2025-11-25", `{"elicitation":{"url":{}}}`)
	c.send(legacyCall("7", "signin", `{}`))
	line := c.request()
	want := `{"jsonrpc":"2.0","id":"mcpkit-1","method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/signin","elicitationId":"e-1"}}`
	if line != want {
		t.Fatalf("elicitation/create\n got %s\nwant %s", line, want)
	}
	c.send(`{"jsonrpc":"2.0","id":"mcpkit-1","result":{"action":"accept"}}`)
	// The notification comes first, on the request's way.
	first := string(c.recv(5 * time.Second))
	if want := `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e-1"}}`; first != want {
		t.Errorf("after the answer\n got %s\nwant %s", first, want)
	}
	if got, want := c.response("7"), `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"accept"}]}}`; got != want {
		t.Errorf("tools/call\n got %s\nwant %s", got, want)
	}

	for _, tt := range []struct{ version, caps string }{
		{"2025-11-25", `{"elicitation":{}}`},
		{"2025-06-18", `{"elicitation":{"url":{}}}`},
		{"2024-11-05", `{"elicitation":{"url":{}}}`},
	} {
		t.Run(tt.version+tt.caps, func(t *testing.T) {
			c, _ := startRevision(t, tt.version, tt.caps)
			c.send(legacyCall("8", "signin", `{}`))
			want := `{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{"url":{}}}}}}`
			if got := c.response("8"); got != want {
				t.Errorf("tools/call\n got %s\nwant %s", got, want)
			}
			if len(c.requests) != 0 {
				t.Errorf("the client was asked: %q", c.requests)
			}
		})
	}
}

// TestBatches: a 2025-03-26 session's batch line gets one array line with
// the responses of its requests, errors of invalid members included (that
// revision's servers must take batches); a session of another revision
// gets an error.
func TestBatches(t *testing.T) {
	c, _ := startRevision(t, protocol.Version2025_03_26, `{}`)
	c.send(`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` +
		`{"jsonrpc":"2.0","id":"b","method":"tools/list"},{"jsonrpc":"2.0","id":"c"},{"jsonrpc":"2.0","id":"d","method":"initialize","params":{}}]`)
	line := string(c.recv(5 * time.Second))
	var answers []struct {
		ID     string          `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &answers); err != nil {
		t.Fatalf("batch answered %s: %v", line, err)
	}
	got := map[string]string{}
	for _, a := range answers {
		switch {
		case a.Error != nil:
			got[a.ID] = "error"
		case a.Result != nil:
			got[a.ID] = "result"
		}
	}
	if len(answers) != 4 || got["a"] != "result" || got["b"] != "result" || got["c"] != "error" || got["d"] != "error" {
		t.Errorf("batch answered %s", line)
	}

	c2, _ := startRevision(t, protocol.Version2025_06_18, `{}`)
	c2.send(`[{"jsonrpc":"2.0","id":"a","method":"ping"}]`)
	if line := string(c2.recv(5 * time.Second)); !strings.Contains(line, `"code":-32600`) || strings.HasPrefix(line, "[") {
		t.Errorf("a 2025-06-18 batch answered %s", line)
	}
}
