package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// scopedServer has one public and one scoped feature of every kind.
func scopedServer(t *testing.T) *Server {
	t.Helper()
	s := newTestServer(nil)
	tool := func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error) {
		return TextResult("ran " + req.Name), nil
	}
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddToolHandler(&protocol.Tool{Name: "open", InputSchema: obj}, tool)
	s.AddToolHandler(&protocol.Tool{Name: "write", InputSchema: obj}, tool, RequireScopes("files:write"), RequireScopes("files:read"))
	prompt := func(ctx context.Context, req *PromptRequest) (*protocol.GetPromptResult, error) {
		return &protocol.GetPromptResult{}, nil
	}
	s.AddPrompt(&protocol.Prompt{Name: "greet"}, prompt)
	s.AddPrompt(&protocol.Prompt{Name: "secret"}, prompt, RequireScopes("prompts:secret"))
	s.AddResource(&protocol.Resource{URI: "test://open", Name: "open"}, TextResource("text/plain", "o"))
	s.AddResource(&protocol.Resource{URI: "test://secret", Name: "secret"}, TextResource("text/plain", "s"), RequireScopes("files:read"))
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "priv://{id}", Name: "priv"}, TextResource("text/plain", "p"), RequireScopes("files:read"))
	s.AddCompletion(protocol.RefPrompt, "secret", CompleteFrom("a"))
	t.Cleanup(func() { s.Close() })
	return s
}

func withScopes(scopes ...string) context.Context {
	return WithScopes(WithPrincipal(context.Background(), "alice"), scopes)
}

func names(t *testing.T, m map[string]any, list, key string) []string {
	t.Helper()
	var out []string
	for _, it := range m[list].([]any) {
		out = append(out, it.(map[string]any)[key].(string))
	}
	return out
}

func TestScopedListsLeaveOutWhatTheCallerMayNotUse(t *testing.T) {
	s := scopedServer(t)
	cases := []struct {
		method, list, key string
		all, some         []string
	}{
		{protocol.MethodToolsList, "tools", "name", []string{"open", "write"}, []string{"open"}},
		{protocol.MethodPromptsList, "prompts", "name", []string{"greet", "secret"}, []string{"greet"}},
		{protocol.MethodResourcesList, "resources", "uri", []string{"test://open", "test://secret"}, []string{"test://open"}},
		{protocol.MethodResourceTemplatesList, "resourceTemplates", "uriTemplate", []string{"priv://{id}"}, nil},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			// No scopes on the context: no authorization, everything, public.
			m := result(t, doWith(t, context.Background(), s, c.method, params(t, nil, `{}`), &collector{}))
			if got := names(t, m, c.list, c.key); !slices.Equal(got, c.all) {
				t.Errorf("without authorization: %v, want %v", got, c.all)
			}
			if m["cacheScope"] != "public" {
				t.Errorf("without authorization: cacheScope %v", m["cacheScope"])
			}
			// Too few scopes: the scoped items are left out, private.
			m = result(t, doWith(t, withScopes("other"), s, c.method, params(t, nil, `{}`), &collector{}))
			if got := names(t, m, c.list, c.key); !slices.Equal(got, c.some) {
				t.Errorf("with scope other: %v, want %v", got, c.some)
			}
			if m["cacheScope"] != "private" {
				t.Errorf("with scope other: cacheScope %v", m["cacheScope"])
			}
			// Every scope: everything, still private (it depends on them).
			m = result(t, doWith(t, withScopes("files:read", "files:write", "prompts:secret"), s, c.method, params(t, nil, `{}`), &collector{}))
			if got := names(t, m, c.list, c.key); !slices.Equal(got, c.all) {
				t.Errorf("with every scope: %v, want %v", got, c.all)
			}
			if m["cacheScope"] != "private" {
				t.Errorf("with every scope: cacheScope %v", m["cacheScope"])
			}
		})
	}
}

func TestScopedListWithoutScopedItemsStaysPublic(t *testing.T) {
	s := newTestServer(nil)
	defer s.Close()
	s.AddToolHandler(&protocol.Tool{Name: "open", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error) {
		return nil, nil
	})
	m := result(t, doWith(t, withScopes(), s, protocol.MethodToolsList, params(t, nil, `{}`), &collector{}))
	if m["cacheScope"] != "public" || len(m["tools"].([]any)) != 1 {
		t.Errorf("list = %v", m)
	}
}

func TestScopedListPagesFillUp(t *testing.T) {
	s := newTestServer(&Options{PageSize: 2})
	defer s.Close()
	h := func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error) { return nil, nil }
	obj := json.RawMessage(`{"type":"object"}`)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		var opts []FeatureOption
		if n == "b" || n == "e" {
			opts = append(opts, RequireScopes("x"))
		}
		s.AddToolHandler(&protocol.Tool{Name: n, InputSchema: obj}, h, opts...)
	}
	ctx := withScopes("y")
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("too many pages")
		}
		f := map[string]any{}
		if cursor != "" {
			f["cursor"] = cursor
		}
		m := result(t, doWith(t, ctx, s, protocol.MethodToolsList, params(t, f, `{}`), &collector{}))
		page := names(t, m, "tools", "name")
		if len(page) == 0 {
			t.Fatalf("empty page after %v", got)
		}
		got = append(got, page...)
		next, _ := m["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("listed %v", got)
	}
}

func TestScopedCallsAreRefused(t *testing.T) {
	s := scopedServer(t)
	cases := []struct {
		method string
		fields map[string]any
		need   []string
	}{
		{protocol.MethodToolsCall, map[string]any{"name": "write"}, []string{"files:write", "files:read"}},
		{protocol.MethodPromptsGet, map[string]any{"name": "secret"}, []string{"prompts:secret"}},
		{protocol.MethodResourcesRead, map[string]any{"uri": "test://secret"}, []string{"files:read"}},
		{protocol.MethodResourcesRead, map[string]any{"uri": "priv://7"}, []string{"files:read"}},
		{protocol.MethodComplete, map[string]any{"ref": map[string]any{"type": protocol.RefPrompt, "name": "secret"}, "argument": map[string]any{"name": "x", "value": ""}}, []string{"prompts:secret"}},
	}
	for _, c := range cases {
		p := params(t, c.fields, `{}`)
		ctx := withScopes("files:write")
		res, err := s.Serve(ctx, &transport.Request{Message: &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: c.method, Params: p}, Cancel: func() {}})
		if err == nil {
			t.Errorf("%s %v: answered %v", c.method, c.fields, res)
			continue
		}
		var ise *protocol.InsufficientScopeError
		if !errors.As(err, &ise) || !errors.Is(err, protocol.ErrInsufficientScope) || !slices.Equal(ise.Scopes, c.need) {
			t.Errorf("%s %v: error %v", c.method, c.fields, err)
		}
		if w := protocol.WireError(err); w.Code != protocol.CodeInvalidRequest {
			t.Errorf("%s: code %d", c.method, w.Code)
		}
		if st := streamable.Status(err); st != http.StatusForbidden {
			t.Errorf("%s: status %d", c.method, st)
		}
		// Granted, or no authorization in force: served.
		for _, ok := range []context.Context{withScopes("files:read", "files:write", "prompts:secret"), context.Background()} {
			if r := doWith(t, ok, s, c.method, p, &collector{}); r.Error != nil {
				t.Errorf("%s %v: %v", c.method, c.fields, r.Error)
			}
		}
	}
	// An unscoped feature needs nothing.
	if r := doWith(t, withScopes(), s, protocol.MethodToolsCall, params(t, map[string]any{"name": "open"}, `{}`), &collector{}); r.Error != nil {
		t.Errorf("open: %v", r.Error)
	}
}

func TestRequireScopesDefinitionUnchanged(t *testing.T) {
	s := scopedServer(t)
	m := result(t, do(t, s, protocol.MethodToolsList, params(t, nil, `{}`)))
	b, _ := json.Marshal(m["tools"])
	if string(b) != `[{"inputSchema":{"type":"object"},"name":"open"},{"inputSchema":{"type":"object"},"name":"write"}]` {
		t.Errorf("tools = %s", b)
	}
}

func TestRequireScopesRefusesInvalidTokens(t *testing.T) {
	for _, sc := range []string{"", "a b", `a"b`, `a\b`, "é"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RequireScopes(%q) did not panic", sc)
				}
			}()
			RequireScopes(sc)
		}()
	}
}
