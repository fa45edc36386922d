package streamable_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// addRevisionFixtures adds to the core:
//
//	weather  title, outputSchema, annotations, icons; returns
//	         structuredContent and its text
//	signin   a URL elicitation with elicitationId "e-1", whose completion
//	         it announces once accepted
//	later    a URL elicitation with elicitationId "e-2", completed later
func addRevisionFixtures(core *server.Server) {
	readOnly := true
	type forecast struct {
		Sky string `json:"sky"`
	}
	server.AddTool(core, &protocol.Tool{Name: "weather", Title: "Weather",
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: &readOnly},
		Icons:       []protocol.Icon{{Src: "https://example.com/w.png"}},
	}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (forecast, error) {
		return forecast{Sky: "clear"}, nil
	})
	url := func(id string, complete bool) func(context.Context, *server.CallRequest, struct{}) (string, error) {
		return func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.Elicit("signin", &protocol.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/signin", ElicitationID: id})
			if err != nil {
				return "", err
			}
			if complete && res.Action == protocol.ElicitAccept {
				if err := req.ElicitationComplete(id); err != nil {
					return "", err
				}
			}
			return res.Action, nil
		}
	}
	server.AddTool(core, &protocol.Tool{Name: "signin"}, url("e-1", true))
	server.AddTool(core, &protocol.Tool{Name: "later"}, url("e-2", false))
}

// revisionHeaders are the headers of a request of the session as a client
// of its revision sends them: MCP-Protocol-Version came in 2025-06-18.
func revisionHeaders(s *legacySession) http.Header {
	h := s.headers()
	if s.version < protocol.Version2025_06_18 {
		h.Del(streamable.HeaderProtocolVersion)
	}
	return h
}

// TestLegacyRevisionShapes: over HTTP, each legacy revision's session gets
// the members its schema defines, and none a later revision added.
func TestLegacyRevisionShapes(t *testing.T) {
	e := newLegacyEnv(t, nil, addRevisionFixtures, nil)
	later := []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `"io.modelcontextprotocol/serverInfo"`}
	tests := []struct {
		version     string
		has, hasNot []string // in tools/list and tools/call
	}{
		{
			version: "2024-11-05",
			hasNot:  []string{`"title"`, `"outputSchema"`, `"structuredContent"`, `"annotations"`, `"icons"`, `"_meta"`},
		},
		{
			version: "2025-03-26",
			has:     []string{`"annotations":{"readOnlyHint":true}`},
			hasNot:  []string{`"title"`, `"outputSchema"`, `"structuredContent"`, `"icons"`, `"_meta"`},
		},
		{
			version: "2025-06-18",
			has:     []string{`"annotations":{"readOnlyHint":true}`, `"title":"Weather"`, `"outputSchema"`, `"structuredContent":{"sky":"clear"}`},
			hasNot:  []string{`"icons"`},
		},
		{
			version: "2025-11-25",
			has:     []string{`"annotations":{"readOnlyHint":true}`, `"title":"Weather"`, `"outputSchema"`, `"structuredContent":{"sky":"clear"}`, `"icons":[{"src":"https://example.com/w.png"}]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			s := e.initialize(tt.version, `{}`)
			if s.version != tt.version {
				t.Fatalf("negotiated %q, want %q", s.version, tt.version)
			}
			var all []string
			for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, toolCall(2, "weather", `{}`)} {
				resp, b := e.exchange(http.MethodPost, revisionHeaders(s), body)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				r := decodeResponse(t, b)
				if r.Error != nil {
					t.Fatalf("%s: %s", body, b)
				}
				wantLegacyShape(t, body, r.Result)
				all = append(all, string(r.Result))
			}
			joined := strings.Join(all, "\n")
			for _, m := range tt.has {
				if !strings.Contains(joined, m) {
					t.Errorf("no %s in\n%s", m, joined)
				}
			}
			for _, m := range append(tt.hasNot, later...) {
				if strings.Contains(joined, m) {
					t.Errorf("%s in\n%s", m, joined)
				}
			}
		})
	}

	// 2024-11-05 had no JSON-RPC batches: 2025-03-26 brought them.
	t.Run("2024-11-05 batch", func(t *testing.T) {
		s := e.initialize("2024-11-05", `{}`)
		resp, b := e.exchange(http.MethodPost, revisionHeaders(s), `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400: %s", resp.StatusCode, b)
		}
		wantErrorBody(t, resp, b, protocol.CodeInvalidRequest)
	})
}

// TestLegacyURLElicitation: a 2025-11-25 client that declared url mode
// gets elicitation/create with mode url and the handler's elicitationId
// on the request's stream, answers, and gets
// notifications/elicitation/complete there before the response; a
// completion announced after the request reaches the session's GET
// stream. Clients without url mode are refused.
func TestLegacyURLElicitation(t *testing.T) {
	e := newLegacyEnv(t, nil, addRevisionFixtures, nil)
	s := e.initialize("2025-11-25", `{"elicitation":{"url":{}}}`)

	st := e.openStream(http.MethodPost, s.headers(), toolCall(10, "signin", `{}`))
	wantPriming(t, st.next())
	ev, req := st.message()
	want := `{"jsonrpc":"2.0","id":"mcpkit-1","method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/signin","elicitationId":"e-1"}}`
	if ev.Data != want {
		t.Fatalf("elicitation/create\n got %s\nwant %s", ev.Data, want)
	}
	resp, b := s.post(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":{"action":"accept"}}`)
	if resp.StatusCode != http.StatusAccepted || len(b) != 0 {
		t.Fatalf("posting the answer: status %d, body %q; want 202, no body", resp.StatusCode, b)
	}
	ev, _ = st.message()
	if want := `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e-1"}}`; ev.Data != want {
		t.Errorf("after the answer\n got %s\nwant %s", ev.Data, want)
	}
	ev, _ = st.message()
	if want := `{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"accept"}]}}`; ev.Data != want {
		t.Errorf("response\n got %s\nwant %s", ev.Data, want)
	}
	st.wantEnd()

	t.Run("completed later", func(t *testing.T) {
		get := e.openStream(http.MethodGet, s.getHeaders(""), "")
		wantPriming(t, get.next())
		st := e.openStream(http.MethodPost, s.headers(), toolCall(11, "later", `{}`))
		wantPriming(t, st.next())
		_, req := st.message()
		s.post(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":{"action":"accept"}}`)
		st.message()
		st.wantEnd()
		if err := e.a.ElicitationComplete("e-2"); err != nil {
			t.Fatalf("ElicitationComplete: %v", err)
		}
		ev, _ := get.message()
		if want := `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e-2"}}`; ev.Data != want {
			t.Errorf("GET stream\n got %s\nwant %s", ev.Data, want)
		}
	})

	for _, tt := range []struct{ version, caps string }{
		{"2025-11-25", `{"elicitation":{}}`},
		{"2025-06-18", `{"elicitation":{"url":{}}}`},
	} {
		t.Run(tt.version+" "+tt.caps, func(t *testing.T) {
			s := e.initialize(tt.version, tt.caps)
			r := s.call(toolCall(12, "signin", `{}`))
			got := r.wantError(t, protocol.CodeInvalidRequest)
			if string(got.Data) != `{"requiredCapabilities":{"elicitation":{"url":{}}}}` {
				t.Errorf("error data %s", got.Data)
			}
		})
	}
}

// TestHeaderlessRevisionOnly: a server serving 2024-11-05 but not
// 2025-03-26 takes that session's requests, which carry no
// MCP-Protocol-Version header (it came in 2025-06-18).
func TestHeaderlessRevisionOnly(t *testing.T) {
	e := newLegacyEnv(t, &legacy.Options{Versions: []string{protocol.Version2024_11_05}}, nil, nil)
	s := e.initialize(protocol.Version2024_11_05, `{}`)
	if s.version != protocol.Version2024_11_05 {
		t.Fatalf("negotiated %s", s.version)
	}
	h := s.headers()
	if h.Get(streamable.HeaderProtocolVersion) != "" {
		t.Fatal("a 2024-11-05 request with MCP-Protocol-Version")
	}
	resp, body := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"tools"`) {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
}
