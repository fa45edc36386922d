package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// trail records what middleware saw, in order.
type trail struct {
	mu   sync.Mutex
	seen []string
}

func (tr *trail) add(format string, args ...any) {
	tr.mu.Lock()
	tr.seen = append(tr.seen, fmt.Sprintf(format, args...))
	tr.mu.Unlock()
}

func (tr *trail) lines() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.seen)
}

func (tr *trail) reset() {
	tr.mu.Lock()
	tr.seen = nil
	tr.mu.Unlock()
}

// named returns a middleware recording its name around every call and
// every incoming message.
func (tr *trail) named(name string) client.Middleware {
	return client.Middleware{
		Call: func(next client.CallFunc) client.CallFunc {
			return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
				tr.add("%s > %s %s", name, c.Method, c.Params)
				res, err := next(ctx, c)
				tr.add("%s < %s error=%v", name, c.Method, err != nil)
				return res, err
			}
		},
		Incoming: func(next client.IncomingFunc) client.IncomingFunc {
			return func(ctx context.Context, m *client.Incoming) (json.RawMessage, error) {
				tr.add("%s in %s request=%v", name, m.Method, m.Request)
				return next(ctx, m)
			}
		},
	}
}

// TestMiddlewareOrder: the first middleware is the outermost, for calls
// and for incoming messages; one without functions is skipped.
func TestMiddlewareOrder(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	w := &wire{}
	for _, env := range extensionEnvs(t, w) {
		t.Run(env.name, func(t *testing.T) {
			tr := &trail{}
			var progress []float64
			c := newClient(&client.Options{Era: env.era, Middleware: []client.Middleware{tr.named("a"), {}, tr.named("b")}})
			s, err := c.Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := tr.lines(); len(got) != 0 {
				t.Errorf("the handshake went through the middleware: %q", got)
			}
			_, err = s.CallTool(ctx, "test_tool_with_progress", nil, &client.CallOptions{OnProgress: func(p *protocol.ProgressParams) {
				progress = append(progress, p.Progress)
			}})
			if err != nil {
				t.Fatal(err)
			}
			in := "a in notifications/progress request=false"
			inB := "b in notifications/progress request=false"
			want := []string{
				`a > tools/call {"name":"test_tool_with_progress"}`,
				`b > tools/call {"name":"test_tool_with_progress"}`,
				in, inB, in, inB, in, inB,
				"b < tools/call error=false",
				"a < tools/call error=false",
			}
			if got := tr.lines(); !slices.Equal(got, want) {
				t.Errorf("middleware saw\n%q\nwant\n%q", got, want)
			}
			if !slices.Equal(progress, []float64{0, 50, 100}) {
				t.Errorf("progress %v", progress)
			}
		})
	}
}

// TestMiddlewareTaskResult: a middleware turns an extension's result type
// into the complete result by calling the extension's methods, the way the
// Tasks client polls a task; without it the call fails.
func TestMiddlewareTaskResult(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	var mu sync.Mutex
	polls := 0
	w := &wire{answer: map[string]func(json.RawMessage) (protocol.Result, error){
		protocol.MethodToolsCall: func(p json.RawMessage) (protocol.Result, error) {
			return raw(`{"resultType":"task","task":{"taskId":"t-1","status":"working"}}`), nil
		},
		"tasks/get": func(p json.RawMessage) (protocol.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			if id, _ := jsonrpc.StringValue(member(p, "taskId")); id != "t-1" {
				return nil, protocol.InvalidParams("no such task")
			}
			polls++
			if polls%3 != 0 {
				return raw(`{"resultType":"complete","taskId":"t-1","status":"working"}`), nil
			}
			return raw(`{"resultType":"complete","taskId":"t-1","status":"completed"}`), nil
		},
		"tasks/result": func(p json.RawMessage) (protocol.Result, error) {
			return raw(`{"resultType":"complete","content":[{"type":"text","text":"done"}]}`), nil
		},
	}}
	tasks := client.Middleware{Call: func(next client.CallFunc) client.CallFunc {
		return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
			res, err := next(ctx, c)
			if err != nil || member(res, "resultType") == nil || string(member(res, "resultType")) != `"task"` {
				return res, err
			}
			var r struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
			}
			if err := jsonrpc.Unmarshal(res, &r); err != nil {
				return nil, err
			}
			params, _ := json.Marshal(map[string]string{"taskId": r.Task.TaskID})
			for range 10 {
				st, err := next(ctx, &client.Call{Method: "tasks/get", Params: params})
				if err != nil {
					return nil, err
				}
				if string(member(st, "status")) == `"completed"` {
					return next(ctx, &client.Call{Method: "tasks/result", Params: params})
				}
			}
			return nil, errors.New("the task did not complete")
		}
	}}
	// Further in, a middleware that adds to every call's _meta, the
	// calls the tasks middleware makes itself included.
	stamp := client.Middleware{Call: func(next client.CallFunc) client.CallFunc {
		return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
			c.Meta["com.example/stamp"] = json.RawMessage(`"s"`)
			c.Options.NoCache = true
			return next(ctx, c)
		}
	}}
	for _, env := range extensionEnvs(t, w) {
		t.Run(env.name, func(t *testing.T) {
			s, err := newClient(&client.Options{Era: env.era, Middleware: []client.Middleware{tasks, stamp}}).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			before := len(w.sent("tasks/get"))
			res, err := s.CallTool(ctx, "long_job", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != "done" {
				t.Errorf("result %q", got)
			}
			gets := w.sent("tasks/get")[before:]
			if len(gets) != 3 {
				t.Errorf("%d tasks/get, want 3", len(gets))
			}
			// The middleware's own calls carry the era's _meta.
			for _, p := range gets {
				_, v := metaMembers(t, p)
				if (v[protocol.MetaProtocolVersion] != "") != (env.era == client.EraModern) || v["com.example/stamp"] != `"s"` {
					t.Errorf("tasks/get _meta %v in the %v era", v, env.era)
				}
			}

			plain, err := newClient(&client.Options{Era: env.era}).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			if _, err := plain.CallTool(ctx, "long_job", nil, nil); !errors.Is(err, client.ErrUnknownResultType) {
				t.Errorf("without the middleware: err %v, want ErrUnknownResultType", err)
			}
		})
	}
}

// answerAs is an incoming middleware that answers every elicitation with
// name itself, drops log messages, and records every message (and the
// answer to a request).
func answerAs(tr *trail, name string) client.Middleware {
	return client.Middleware{Incoming: func(next client.IncomingFunc) client.IncomingFunc {
		return func(ctx context.Context, m *client.Incoming) (json.RawMessage, error) {
			switch {
			case m.Method == protocol.MethodElicit:
				b, _ := json.Marshal(protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": name}})
				tr.add("%s request=%v answered %s", m.Method, m.Request, b)
				// Over lines: the client sends it on one (stdio's framing).
				return json.MarshalIndent(protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": name}}, "", "\t")
			case m.Method == protocol.NotificationMessage:
				tr.add("%s dropped", m.Method)
				return nil, nil
			}
			if !m.Request {
				// Before it is passed on: the test may see it delivered
				// as soon as it is.
				tr.add("%s passed on", m.Method)
				return next(ctx, m)
			}
			res, err := next(ctx, m)
			tr.add("%s request=%v answered %s", m.Method, m.Request, res)
			return res, err
		}
	}}
}

// TestMiddlewareIncoming: a server's requests for input (MRTR input
// requests, a legacy server's requests) and its notifications (progress,
// log messages, list changes) pass through the middleware, which may
// answer a request itself or drop a notification.
func TestMiddlewareIncoming(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 30*time.Second)
	for _, e := range listenEnvs(t, nil) {
		for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
			t.Run(e.name+"/"+era.String(), func(t *testing.T) {
				env := e.env(t)
				tr := &trail{}
				h := &nameElicitation{name: "Ada"}
				var logs []string
				var mu sync.Mutex
				c := newClient(&client.Options{
					Era: era, Elicitation: h.handle, LogLevel: protocol.LevelInfo,
					OnLog: func(p *protocol.LoggingMessageParams) {
						mu.Lock()
						logs = append(logs, fmt.Sprint(p.Data))
						mu.Unlock()
					},
					Middleware: []client.Middleware{answerAs(tr, "Grace")},
				})
				s, err := c.Connect(ctx, env.dial(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()

				// A request for input, answered by the middleware.
				res, err := s.CallTool(ctx, "test_input_required_result_elicitation", nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := textOf(t, res); got != "Hello, Grace!" {
					t.Errorf("result %q, want the middleware's answer", got)
				}
				if got := h.messages(); len(got) != 0 {
					t.Errorf("the handler was asked %q past the middleware", got)
				}
				want := []string{`elicitation/create request=true answered {"action":"accept","content":{"name":"Grace"}}`}
				if got := tr.lines(); !slices.Equal(got, want) {
					t.Errorf("middleware saw %q, want %q", got, want)
				}

				// Log messages, dropped by the middleware.
				tr.reset()
				tool := "test_logging_tool"
				if era == client.EraLegacy {
					if err := s.SetLogLevel(ctx, protocol.LevelInfo); err != nil {
						t.Fatal(err)
					}
					tool = "test_tool_with_logging"
				}
				if _, err := s.CallTool(ctx, tool, nil, nil); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				if len(logs) != 0 {
					t.Errorf("OnLog got %q past the middleware", logs)
				}
				mu.Unlock()
				got := tr.lines()
				if len(got) == 0 || slices.ContainsFunc(got, func(l string) bool { return l != "notifications/message dropped" }) {
					t.Errorf("middleware saw %q, want log messages only", got)
				}

				// A list change on a subscription, passed on.
				tr.reset()
				sub, err := s.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{watched}})
				if err != nil {
					t.Fatal(err)
				}
				defer sub.Close()
				env.core.NotifyResourceUpdated(watched)
				if n := next(t, sub); n.Method != protocol.NotificationResourceUpdated || n.URI != watched {
					t.Errorf("notification %+v", n)
				}
				want = []string{protocol.NotificationResourceUpdated + " passed on"}
				if era == client.EraModern {
					want = append([]string{protocol.NotificationSubscriptionsAcknowledged + " passed on"}, want...)
				}
				if got := tr.lines(); !slices.Equal(got, want) {
					t.Errorf("middleware saw %q, want %q", got, want)
				}
			})
		}
	}
}

// TestMiddlewareIncomingRefuses: a middleware's error, an answer that is
// none, or a panic answers a legacy server's request with an error and
// fails an MRTR round; the session goes on.
func TestMiddlewareIncomingRefuses(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	answers := []struct {
		name string
		res  json.RawMessage
		err  error
	}{
		{"error", nil, jsonrpc.NewError(protocol.CodeInvalidParams, "not today", nil)},
		{"nothing", nil, nil},
		{"not JSON", json.RawMessage(`{"action":`), nil},
		{"panic", nil, nil},
	}
	w := &wire{}
	for _, env := range extensionEnvs(t, w) {
		for _, a := range answers {
			t.Run(env.name+"/"+a.name, func(t *testing.T) {
				refuse := client.Middleware{Incoming: func(next client.IncomingFunc) client.IncomingFunc {
					return func(ctx context.Context, m *client.Incoming) (json.RawMessage, error) {
						if m.Request && a.name == "panic" {
							panic("secret detail")
						}
						if m.Request {
							return a.res, a.err
						}
						return next(ctx, m)
					}
				}}
				h := &nameElicitation{name: "Ada"}
				s, err := newClient(&client.Options{Era: env.era, Elicitation: h.handle, Middleware: []client.Middleware{refuse}}).Connect(ctx, env.dial(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				before := len(w.sent(protocol.MethodToolsCall))
				res, err := s.CallTool(ctx, "test_input_required_result_elicitation", nil, nil)
				if err == nil && !res.IsError {
					t.Errorf("the call succeeded: %+v", res)
				}
				if n := len(w.sent(protocol.MethodToolsCall)) - before; n != 1 {
					t.Errorf("%d tools/call requests, want 1 (no retry without an answer)", n)
				}
				if got := h.messages(); len(got) != 0 {
					t.Errorf("the handler was asked %q", got)
				}
				if res, err := s.CallTool(ctx, "echo", map[string]any{"text": "still here"}, nil); err != nil || textOf(t, res) != "still here" {
					t.Errorf("the session did not go on: %v", err)
				}
			})
		}
	}
}

// TestMiddlewareParams: params a middleware sets are checked and sent on
// one line, as the client's own are.
func TestMiddlewareParams(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	w := &wire{answer: map[string]func(json.RawMessage) (protocol.Result, error){"greeting/hello": greeting}}
	envs := extensionEnvs(t, w)
	for _, tc := range []struct {
		params string
		ok     bool
	}{
		{"{\n\t\"name\": \"Ada\"\r\n}", true},
		{` { "name" : "Ada" } `, true},
		{` { } `, true},
		{`null`, true},
		{`{"name":"Ada"`, false},
		{`["Ada"]`, false},
		{`{"name":"Ada","requestState":"x"}`, false},
	} {
		for _, env := range []int{1, 3} { // stdio, both eras
			env := envs[env]
			rewrite := client.Middleware{Call: func(next client.CallFunc) client.CallFunc {
				return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
					c.Params = json.RawMessage(tc.params)
					return next(ctx, c)
				}
			}}
			s, err := newClient(&client.Options{Era: env.era, Middleware: []client.Middleware{rewrite}}).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Text string `json:"text"`
			}
			err = s.Call(ctx, "greeting/hello", nil, &res, nil)
			s.Close()
			if tc.ok != (err == nil) {
				t.Errorf("%s: params %q: err %v", env.name, tc.params, err)
			}
		}
	}
	for _, p := range w.sent("greeting/hello") {
		if p[0] != '{' || slices.Contains(p, '\n') || slices.Contains(p, '\r') {
			t.Errorf("params sent as %q", p)
		}
	}
	if n := len(w.sent("greeting/hello")); n != 8 {
		t.Errorf("%d requests reached the server, want 8", n)
	}
}

// TestNotificationHandlerPanics: an application's notification handler
// that panics ends neither the session nor the process.
func TestNotificationHandlerPanics(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	for _, env := range extensionEnvs(t, &wire{}) {
		t.Run(env.name, func(t *testing.T) {
			var calls atomic.Int32
			c := newClient(&client.Options{Era: env.era, LogLevel: protocol.LevelInfo, OnLog: func(*protocol.LoggingMessageParams) {
				calls.Add(1)
				panic("secret detail")
			}})
			s, err := c.Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			tool := "test_logging_tool"
			if env.era == client.EraLegacy {
				if err := s.SetLogLevel(ctx, protocol.LevelInfo); err != nil {
					t.Fatal(err)
				}
				tool = "test_tool_with_logging"
			}
			if _, err := s.CallTool(ctx, tool, nil, nil); err != nil {
				t.Fatal(err)
			}
			if calls.Load() == 0 {
				t.Fatal("no log message reached the handler")
			}
			if res, err := s.CallTool(ctx, "echo", map[string]any{"text": "still here"}, nil); err != nil || textOf(t, res) != "still here" {
				t.Errorf("the session did not go on: %v", err)
			}
		})
	}
}
