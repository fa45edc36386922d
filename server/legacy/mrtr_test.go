package legacy_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
)

const elicitCaps = `{"elicitation":{}}`

// clientRequest decodes a request the session sent through the notifier
// and checks that it is a request with a string id.
func clientRequest(t *testing.T, line string, method string) *jsonrpc.Message {
	t.Helper()
	m := decode(t, line)
	if !m.IsRequest() || m.Method != method {
		t.Fatalf("want a %s request, got %s", method, line)
	}
	if !m.ID.IsString() {
		t.Errorf("request id %s is not a string", m.ID.Raw())
	}
	return m
}

// answer sends the client's result for the request with id.
func answer(s *legacy.Session, id jsonrpc.ID, result string) {
	s.HandleResponse(context.Background(), &jsonrpc.Message{ID: id, Result: []byte(result)})
}

func TestElicitationAnswered(t *testing.T) {
	a, _ := newAdapter(t, nil)
	s := open(t, a, elicitCaps, true)
	rec := newRecorder()
	res := call(context.Background(), s, req(t, "5", "tools/call", `{"name":"greet"}`), rec)

	line := rec.next(t)
	if want := `{"jsonrpc":"2.0","id":"mcpkit-1","method":"elicitation/create","params":{"message":"What is your name?","requestedSchema":` + nameSchema + `}}`; line != want {
		t.Errorf("request to the client\n got %s\nwant %s", line, want)
	}
	m := clientRequest(t, line, "elicitation/create")
	// Answers to other ids are ignored.
	answer(s, jsonrpc.StringID("mcpkit-99"), `{"action":"accept","content":{"name":"Mallory"}}`)
	answer(s, jsonrpc.IntID(1), `{"action":"accept","content":{"name":"Mallory"}}`)
	answer(s, m.ID, `{"action":"accept","content":{"name":"Ada"}}`)
	wantWire(t, await(t, res), `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}`)
	rec.none(t, 10*time.Millisecond)
}

func TestListRootsRequest(t *testing.T) {
	a, _ := newAdapter(t, nil)
	s := open(t, a, `{"roots":{"listChanged":true}}`, true)
	rec := newRecorder()
	res := call(context.Background(), s, req(t, "5", "tools/call", `{"name":"roots"}`), rec)
	line := rec.next(t)
	// roots/list takes no params, and none is sent (null is not allowed).
	if want := `{"jsonrpc":"2.0","id":"mcpkit-1","method":"roots/list"}`; line != want {
		t.Errorf("request to the client\n got %s\nwant %s", line, want)
	}
	answer(s, clientRequest(t, line, "roots/list").ID, `{"roots":[{"uri":"file:///work","name":"work"}]}`)
	wantWire(t, await(t, res), `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"file:///work"}]}}`)
}

func TestElicitationFailures(t *testing.T) {
	tests := []struct {
		name  string
		opts  *legacy.Options
		reply func(s *legacy.Session, m *jsonrpc.Message, cancel context.CancelFunc)
		want  string // "" for no response
	}{
		{
			name: "client error",
			reply: func(s *legacy.Session, m *jsonrpc.Message, _ context.CancelFunc) {
				s.HandleResponse(context.Background(), &jsonrpc.Message{ID: m.ID, Error: jsonrpc.NewError(-1, "user went away", nil)})
			},
			want: `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"the client answered elicitation/create with an error: user went away"}}`,
		},
		{
			name:  "no answer in time",
			opts:  &legacy.Options{InputTimeout: 30 * time.Millisecond},
			reply: func(*legacy.Session, *jsonrpc.Message, context.CancelFunc) {},
			want:  `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"the client did not answer elicitation/create in time"}}`,
		},
		{
			name:  "request context ends",
			reply: func(_ *legacy.Session, _ *jsonrpc.Message, cancel context.CancelFunc) { cancel() },
		},
		{
			name: "request cancelled by the client",
			reply: func(s *legacy.Session, _ *jsonrpc.Message, _ context.CancelFunc) {
				s.HandleNotification(context.Background(), &jsonrpc.Message{Method: "notifications/cancelled", Params: []byte(`{"requestId":5}`)})
			},
		},
		{
			name:  "session closed",
			reply: func(s *legacy.Session, _ *jsonrpc.Message, _ context.CancelFunc) { s.Close() },
		},
		{
			name: "answer not an elicitation result",
			reply: func(s *legacy.Session, m *jsonrpc.Message, _ context.CancelFunc) {
				answer(s, m.ID, `{"action":"maybe"}`)
			},
			want: `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"inputResponses[\"name\"]: elicitation action must be accept, decline or cancel"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newAdapter(t, tt.opts)
			s := open(t, a, elicitCaps, true)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rec := newRecorder()
			res := call(ctx, s, req(t, "5", "tools/call", `{"name":"greet"}`), rec)
			m := clientRequest(t, rec.next(t), "elicitation/create")
			tt.reply(s, m, cancel)
			got := await(t, res)
			if tt.want == "" {
				if got != nil {
					t.Errorf("want no response, got %s", wire(got))
				}
				return
			}
			wantWire(t, got, tt.want)
			// A late answer is ignored.
			answer(s, m.ID, `{"action":"accept","content":{"name":"Ada"}}`)
		})
	}
}

// TestMultiRound: a tool that elicits twice sends the second request only
// once the first is answered.
func TestMultiRound(t *testing.T) {
	a, _ := newAdapter(t, nil)
	s := open(t, a, elicitCaps, true)
	rec := newRecorder()
	res := call(context.Background(), s, req(t, "9", "tools/call", `{"name":"twice"}`), rec)

	first := rec.next(t)
	if want := `{"jsonrpc":"2.0","id":"mcpkit-1","method":"elicitation/create","params":{"message":"Name?","requestedSchema":` + nameSchema + `}}`; first != want {
		t.Errorf("first request\n got %s\nwant %s", first, want)
	}
	rec.none(t, 20*time.Millisecond)
	answer(s, clientRequest(t, first, "elicitation/create").ID, `{"action":"accept","content":{"name":"Ada"}}`)

	second := rec.next(t)
	if want := `{"jsonrpc":"2.0","id":"mcpkit-2","method":"elicitation/create","params":{"message":"Colour?","requestedSchema":` + colourSchema + `}}`; second != want {
		t.Errorf("second request\n got %s\nwant %s", second, want)
	}
	answer(s, clientRequest(t, second, "elicitation/create").ID, `{"action":"accept","content":{"colour":"teal"}}`)
	wantWire(t, await(t, res), `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Ada likes teal"}]}}`)
}

// TestMaxRounds: MaxRounds bounds the rounds of client input one request
// may take.
func TestMaxRounds(t *testing.T) {
	tests := []struct {
		maxRounds int
		asked     int    // requests sent to the client
		want      string // the response
	}{
		{maxRounds: 1, asked: 1, want: `{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"tools/call needed more than 1 rounds of client input"}}`},
		{maxRounds: 2, asked: 2, want: `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Ada likes teal"}]}}`},
		{maxRounds: 3, asked: 2, want: `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Ada likes teal"}]}}`},
	}
	answers := []string{`{"action":"accept","content":{"name":"Ada"}}`, `{"action":"accept","content":{"colour":"teal"}}`}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			a, _ := newAdapter(t, &legacy.Options{MaxRounds: tt.maxRounds})
			s := open(t, a, elicitCaps, true)
			rec := newRecorder()
			res := call(context.Background(), s, req(t, "9", "tools/call", `{"name":"twice"}`), rec)
			for i := range tt.asked {
				answer(s, clientRequest(t, rec.next(t), "elicitation/create").ID, answers[i])
			}
			wantWire(t, await(t, res), tt.want)
			rec.none(t, 10*time.Millisecond)
		})
	}
}

// TestMissingCapability: a tool that needs a capability the client did not
// declare at initialize fails without asking; the modern -32021 becomes
// -32600, which the legacy revisions define.
func TestMissingCapability(t *testing.T) {
	tests := []struct {
		tool string
		caps string
		want string
	}{
		{"greet", `{}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{}}}}}`},
		{"greet", `{"elicitation":{"url":{}}}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{}}}}}`},
		{"roots", `{"sampling":{}}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Missing required client capability","data":{"requiredCapabilities":{"roots":{}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.caps, func(t *testing.T) {
			a, _ := newAdapter(t, nil)
			s := open(t, a, tt.caps, true)
			rec := newRecorder()
			wantWire(t, s.Handle(context.Background(), req(t, "5", "tools/call", `{"name":"`+tt.tool+`"}`), rec), tt.want)
			if got := rec.all(); len(got) != 0 {
				t.Errorf("the client was asked: %q", got)
			}
		})
	}
	// The modern core answers the same with -32021.
	_, core := newAdapter(t, nil)
	modern := core.Handle(context.Background(), req(t, "5", "tools/call", `{`+modernMeta+`,"name":"greet"}`), nil)
	if code := errorCode(t, modern); code != protocol.CodeMissingRequiredClientCapability {
		t.Errorf("modern code %d, want -32021", code)
	}
}

// TestClientUnreachable: without a notifier, or when sending fails, the
// request fails instead of waiting.
func TestClientUnreachable(t *testing.T) {
	a, _ := newAdapter(t, nil)
	s := open(t, a, elicitCaps, true)
	wantWire(t, s.Handle(context.Background(), req(t, "5", "tools/call", `{"name":"greet"}`), nil),
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"the client cannot be reached with elicitation/create"}}`)
	rec := newRecorder()
	rec.fail = errBroken
	wantWire(t, s.Handle(context.Background(), req(t, "6", "tools/call", `{"name":"greet"}`), rec),
		`{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"sending elicitation/create to the client: stream gone"}}`)
}

// TestConcurrentElicitations: two requests of one session waiting for
// answers at once each get their own.
func TestConcurrentElicitations(t *testing.T) {
	a, _ := newAdapter(t, nil)
	s := open(t, a, elicitCaps, true)
	recA, recB := newRecorder(), newRecorder()
	resA := call(context.Background(), s, req(t, `"a"`, "tools/call", `{"name":"greet"}`), recA)
	resB := call(context.Background(), s, req(t, `"b"`, "tools/call", `{"name":"greet"}`), recB)
	mA := clientRequest(t, recA.next(t), "elicitation/create")
	mB := clientRequest(t, recB.next(t), "elicitation/create")
	if mA.ID == mB.ID {
		t.Fatalf("both requests use id %s", mA.ID.Raw())
	}
	answer(s, mB.ID, `{"action":"accept","content":{"name":"Bo"}}`)
	answer(s, mA.ID, `{"action":"accept","content":{"name":"Al"}}`)
	wantWire(t, await(t, resA), `{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"Hello, Al!"}]}}`)
	wantWire(t, await(t, resB), `{"jsonrpc":"2.0","id":"b","result":{"content":[{"type":"text","text":"Hello, Bo!"}]}}`)
}
