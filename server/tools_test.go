package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/protocol"
)

type addArgs struct {
	A int `json:"a" description:"first addend"`
	B int `json:"b" description:"second addend" jsonschema:"minimum=0"`
}

type sum struct {
	Sum int `json:"sum"`
}

func TestTypedToolInferenceAndStructuredOutput(t *testing.T) {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "add", Description: "adds"}, func(ctx context.Context, req *CallRequest, in addArgs) (sum, error) {
		return sum{in.A + in.B}, nil
	})
	m := result(t, do(t, s, protocol.MethodToolsList, params(t, nil, `{}`)))
	tools := m["tools"].([]any)
	tool := tools[0].(map[string]any)
	in, _ := json.Marshal(tool["inputSchema"])
	if string(in) != `{"additionalProperties":false,"properties":{"a":{"description":"first addend","type":"integer"},"b":{"description":"second addend","minimum":0,"type":"integer"}},"required":["a","b"],"type":"object"}` {
		t.Errorf("inputSchema = %s", in)
	}
	if tool["outputSchema"] == nil {
		t.Errorf("no outputSchema inferred: %v", tool)
	}

	r := do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}, `{}`))
	want := `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0.0"}},"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}`
	if string(r.Result) != want {
		t.Errorf("call =\n%s\nwant\n%s", r.Result, want)
	}
}

func TestToolArgumentValidation(t *testing.T) {
	s := newTestServer(nil)
	called := false
	AddTool(s, &protocol.Tool{Name: "add"}, func(ctx context.Context, req *CallRequest, in addArgs) (sum, error) {
		called = true
		return sum{}, nil
	})
	tests := []struct {
		name string
		args any
	}{
		{"missing b", map[string]any{"a": 1}},
		{"wrong type", map[string]any{"a": "x", "b": 1}},
		{"below minimum", map[string]any{"a": 1, "b": -1}},
		{"extra property", map[string]any{"a": 1, "b": 1, "c": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := result(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "add", "arguments": tt.args}, `{}`)))
			if m["isError"] != true {
				t.Fatalf("invalid arguments accepted: %v", m)
			}
			if !strings.Contains(m["content"].([]any)[0].(map[string]any)["text"].(string), "Invalid arguments") {
				t.Errorf("message = %v", m["content"])
			}
		})
	}
	if called {
		t.Fatal("handler ran with invalid arguments")
	}
	// Arguments that are not an object are a protocol error.
	wantError(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "add", "arguments": []int{1}}, `{}`)), protocol.CodeInvalidParams)
	// An unknown tool is a protocol error.
	e := wantError(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "nope"}, `{}`)), protocol.CodeInvalidParams)
	if e.Message != "Unknown tool: nope" {
		t.Errorf("message = %q", e.Message)
	}
}

func TestToolErrorsAndPanics(t *testing.T) {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "fail"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		return "", errors.New("disk is full")
	})
	AddTool(s, &protocol.Tool{Name: "proto"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		return "", protocol.InvalidParams("no such account")
	})
	AddTool(s, &protocol.Tool{Name: "panic"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		panic("boom")
	})
	r := do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "fail"}, `{}`))
	if !strings.Contains(string(r.Result), `"content":[{"type":"text","text":"disk is full"}],"isError":true`) {
		t.Errorf("Go error = %s", r.Result)
	}
	if e := wantError(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "proto"}, `{}`)), protocol.CodeInvalidParams); e.Message != "no such account" {
		t.Errorf("protocol error = %q", e.Message)
	}
	wantError(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "panic"}, `{}`)), protocol.CodeInternalError)
}

func TestOutputSchemaEnforced(t *testing.T) {
	s := newTestServer(nil)
	s.AddToolHandler(&protocol.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{StructuredContent: json.RawMessage(`{"n":"x"}`)}, nil
		})
	s.AddToolHandler(&protocol.Tool{Name: "none", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error) {
			return TextResult("no structure"), nil
		})
	wantError(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "bad"}, `{}`)), protocol.CodeInternalError)
	wantError(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "none"}, `{}`)), protocol.CodeInternalError)
}

func TestInvalidToolDefinitionsPanic(t *testing.T) {
	tests := []struct {
		name string
		tool *protocol.Tool
	}{
		{"no name", &protocol.Tool{InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{"no schema", &protocol.Tool{Name: "x"}},
		{"root not object", &protocol.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`)}},
		{"external ref", &protocol.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)}},
		{"header on number", &protocol.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`)}},
		{"header under items", &protocol.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			newTestServer(nil).AddToolHandler(tt.tool, func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error) { return nil, nil })
		})
	}
}

// inputWithoutFields has no exported field: go-json-experiment refuses to
// decode an object into it (where encoding/json would ignore every member).
type inputWithoutFields struct {
	name string
}

// customInput decodes itself, and refuses {}.
type customInput struct{ raw string }

func (c *customInput) UnmarshalJSON(b []byte) error {
	if string(b) == "{}" {
		return errors.New("empty")
	}
	c.raw = string(b)
	return nil
}

// TestAddToolRefusesUndecodableInput: an input type that arguments can
// never be decoded into is refused when the tool is added, not on every
// call; a type that decodes itself is left to its method.
func TestAddToolRefusesUndecodableInput(t *testing.T) {
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "input type") {
				t.Errorf("recovered %v", r)
			}
		}()
		AddTool(newTestServer(nil), &protocol.Tool{Name: "x"}, func(ctx context.Context, req *CallRequest, in inputWithoutFields) (string, error) {
			return in.name, nil
		})
	}()
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "custom", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *CallRequest, in customInput) (string, error) {
		return in.raw, nil
	})
	r := callTool(t, s, allCaps, map[string]any{"name": "custom", "arguments": map[string]any{"k": 1}})
	if !strings.Contains(string(mustJSON(r["content"])), `{\"k\":1}`) {
		t.Errorf("custom input: %v", r)
	}
}

func TestParamHeaders(t *testing.T) {
	s := newTestServer(nil)
	s.AddToolHandler(&protocol.Tool{Name: "h", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"o":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`)},
		func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error) { return nil, nil })
	ps := s.ParamHeaders("h")
	if len(ps) != 2 || ps[0].Name != "N" || strings.Join(ps[0].Path, "/") != "o/n" || ps[1].Name != "Region" || ps[1].Type != "string" {
		t.Fatalf("ParamHeaders = %+v", ps)
	}
	if s.ParamHeaders("other") != nil {
		t.Fatal("headers for an unknown tool")
	}
}

func TestListPaginationAndOrder(t *testing.T) {
	s := newTestServer(&Options{PageSize: 2})
	for _, n := range []string{"d", "b", "a", "c", "e"} {
		AddTool(s, &protocol.Tool{Name: n}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) { return "", nil })
	}
	var names []string
	cursor := ""
	for page := 0; page < 10; page++ {
		f := map[string]any{}
		if cursor != "" {
			f["cursor"] = cursor
		}
		m := result(t, do(t, s, protocol.MethodToolsList, params(t, f, `{}`)))
		for _, tl := range m["tools"].([]any) {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		next, _ := m["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if strings.Join(names, ",") != "a,b,c,d,e" {
		t.Fatalf("paged names = %v", names)
	}
	wantError(t, do(t, s, protocol.MethodToolsList, params(t, map[string]any{"cursor": "garbage!"}, `{}`)), protocol.CodeInvalidParams)
	// A cursor stays valid when an earlier item is removed.
	m := result(t, do(t, s, protocol.MethodToolsList, params(t, nil, `{}`)))
	next := m["nextCursor"].(string)
	s.RemoveTool("a")
	m = result(t, do(t, s, protocol.MethodToolsList, params(t, map[string]any{"cursor": next}, `{}`)))
	if first := m["tools"].([]any)[0].(map[string]any)["name"]; first != "c" {
		t.Fatalf("after removal the next page starts at %v", first)
	}
}

// TestTypedToolExactMemberNames checks that arguments fill fields only
// under their exact names, the ones the input schema validated: with a
// schema that allows other properties, "TEXT" must not fill Text.
func TestTypedToolExactMemberNames(t *testing.T) {
	s := newTestServer(nil)
	type args struct {
		Text string `json:"text"`
		N    int    `json:"n"`
	}
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}}}`)
	AddTool(s, &protocol.Tool{Name: "echo", InputSchema: schema}, func(ctx context.Context, req *CallRequest, in args) (string, error) {
		return fmt.Sprintf("%q %d", in.Text, in.N), nil
	})
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"text": "a", "n": 1}, `"a" 1`},
		{map[string]any{"TEXT": 7, "Text": "b", "N": "x"}, `"" 0`},
	} {
		m := result(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "echo", "arguments": c.args}, `{}`)))
		if got := m["content"].([]any)[0].(map[string]any)["text"]; got != c.want || m["isError"] == true {
			t.Errorf("%v: %v", c.args, m)
		}
	}
}

// TestToolArgumentsDuplicateMembers: arguments with a member twice are
// refused before validation, so that what the schema checks is what the
// handler receives.
func TestToolArgumentsDuplicateMembers(t *testing.T) {
	s := newTestServer(nil)
	type inner struct {
		X int `json:"x"`
		Y int `json:"y" jsonschema:"maximum=1"`
	}
	ran := false
	AddTool(s, &protocol.Tool{Name: "bounded"}, func(ctx context.Context, req *CallRequest, in struct {
		A inner `json:"a"`
	}) (string, error) {
		ran = true
		return fmt.Sprint(in.A.Y), nil
	})
	for _, args := range []string{
		`{"a":{"x":1,"y":5},"a":{"x":1}}`,
		`{"a":{"x":1,"y":5,"y":0}}`,
		`{"a":{"x":1,"y":0},"\u0061":{"x":1,"y":5}}`,
	} {
		p := json.RawMessage(`{"name":"bounded","arguments":` + args + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
		e := wantError(t, do(t, s, protocol.MethodToolsCall, p), protocol.CodeInvalidParams)
		if !strings.Contains(e.Message, "duplicate member") {
			t.Errorf("%s: %q", args, e.Message)
		}
	}
	if ran {
		t.Error("the handler ran with duplicated arguments")
	}
	// A huge name is not echoed whole.
	long := strings.Repeat("n", 100000)
	p := json.RawMessage(`{"name":"bounded","arguments":{"` + long + `":1,"` + long + `":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	if e := wantError(t, do(t, s, protocol.MethodToolsCall, p), protocol.CodeInvalidParams); len(e.Message) > 400 {
		t.Errorf("error message of %d bytes", len(e.Message))
	}
}

// TestErrorsDoNotEchoWhole: an error message repeats at most a bounded
// part of what the client sent.
func TestErrorsDoNotEchoWhole(t *testing.T) {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "t"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) { return "", nil })
	s.AddPrompt(&protocol.Prompt{Name: "p"}, func(ctx context.Context, req *PromptRequest) (*protocol.GetPromptResult, error) {
		return &protocol.GetPromptResult{}, nil
	})
	long := strings.Repeat("é", 1<<20)
	for _, method := range []string{protocol.MethodToolsCall, protocol.MethodPromptsGet} {
		p := json.RawMessage(`{"name":"` + long + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
		e := wantError(t, do(t, s, method, p), protocol.CodeInvalidParams)
		if len(e.Message) > 300 || !utf8.ValidString(e.Message) || !strings.HasSuffix(e.Message, "…") {
			t.Errorf("%s: a message of %d bytes: %.80q", method, len(e.Message), e.Message)
		}
	}
}
