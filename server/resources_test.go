package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
)

func resourceServer() *Server {
	s := newTestServer(nil)
	s.AddResource(&protocol.Resource{URI: "test://text", Name: "text", MIMEType: "text/plain"}, TextResource("text/plain", "hello"))
	s.AddResource(&protocol.Resource{URI: "test://bin", Name: "bin"}, BlobResource("application/octet-stream", []byte{0, 1, 2}))
	s.AddResource(&protocol.Resource{URI: "test://private", Name: "private"}, func(ctx context.Context, req *ReadRequest) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{
			Contents:   []*protocol.ResourceContents{{URI: req.URI, Text: "secret"}},
			CacheHints: protocol.CacheHints{TTLMs: 1000, CacheScope: protocol.CachePrivate},
		}, nil
	})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "test://items/{id}/data{?fields}", Name: "items"}, func(ctx context.Context, req *ReadRequest) (*protocol.ReadResourceResult, error) {
		if req.Vars["id"] == "missing" {
			return nil, ErrResourceNotFound
		}
		return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{{URI: req.URI, Text: req.Vars["id"] + "|" + req.Vars["fields"]}}}, nil
	})
	return s
}

func readResult(t *testing.T, s *Server, uri string) map[string]any {
	t.Helper()
	return result(t, do(t, s, protocol.MethodResourcesRead, params(t, map[string]any{"uri": uri}, `{}`)))
}

func TestResourcesRead(t *testing.T) {
	s := resourceServer()
	r := do(t, s, protocol.MethodResourcesRead, params(t, map[string]any{"uri": "test://text"}, `{}`))
	want := `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0.0"}},"contents":[{"uri":"test://text","mimeType":"text/plain","text":"hello"}],"ttlMs":0,"cacheScope":"private"}`
	if string(r.Result) != want {
		t.Errorf("read text =\n%s\nwant\n%s", r.Result, want)
	}
	if c := readResult(t, s, "test://bin")["contents"].([]any)[0].(map[string]any); c["blob"] != "AAEC" || c["text"] != nil {
		t.Errorf("read blob = %v", c)
	}
	if m := readResult(t, s, "test://private"); m["ttlMs"] != 1000.0 || m["cacheScope"] != "private" {
		t.Errorf("per-item cache hints = %v", m)
	}
	if text := readResult(t, s, "test://items/42/data?fields=a,b")["contents"].([]any)[0].(map[string]any)["text"]; text != "42|a,b" {
		t.Errorf("template vars = %v", text)
	}
	if text := readResult(t, s, "test://items/a%20b/data")["contents"].([]any)[0].(map[string]any)["text"]; text != "a b|" {
		t.Errorf("escaped template vars = %v", text)
	}
}

func TestResourceNotFound(t *testing.T) {
	s := resourceServer()
	for _, uri := range []string{"test://nope", "test://items/missing/data"} {
		e := wantError(t, do(t, s, protocol.MethodResourcesRead, params(t, map[string]any{"uri": uri}, `{}`)), protocol.CodeInvalidParams)
		if e.Message != "Resource not found" || string(e.Data) != `{"uri":"`+uri+`"}` {
			t.Errorf("%s: %s %s", uri, e.Message, e.Data)
		}
	}
	wantError(t, do(t, s, protocol.MethodResourcesRead, params(t, nil, `{}`)), protocol.CodeInvalidParams)
}

func TestResourceLists(t *testing.T) {
	s := resourceServer()
	m := result(t, do(t, s, protocol.MethodResourcesList, params(t, nil, `{}`)))
	var uris []string
	for _, r := range m["resources"].([]any) {
		uris = append(uris, r.(map[string]any)["uri"].(string))
	}
	if strings.Join(uris, " ") != "test://bin test://private test://text" {
		t.Errorf("resources = %v", uris)
	}
	m = result(t, do(t, s, protocol.MethodResourceTemplatesList, params(t, nil, `{}`)))
	if tpl := m["resourceTemplates"].([]any)[0].(map[string]any); tpl["uriTemplate"] != "test://items/{id}/data{?fields}" {
		t.Errorf("templates = %v", m)
	}
}

func TestURITemplates(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		vars      map[string]string
	}{
		{"file:///{path}", "file:///a", map[string]string{"path": "a"}},
		{"file:///{path}", "file:///a/b", nil},
		{"file:///{+path}", "file:///a/b", map[string]string{"path": "a/b"}},
		{"db://{schema}/{table}", "db://public/users", map[string]string{"schema": "public", "table": "users"}},
		{"x://h{/seg}", "x://h/one", map[string]string{"seg": "one"}},
		{"x://s{?q,lang}", "x://s?lang=en&q=go", map[string]string{"q": "go", "lang": "en"}},
		{"x://s{?q}", "x://s", map[string]string{}},
		{"x://a{#frag}", "x://a#top", map[string]string{"frag": "top"}},
		{"x://{a}.{b}", "x://foo.txt", map[string]string{"a": "foo", "b": "txt"}},
	}
	for _, tt := range tests {
		ut, err := parseURITemplate(tt.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		vars, ok := ut.match(tt.uri)
		if ok != (tt.vars != nil) {
			t.Errorf("%s ~ %s: match=%v", tt.tmpl, tt.uri, ok)
			continue
		}
		for k, v := range tt.vars {
			if vars[k] != v {
				t.Errorf("%s ~ %s: %s=%q, want %q", tt.tmpl, tt.uri, k, vars[k], v)
			}
		}
	}
	for _, bad := range []string{"", "x://{", "x://{}", "x://{a b}"} {
		if _, err := parseURITemplate(bad); err == nil {
			t.Errorf("template %q accepted", bad)
		}
	}
}

func TestPrompts(t *testing.T) {
	s := newTestServer(nil)
	s.AddPrompt(&protocol.Prompt{Name: "ask", Arguments: []*protocol.PromptArgument{{Name: "q", Required: true}, {Name: "tone"}}},
		func(ctx context.Context, req *PromptRequest) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{{Role: protocol.RoleUser, Content: &protocol.TextContent{Text: req.Arguments["q"] + "/" + req.Arguments["tone"]}}}}, nil
		})
	r := do(t, s, protocol.MethodPromptsGet, params(t, map[string]any{"name": "ask", "arguments": map[string]string{"q": "why"}}, `{}`))
	if !strings.Contains(string(r.Result), `"messages":[{"role":"user","content":{"type":"text","text":"why/"}}]`) {
		t.Errorf("prompt = %s", r.Result)
	}
	wantError(t, do(t, s, protocol.MethodPromptsGet, params(t, map[string]any{"name": "ask"}, `{}`)), protocol.CodeInvalidParams)
	wantError(t, do(t, s, protocol.MethodPromptsGet, params(t, map[string]any{"name": "nope"}, `{}`)), protocol.CodeInvalidParams)
	wantError(t, do(t, s, protocol.MethodPromptsGet, params(t, map[string]any{"name": "ask", "arguments": map[string]any{"q": 1}}, `{}`)), protocol.CodeInvalidParams)
}

func TestCompletion(t *testing.T) {
	s := newTestServer(nil)
	s.AddPrompt(&protocol.Prompt{Name: "p"}, func(ctx context.Context, req *PromptRequest) (*protocol.GetPromptResult, error) { return nil, nil })
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "db://{table}", Name: "t"}, func(ctx context.Context, req *ReadRequest) (*protocol.ReadResourceResult, error) { return nil, nil })
	many := make([]string, 150)
	for i := range many {
		many[i] = "v" + string(rune('a'+i%26))
	}
	s.AddCompletion(protocol.RefPrompt, "p", CompleteFrom(many...))
	s.AddCompletion(protocol.RefResource, "db://{table}", func(ctx context.Context, req *CompleteRequest) (*protocol.Completion, error) {
		return &protocol.Completion{Values: []string{req.Argument.Value + "s", req.Context["schema"]}}, nil
	})
	complete := func(ref map[string]any, arg string, ctx map[string]any) map[string]any {
		f := map[string]any{"ref": ref, "argument": map[string]any{"name": "x", "value": arg}}
		if ctx != nil {
			f["context"] = map[string]any{"arguments": ctx}
		}
		return result(t, do(t, s, protocol.MethodComplete, params(t, f, `{}`)))["completion"].(map[string]any)
	}
	c := complete(map[string]any{"type": "ref/prompt", "name": "p"}, "v", nil)
	if len(c["values"].([]any)) != 100 || c["hasMore"] != true || c["total"] != 150.0 {
		t.Errorf("capped completion = %v values, hasMore %v, total %v", len(c["values"].([]any)), c["hasMore"], c["total"])
	}
	c = complete(map[string]any{"type": "ref/resource", "uri": "db://{table}"}, "user", map[string]any{"schema": "public"})
	if v := c["values"].([]any); v[0] != "users" || v[1] != "public" {
		t.Errorf("template completion = %v", v)
	}
	wantError(t, do(t, s, protocol.MethodComplete, params(t, map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "zz"}, "argument": map[string]any{"name": "x", "value": ""}}, `{}`)), protocol.CodeInvalidParams)
	wantError(t, do(t, s, protocol.MethodComplete, params(t, map[string]any{"ref": map[string]any{"type": "ref/tool"}, "argument": map[string]any{"name": "x", "value": ""}}, `{}`)), protocol.CodeInvalidParams)
	caps := result(t, do(t, s, protocol.MethodDiscover, params(t, nil, `{}`)))["capabilities"].(map[string]any)
	if _, ok := caps["completions"]; !ok {
		t.Errorf("completions capability missing: %v", caps)
	}
	_ = json.Valid
}
