package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// rawResult is a result a server-side middleware answers with as it is.
type rawResult struct {
	protocol.ResultHeader
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

func raw(s string) *rawResult { return &rawResult{raw: json.RawMessage(s)} }

// wire records the params of every request a server served, by method,
// and answers the methods in answer itself (a nil answer passes the
// request on): the methods of a small extension, served by an mcpkit
// server wrapped with transport.Use.
type wire struct {
	answer map[string]func(params json.RawMessage) (protocol.Result, error)

	mu     sync.Mutex
	params map[string][]json.RawMessage
}

func (w *wire) middleware(next transport.ServeFunc) transport.ServeFunc {
	return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
		m := req.Message
		w.mu.Lock()
		if w.params == nil {
			w.params = map[string][]json.RawMessage{}
		}
		w.params[m.Method] = append(w.params[m.Method], append(json.RawMessage(nil), m.Params...))
		w.mu.Unlock()
		if f := w.answer[m.Method]; f != nil {
			return f(m.Params)
		}
		return next(ctx, req)
	}
}

// sent returns the params of the requests for method, in order.
func (w *wire) sent(method string) []json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.params[method])
}

// metaMembers returns the members of a request's _meta, in order, keys
// repeated as often as they occur.
func metaMembers(t *testing.T, params json.RawMessage) (keys []string, values map[string]string) {
	t.Helper()
	values = map[string]string{}
	meta := member(params, "_meta")
	if meta == nil {
		return nil, values
	}
	// A repeated member is an error of the reader: the test fails.
	if err := jsonrpc.EachMember(meta, func(k []byte, v jsontext.Value) error {
		keys = append(keys, string(k))
		values[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatalf("_meta %s: %v", meta, err)
	}
	return keys, values
}

// greeting is a small extension: greeting/hello answers with a greeting
// for params.name, naming the trace it was sent in.
func greeting(params json.RawMessage) (protocol.Result, error) {
	var p struct {
		Name string               `json:"name"`
		Meta protocol.RequestMeta `json:"_meta"`
	}
	if err := jsonrpc.Unmarshal(params, &p); err != nil {
		return nil, protocol.InvalidParams(err.Error())
	}
	b, _ := json.Marshal(map[string]string{"text": "Hello, " + p.Name, "trace": p.Meta.Traceparent})
	return raw(string(b)), nil
}

// extensionEnvs serves the everything server wrapped with w over HTTP and
// stdio, and returns a dial per transport and era.
func extensionEnvs(t *testing.T, w *wire) []struct {
	name string
	era  client.Era
	dial func() transport.ClientConn
} {
	core, both := everythingServers(t, nil, nil)
	core.AddExtension("com.example/greeting", nil)
	h := transport.Use(both, w.middleware)
	hs := serveHTTP(t, h)
	var out []struct {
		name string
		era  client.Era
		dial func() transport.ClientConn
	}
	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		out = append(out,
			struct {
				name string
				era  client.Era
				dial func() transport.ClientConn
			}{"http/" + era.String(), era, func() transport.ClientConn { return hs.conn() }},
			struct {
				name string
				era  client.Era
				dial func() transport.ClientConn
			}{"stdio/" + era.String(), era, func() transport.ClientConn { return serveStdio(t, h) }})
	}
	return out
}

const traceparent = `"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`

func traceMeta() map[string]json.RawMessage {
	return map[string]json.RawMessage{
		"traceparent":      json.RawMessage(traceparent),
		"tracestate":       json.RawMessage(`"congo=t61rcWkgMzE"`),
		"baggage":          json.RawMessage(`"userId=alice"`),
		"com.example/tone": json.RawMessage(`{ "warmth": 3 }`),
	}
}

// TestCallExtensionMethod: a method the client knows nothing of, with
// params, a decoded result and extra _meta members, in both eras over
// both transports; each member reaches the server once, after the
// client's own.
func TestCallExtensionMethod(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 30*time.Second)
	w := &wire{answer: map[string]func(json.RawMessage) (protocol.Result, error){"greeting/hello": greeting}}
	for _, env := range extensionEnvs(t, w) {
		t.Run(env.name, func(t *testing.T) {
			s, err := newClient(&client.Options{Era: env.era}).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			before := len(w.sent("greeting/hello"))
			var res struct {
				Text  string `json:"text"`
				Trace string `json:"trace"`
			}
			if err := s.Call(ctx, "greeting/hello", map[string]string{"name": "Ada"}, &res, &client.CallOptions{Meta: traceMeta()}); err != nil {
				t.Fatal(err)
			}
			if res.Text != "Hello, Ada" || `"`+res.Trace+`"` != traceparent {
				t.Errorf("result %+v", res)
			}
			sent := w.sent("greeting/hello")[before:]
			if len(sent) != 1 {
				t.Fatalf("%d requests, want 1", len(sent))
			}
			keys, values := metaMembers(t, sent[0])
			want := []string{"baggage", "com.example/tone", "traceparent", "tracestate"}
			if env.era == client.EraModern {
				want = append([]string{protocol.MetaProtocolVersion, protocol.MetaClientCapabilities, protocol.MetaClientInfo}, want...)
			}
			if !slices.Equal(keys, want) {
				t.Errorf("_meta keys %q, want %q", keys, want)
			}
			if values["com.example/tone"] != `{"warmth":3}` {
				t.Errorf("com.example/tone sent as %s, want it compacted", values["com.example/tone"])
			}
			// A nil result discards it; nil params send none.
			if err := s.Call(ctx, "greeting/hello", nil, nil, nil); err != nil {
				t.Errorf("Call with nil params and result: %v", err)
			}
		})
	}
}

// TestCallRefused: what the client must not send fails the call before
// anything is sent.
func TestCallRefused(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	w := &wire{answer: map[string]func(json.RawMessage) (protocol.Result, error){"greeting/hello": greeting}}
	envs := extensionEnvs(t, w)
	for _, env := range []int{1, 3} { // stdio, both eras
		env := envs[env]
		t.Run(env.name, func(t *testing.T) {
			s, err := newClient(&client.Options{Era: env.era}).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			meta := func(k, v string) *client.CallOptions {
				return &client.CallOptions{Meta: map[string]json.RawMessage{k: json.RawMessage(v)}}
			}
			before := len(w.sent("greeting/hello"))
			for _, tc := range []struct {
				name   string
				params any
				o      *client.CallOptions
				want   error
			}{
				{"progressToken", nil, meta(protocol.MetaProgressToken, `"p"`), client.ErrReservedMeta},
				{"protocolVersion", nil, meta(protocol.MetaProtocolVersion, `"2026-07-28"`), client.ErrReservedMeta},
				{"clientInfo", nil, meta(protocol.MetaClientInfo, `{}`), client.ErrReservedMeta},
				{"clientCapabilities", nil, meta(protocol.MetaClientCapabilities, `{}`), client.ErrReservedMeta},
				{"logLevel", nil, meta(protocol.MetaLogLevel, `"debug"`), client.ErrReservedMeta},
				{"space in the name", nil, meta("trace parent", `"x"`), client.ErrInvalidMeta},
				{"empty prefix", nil, meta("/x", `"x"`), client.ErrInvalidMeta},
				{"label starting with a digit", nil, meta("1example.com/x", `"x"`), client.ErrInvalidMeta},
				{"label ending with a hyphen", nil, meta("example-/x", `"x"`), client.ErrInvalidMeta},
				{"empty label", nil, meta("com..example/x", `"x"`), client.ErrInvalidMeta},
				{"name ending with a dot", nil, meta("com.example/x.", `"x"`), client.ErrInvalidMeta},
				{"two slashes", nil, meta("com.example/a/b", `"x"`), client.ErrInvalidMeta},
				{"value not JSON", nil, meta("traceparent", `00-abc`), client.ErrInvalidMeta},
				{"value truncated", nil, meta("com.example/x", `{"a":`), client.ErrInvalidMeta},
				{"value empty", nil, meta("com.example/x", ``), client.ErrInvalidMeta},
				{"params an array", []int{1}, nil, nil},
				{"params a string", "Ada", nil, nil},
				{"params with _meta", json.RawMessage(`{"name":"Ada","_meta":{"traceparent":"x"}}`), nil, nil},
				{"params with inputResponses", map[string]any{"inputResponses": map[string]any{}}, nil, nil},
				{"params with requestState", map[string]any{"requestState": "s"}, nil, nil},
			} {
				err := s.Call(ctx, "greeting/hello", tc.params, nil, tc.o)
				if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
				}
			}
			if n := len(w.sent("greeting/hello")) - before; n != 0 {
				t.Errorf("%d refused calls reached the server", n)
			}
			// Valid names, prefixed or not, and an empty name (the spec
			// allows it); params given as JSON text, spread over lines.
			for _, k := range []string{"traceparent", "com.example/x", "io.modelcontextprotocol/related-task", "a.b-c/n_1.x-2", "com.example/", "x"} {
				if err := s.Call(ctx, "greeting/hello", json.RawMessage("{\n \"name\": \"Ada\"\n}"), nil, meta(k, `"v"`)); err != nil {
					t.Errorf("key %q refused: %v", k, err)
				}
			}
			for _, p := range w.sent("greeting/hello")[before:] {
				if strings.ContainsAny(string(p), "\n") || member(p, "name") == nil {
					t.Errorf("params sent as %q", p)
				}
			}
		})
	}
}

// TestCallMetaEveryRound: extra _meta, the caller's and a middleware's,
// goes with every round of a request the server asks input for, and the
// caller's map is left as it was.
func TestCallMetaEveryRound(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 30*time.Second)
	w := &wire{}
	addMember := client.Middleware{Call: func(next client.CallFunc) client.CallFunc {
		return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
			c.Meta["com.example/mw"] = json.RawMessage(`1`)
			return next(ctx, c)
		}
	}}
	for _, env := range extensionEnvs(t, w) {
		t.Run(env.name, func(t *testing.T) {
			h := &nameElicitation{name: "Ada"}
			s, err := newClient(&client.Options{Era: env.era, Elicitation: h.handle, Middleware: []client.Middleware{addMember}}).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			before := len(w.sent(protocol.MethodToolsCall))
			meta := map[string]json.RawMessage{"traceparent": json.RawMessage(traceparent), "com.example/k": json.RawMessage(`"v"`)}
			res, err := s.CallTool(ctx, "test_input_required_result_multi_round", nil, &client.CallOptions{Meta: meta})
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != "Ada's favorite color is teal" {
				t.Errorf("result %q", got)
			}
			if len(meta) != 2 {
				t.Errorf("the caller's Meta was changed: %v", meta)
			}
			rounds := w.sent(protocol.MethodToolsCall)[before:]
			want := 1 // a legacy server asks with requests on the call's stream
			if env.era == client.EraModern {
				want = 3
			}
			if len(rounds) != want {
				t.Fatalf("%d tools/call requests, want %d", len(rounds), want)
			}
			for i, p := range rounds {
				keys, values := metaMembers(t, p)
				for _, k := range []string{"traceparent", "com.example/k", "com.example/mw"} {
					if n := count(keys, k); n != 1 {
						t.Errorf("round %d: %q sent %d times in %q", i+1, k, n, keys)
					}
				}
				if values["traceparent"] != traceparent || values["com.example/mw"] != "1" {
					t.Errorf("round %d: _meta %v", i+1, values)
				}
				if n := count(keys, protocol.MetaProtocolVersion); env.era == client.EraModern && n != 1 {
					t.Errorf("round %d: protocolVersion sent %d times", i+1, n)
				}
				if i > 0 && member(p, "inputResponses") == nil {
					t.Errorf("round %d carries no inputResponses", i+1)
				}
			}
		})
	}
}

func count(keys []string, k string) int {
	n := 0
	for _, x := range keys {
		if x == k {
			n++
		}
	}
	return n
}

// TestCallInputRequiredRules: an extension's method may be answered with
// input_required (and its retries keep the extra _meta); a core method
// other than tools/call, prompts/get and resources/read may not.
func TestCallInputRequiredRules(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	ask := func(params json.RawMessage) (protocol.Result, error) {
		var p struct {
			InputResponses map[string]protocol.ElicitResult `json:"inputResponses"`
		}
		_ = jsonrpc.Unmarshal(params, &p)
		if a, ok := p.InputResponses["who"]; ok {
			b, _ := json.Marshal(map[string]any{"resultType": "complete", "text": fmt.Sprint("Hello, ", a.Content["name"])})
			return raw(string(b)), nil
		}
		return raw(`{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}`), nil
	}
	w := &wire{answer: map[string]func(json.RawMessage) (protocol.Result, error){
		"greeting/ask":               ask,
		protocol.MethodComplete:      ask,
		protocol.MethodResourcesList: ask,
	}}
	env := extensionEnvs(t, w)[1] // stdio, modern
	h := &nameElicitation{name: "Ada"}
	s, err := newClient(&client.Options{Elicitation: h.handle}).Connect(ctx, env.dial(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var res struct {
		Text string `json:"text"`
	}
	if err := s.Call(ctx, "greeting/ask", nil, &res, &client.CallOptions{Meta: map[string]json.RawMessage{"traceparent": json.RawMessage(traceparent)}}); err != nil {
		t.Fatal(err)
	}
	if res.Text != "Hello, Ada" {
		t.Errorf("result %+v", res)
	}
	sent := w.sent("greeting/ask")
	if len(sent) != 2 {
		t.Fatalf("%d rounds, want 2", len(sent))
	}
	for i, p := range sent {
		if _, v := metaMembers(t, p); v["traceparent"] != traceparent {
			t.Errorf("round %d without the traceparent: %s", i+1, p)
		}
	}
	if _, err := s.ListResources(ctx, &client.ListOptions{NoCache: true}); err == nil || !strings.Contains(err.Error(), "input_required") {
		t.Errorf("resources/list answered with input_required: err %v", err)
	}
	if _, err := s.Complete(ctx, protocol.CompleteReference{Type: protocol.RefPrompt, Name: "p"}, protocol.CompleteArgument{Name: "a"}, nil); err == nil || !strings.Contains(err.Error(), "input_required") {
		t.Errorf("completion/complete answered with input_required: err %v", err)
	}
	if n := len(w.sent(protocol.MethodResourcesList)); n != 1 {
		t.Errorf("%d resources/list requests, want 1 (no retry)", n)
	}
	if got := h.messages(); len(got) != 1 {
		t.Errorf("elicitation asked %q, want once", got)
	}
}

// TestCallUnknownResultType: without a middleware that knows it, a result
// type the client does not know fails the call, in both eras.
func TestCallUnknownResultType(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	w := &wire{answer: map[string]func(json.RawMessage) (protocol.Result, error){
		"greeting/later": func(json.RawMessage) (protocol.Result, error) {
			return raw(`{"resultType":"task","task":{"taskId":"t-1"}}`), nil
		},
	}}
	for _, env := range extensionEnvs(t, w) {
		t.Run(env.name, func(t *testing.T) {
			s, err := newClient(&client.Options{Era: env.era}).Connect(ctx, env.dial(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Call(ctx, "greeting/later", nil, nil, nil); !errors.Is(err, client.ErrUnknownResultType) {
				t.Errorf("err %v, want ErrUnknownResultType", err)
			}
		})
	}
}
