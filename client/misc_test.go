package client_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

func allHandlers() *client.Options {
	h := &nameElicitation{name: "Ada"}
	return &client.Options{
		Elicitation: h.handle,
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{SamplingMessage: protocol.SamplingMessage{Role: protocol.RoleAssistant, Content: []protocol.Content{&protocol.TextContent{Text: "Hi"}}}, Model: "test-model"}, nil
		},
		Roots: func(ctx context.Context) (*protocol.ListRootsResult, error) {
			return &protocol.ListRootsResult{Roots: []*protocol.Root{{URI: "file:///work", Name: "work"}}}, nil
		},
	}
}

func TestAllInputKinds(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	for _, cn := range []struct {
		name string
		dial func() transport.ClientConn
	}{
		{"http", func() transport.ClientConn { return hs.conn() }},
		{"stdio", func() transport.ClientConn { return serveStdio(t, both) }},
	} {
		for _, era := range []client.Era{client.EraAuto, client.EraLegacy} {
			t.Run(cn.name+"/"+era.String(), func(t *testing.T) {
				o := allHandlers()
				o.Era = era
				s, err := newClient(o).Connect(ctx, cn.dial(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for tool, want := range map[string]string{
					"test_input_required_result_multiple_inputs": "Hi, Ada (roots: file:///work)",
					"test_input_required_result_sampling":        "LLM response: Hi",
					"test_input_required_result_list_roots":      "Received roots: file:///work",
					"test_input_required_result_request_state":   "state-ok: not confirmed",
				} {
					res, err := s.CallTool(ctx, tool, nil, nil)
					if err != nil {
						t.Errorf("%s: %v", tool, err)
						continue
					}
					if got := textOf(t, res); got != want {
						t.Errorf("%s = %q, want %q", tool, got, want)
					}
				}
				pr, err := s.GetPrompt(ctx, "test_input_required_result_prompt", nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tc, ok := pr.Messages[0].Content.(*protocol.TextContent); !ok || tc.Text != "Prompt with context: ctx-Ada" {
					t.Errorf("prompt %#v", pr.Messages[0].Content)
				}
			})
		}
	}
}

func TestCapabilities(t *testing.T) {
	fn := allHandlers()
	cases := []struct {
		name string
		opts *client.Options
		want string
	}{
		{"none", nil, `{}`},
		{"elicitation", &client.Options{Elicitation: fn.Elicitation}, `{"elicitation":{}}`},
		{"elicitation modes", &client.Options{Elicitation: fn.Elicitation, ElicitationModes: []string{"form", "url"}}, `{"elicitation":{"form":{},"url":{}}}`},
		{"all", fn, `{"elicitation":{},"roots":{},"sampling":{}}`},
	}
	for _, tc := range cases {
		b, err := json.Marshal(newClient(tc.opts).Capabilities())
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		json.Unmarshal(b, &got)
		json.Unmarshal([]byte(tc.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: capabilities %s, want %s", tc.name, b, tc.want)
		}
	}
}

func TestLogging(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	var mu sync.Mutex
	var got []string
	onLog := func(p *protocol.LoggingMessageParams) {
		mu.Lock()
		defer mu.Unlock()
		s, _ := p.Data.(string)
		got = append(got, string(p.Level)+" "+s)
	}
	logged := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}

	// Modern: the level travels with each request.
	s, err := newClient(&client.Options{LogLevel: protocol.LevelInfo, OnLog: onLog}).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(ctx, "test_logging_tool", nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if l := logged(); len(l) != 1 || l[0] != "info Logging tool started" {
		t.Errorf("modern log messages %q", l)
	}

	// Legacy: logging/setLevel, then messages on the request's stream.
	mu.Lock()
	got = nil
	mu.Unlock()
	s, err = newClient(&client.Options{Era: client.EraLegacy, OnLog: onLog}).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if err := s.SetLogLevel(ctx, protocol.LevelInfo); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(ctx, "test_tool_with_logging", nil, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"info Tool execution started", "info Tool processing data", "info Tool execution completed"}
	if l := logged(); !reflect.DeepEqual(l, want) {
		t.Errorf("legacy log messages %q, want %q", l, want)
	}
}

func TestConnectCommand(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	bin := everythingBinary(t)
	c := newClient(nil)
	for range 2 {
		s, err := c.ConnectCommand(ctx, bin, []string{"-stdio"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Era() != client.EraModern || s.ServerInfo().Name != everything.Info.Name {
			t.Errorf("era %v info %+v", s.Era(), s.ServerInfo())
		}
		p := s.Process()
		if p == nil || p.PID() <= 0 {
			t.Fatal("no process")
		}
		res, err := s.CallTool(ctx, "echo", map[string]any{"text": "sub"}, nil)
		if err != nil || textOf(t, res) != "sub" {
			t.Fatalf("echo: %v", err)
		}
		s.Close()
		select {
		case <-p.Exited():
		case <-time.After(5 * time.Second):
			t.Fatal("the process outlived its session")
		}
		if err := p.ExitErr(); err != nil {
			t.Errorf("exit: %v", err)
		}
	}
}

func TestFormDefaults(t *testing.T) {
	cases := []struct {
		schema string
		want   map[string]any
	}{
		{`{"type":"object","properties":{"name":{"type":"string","default":"John"},"age":{"type":"integer","default":30}}}`, map[string]any{"name": "John", "age": float64(30)}},
		{`{"properties":{"s":{"type":"string","enum":["a","b"]},"t":{"type":"string","oneOf":[{"const":"x"},{"const":"y"}]}}}`, map[string]any{"s": "a", "t": "x"}},
		{`{"properties":{"s":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"},"a":{"type":"array"},"o":{"type":"object"}}}`, map[string]any{"s": "", "n": 0, "i": 0, "b": false, "a": []any{}}},
		// A boolean is true only when the schema says so: a confirmation
		// without a default is never approved by filling in defaults.
		{`{"properties":{"confirm":{"type":"boolean"},"on":{"type":"boolean","default":true},"off":{"type":"boolean","default":false}},"required":["confirm"]}`, map[string]any{"confirm": false, "on": true, "off": false}},
		{`not json`, map[string]any{}},
	}
	for _, tc := range cases {
		if got := client.FormDefaults(json.RawMessage(tc.schema)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("FormDefaults(%s) = %#v, want %#v", tc.schema, got, tc.want)
		}
	}
}
