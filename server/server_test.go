package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
)

func TestMetaValidation(t *testing.T) {
	s := newTestServer(nil)
	tests := []struct {
		name   string
		params string
		code   int64
		status int
	}{
		{"no params", ``, protocol.CodeInvalidParams, 400},
		{"no _meta", `{}`, protocol.CodeInvalidParams, 400},
		{"params not an object", `[1]`, protocol.CodeInvalidParams, 400},
		{"no protocol version", `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`, protocol.CodeInvalidParams, 400},
		{"no capabilities", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, protocol.CodeInvalidParams, 400},
		{"malformed meta", `{"_meta":{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/clientCapabilities":{}}}`, protocol.CodeInvalidParams, 400},
		{"unsupported version", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`, protocol.CodeUnsupportedProtocolVersion, 400},
		{"bad log level", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}`, protocol.CodeInvalidParams, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p json.RawMessage
			if tt.params != "" {
				p = json.RawMessage(tt.params)
			}
			r := do(t, s, protocol.MethodDiscover, p)
			wantError(t, r, tt.code)
			want := tt.status
			if want == 0 {
				want = 200
			}
			if got := status(t, s, protocol.MethodDiscover, p); got != want {
				t.Errorf("HTTP status = %d, want %d", got, want)
			}
			if r.ID != jsonrpc.IntID(7) {
				t.Errorf("id = %s", r.ID.Raw())
			}
		})
	}
}

func TestUnsupportedVersionData(t *testing.T) {
	s := newTestServer(nil)
	r := do(t, s, protocol.MethodDiscover, json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}`))
	e := wantError(t, r, protocol.CodeUnsupportedProtocolVersion)
	if string(e.Data) != `{"supported":["2026-07-28"],"requested":"v9"}` {
		t.Fatalf("data = %s", e.Data)
	}
}

func TestClientInfoOptional(t *testing.T) {
	s := newTestServer(nil)
	result(t, do(t, s, protocol.MethodDiscover, params(t, nil, `{}`)))
}

func TestDiscover(t *testing.T) {
	s := newTestServer(&Options{Instructions: "be nice", Extensions: map[string]protocol.Object{"com.example/x": {}}})
	AddTool(s, &protocol.Tool{Name: "t", Description: "d"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) { return "", nil })
	r := do(t, s, protocol.MethodDiscover, params(t, nil, `{}`))
	want := `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0.0"}},` +
		`"supportedVersions":["2026-07-28"],"capabilities":{"logging":{},"tools":{"listChanged":true},"extensions":{"com.example/x":{}}},` +
		`"instructions":"be nice","ttlMs":60000,"cacheScope":"public"}`
	if string(r.Result) != want {
		t.Fatalf("discover =\n%s\nwant\n%s", r.Result, want)
	}
}

func TestOmitServerInfoAndCacheOptions(t *testing.T) {
	s := newTestServer(&Options{OmitServerInfo: true, DiscoverCache: &protocol.CacheHints{TTLMs: 5, CacheScope: protocol.CachePrivate}})
	m := result(t, do(t, s, protocol.MethodDiscover, params(t, nil, `{}`)))
	if _, ok := m["_meta"]; ok {
		t.Errorf("_meta present with OmitServerInfo: %v", m)
	}
	if m["ttlMs"] != 5.0 || m["cacheScope"] != "private" {
		t.Errorf("cache hints = %v %v", m["ttlMs"], m["cacheScope"])
	}
}

func TestUnknownMethodAndMissingCapability(t *testing.T) {
	s := newTestServer(nil)
	r := do(t, s, "nope/nothing", params(t, nil, `{}`))
	wantError(t, r, protocol.CodeMethodNotFound)
	if got := status(t, s, "nope/nothing", params(t, nil, `{}`)); got != 404 {
		t.Errorf("status = %d", got)
	}
	// No tools registered: tools/list is not offered.
	wantError(t, do(t, s, protocol.MethodToolsList, params(t, nil, `{}`)), protocol.CodeMethodNotFound)
	// The legacy era is served by default: initialize opens a session.
	if r := do(t, s, protocol.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-11-25"}`)); r.Error != nil || !strings.Contains(string(r.Result), `"protocolVersion":"2025-11-25"`) {
		t.Errorf("initialize on a default server: %+v %s", r.Error, r.Result)
	}
	// Without it, initialize is refused naming the versions served.
	modern := newTestServer(&Options{Legacy: legacy.Options{Disabled: true}})
	e := wantError(t, do(t, modern, protocol.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-11-25"}`)), protocol.CodeInvalidRequest)
	if !strings.Contains(e.Message, "2026-07-28") {
		t.Errorf("initialize refusal does not name the versions: %s", e.Message)
	}
}

func TestResultTypeEverywhere(t *testing.T) {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "t", Description: "d"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) { return "x", nil })
	s.AddResource(&protocol.Resource{URI: "test://a", Name: "a"}, TextResource("text/plain", "A"))
	s.AddPrompt(&protocol.Prompt{Name: "p"}, func(ctx context.Context, req *PromptRequest) (*protocol.GetPromptResult, error) {
		return &protocol.GetPromptResult{}, nil
	})
	s.AddCompletion(protocol.RefPrompt, "p", CompleteFrom("a"))
	calls := []struct {
		method string
		fields map[string]any
	}{
		{protocol.MethodDiscover, nil},
		{protocol.MethodToolsList, nil},
		{protocol.MethodToolsCall, map[string]any{"name": "t"}},
		{protocol.MethodResourcesList, nil},
		{protocol.MethodResourceTemplatesList, nil},
		{protocol.MethodResourcesRead, map[string]any{"uri": "test://a"}},
		{protocol.MethodPromptsList, nil},
		{protocol.MethodPromptsGet, map[string]any{"name": "p"}},
		{protocol.MethodComplete, map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "x", "value": ""}}},
	}
	cacheable := map[string]bool{protocol.MethodDiscover: true, protocol.MethodToolsList: true, protocol.MethodResourcesList: true,
		protocol.MethodResourceTemplatesList: true, protocol.MethodResourcesRead: true, protocol.MethodPromptsList: true}
	for _, c := range calls {
		t.Run(c.method, func(t *testing.T) {
			m := result(t, do(t, s, c.method, params(t, c.fields, `{}`)))
			if m["resultType"] != "complete" {
				t.Errorf("resultType = %v", m["resultType"])
			}
			meta, _ := m["_meta"].(map[string]any)
			if meta == nil || meta[protocol.MetaServerInfo] == nil {
				t.Errorf("no serverInfo in _meta: %v", m)
			}
			_, hasTTL := m["ttlMs"]
			_, hasScope := m["cacheScope"]
			if cacheable[c.method] != (hasTTL && hasScope) {
				t.Errorf("cache hints present=%v, want %v", hasTTL && hasScope, cacheable[c.method])
			}
		})
	}
}

func TestHandleCancelledReturnsNil(t *testing.T) {
	s := newTestServer(nil)
	started := make(chan struct{})
	AddTool(s, &protocol.Tool{Name: "block"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *jsonrpc.Response, 1)
	go func() {
		done <- doWith(t, ctx, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "block"}, `{}`), &collector{})
	}()
	<-started
	cancel()
	if r := <-done; r != nil {
		t.Fatalf("cancelled call answered: %+v", r)
	}
}

func TestProgressAndLogOnlyWhenAsked(t *testing.T) {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "work"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		if err := req.Progress(1, 2, "half"); err != nil {
			return "", err
		}
		if err := req.Progress(1, 2, "again"); err == nil {
			return "", errors.New("non-increasing progress accepted")
		}
		_ = req.Log(protocol.LevelDebug, "l", "debug detail")
		_ = req.Log(protocol.LevelError, "l", "bad thing")
		return "done", nil
	})
	t.Run("neither", func(t *testing.T) {
		n := &collector{}
		r := doWith(t, context.Background(), s, protocol.MethodToolsCall, params(t, map[string]any{"name": "work"}, `{}`), n)
		result(t, r)
		if got := n.all(); len(got) != 0 {
			t.Fatalf("notifications without progressToken or logLevel: %s", got)
		}
	})
	t.Run("both", func(t *testing.T) {
		meta := testMeta(`{}`)
		meta["progressToken"] = json.RawMessage(`42`)
		meta[protocol.MetaLogLevel] = json.RawMessage(`"warning"`)
		n := &collector{}
		r := doWith(t, context.Background(), s, protocol.MethodToolsCall, params(t, map[string]any{"name": "work", "_meta": meta}, `{}`), n)
		result(t, r)
		got := n.all()
		want := []string{
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":42,"progress":1,"total":2,"message":"half"}}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"l","data":"bad thing"}}`,
		}
		if len(got) != len(want) {
			t.Fatalf("notifications = %s", got)
		}
		for i := range want {
			if string(got[i]) != want[i] {
				t.Errorf("notification %d = %s, want %s", i, got[i], want[i])
			}
		}
	})
}

func TestNoNotificationAfterFinish(t *testing.T) {
	s := newTestServer(nil)
	var saved *CallRequest
	AddTool(s, &protocol.Tool{Name: "leak"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		saved = req
		return "ok", nil
	})
	meta := testMeta(`{}`)
	meta["progressToken"] = json.RawMessage(`"t"`)
	n := &collector{}
	result(t, doWith(t, context.Background(), s, protocol.MethodToolsCall, params(t, map[string]any{"name": "leak", "_meta": meta}, `{}`), n))
	if err := saved.Progress(1, 0, ""); !errors.Is(err, ErrRequestFinished) {
		t.Fatalf("Progress after the response: %v", err)
	}
	if len(n.all()) != 0 {
		t.Fatal("a notification was sent after the response")
	}
}
