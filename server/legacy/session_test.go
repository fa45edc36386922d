package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// noArgs is the input schema inferred for tools without parameters.
const noArgs = `{"type":"object","properties":{},"additionalProperties":false}`

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// TestSessionMethods drives each legacy method through Session.Handle and
// asserts the response bytes.
func TestSessionMethods(t *testing.T) {
	tests := []struct {
		name   string
		method string
		params string
		want   string // the whole response line
	}{
		{name: "ping", method: "ping", want: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{name: "ping with params", method: "ping", params: `{"_meta":{"x":1}}`, want: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{name: "setLevel", method: "logging/setLevel", params: `{"level":"warning"}`, want: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{name: "setLevel emergency", method: "logging/setLevel", params: `{"level":"emergency"}`, want: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{name: "setLevel unknown level", method: "logging/setLevel", params: `{"level":"loud"}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"logging/setLevel needs a valid level"}}`},
		{name: "setLevel upper case", method: "logging/setLevel", params: `{"level":"ERROR"}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"logging/setLevel needs a valid level"}}`},
		{name: "setLevel without level", method: "logging/setLevel",
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"logging/setLevel needs a valid level"}}`},
		{name: "setLevel level not a string", method: "logging/setLevel", params: `{"level":3}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"logging/setLevel needs a valid level"}}`},
		{name: "subscribe", method: "resources/subscribe", params: `{"uri":"tiny://a"}`, want: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{name: "unsubscribe", method: "resources/unsubscribe", params: `{"uri":"tiny://a"}`, want: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{name: "subscribe without uri", method: "resources/subscribe", params: `{}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"resources/subscribe needs a uri"}}`},
		{name: "unsubscribe without params", method: "resources/unsubscribe",
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"resources/unsubscribe needs a uri"}}`},
		{name: "tools/list", method: "tools/list",
			want: `{"jsonrpc":"2.0","id":1,"result":{"tools":[` +
				`{"name":"block","description":"Waits for the test","inputSchema":` + noArgs + `},` +
				`{"name":"echo","description":"Echoes its text","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},` +
				`{"name":"greet","description":"Asks a name, then greets","inputSchema":` + noArgs + `},` +
				`{"name":"log","description":"Logs at four levels","inputSchema":` + noArgs + `},` +
				`{"name":"progress","description":"Reports progress","inputSchema":` + noArgs + `},` +
				`{"name":"roots","description":"Lists the client's roots","inputSchema":` + noArgs + `},` +
				`{"name":"traced","description":"Returns a result with its own _meta","inputSchema":` + noArgs + `},` +
				`{"name":"twice","description":"Asks two questions in two rounds","inputSchema":` + noArgs + `}]}}`},
		{name: "tools/call", method: "tools/call", params: `{"name":"echo","arguments":{"text":"hi"}}`,
			want: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`},
		{name: "tools/call keeps the result's own _meta", method: "tools/call", params: `{"name":"traced"}`,
			want: `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.example/trace":"t-1"},"content":[{"type":"text","text":"traced"}]}}`},
		{name: "tools/call ignores modern _meta members", method: "tools/call",
			params: `{"name":"echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/logLevel":"nonsense"}}`,
			want:   `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}]}}`},
		{name: "tools/call ignores client MRTR members", method: "tools/call",
			params: `{"name":"echo","arguments":{"text":"y"},"inputResponses":{"k":{}},"requestState":"forged"}`,
			want:   `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"y"}]}}`},
		{name: "tools/call unknown tool", method: "tools/call", params: `{"name":"nope"}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}`},
		{name: "tools/call params not an object", method: "tools/call", params: `["echo"]`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"params must be an object"}}`},
		{name: "resources/list", method: "resources/list",
			want: `{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"tiny://a","name":"a","mimeType":"text/plain"},{"uri":"tiny://b","name":"b","mimeType":"text/plain"}]}}`},
		{name: "resources/read", method: "resources/read", params: `{"uri":"tiny://a"}`,
			want: `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"tiny://a","mimeType":"text/plain","text":"A"}]}}`},
		{name: "resources/read unknown uri", method: "resources/read", params: `{"uri":"tiny://nope"}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"tiny://nope"}}}`},
		{name: "prompts/list without prompts", method: "prompts/list",
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: prompts/list"}}`},
		{name: "unknown method", method: "tools/frobnicate",
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: tools/frobnicate"}}`},
		{name: "initialize again", method: "initialize", params: initParams("2025-11-25", `{}`),
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"the session is already initialized"}}`},
		{name: "server/discover is modern only", method: "server/discover",
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: server/discover"}}`},
		{name: "subscriptions/listen is modern only", method: "subscriptions/listen", params: `{"notifications":{"toolsListChanged":true}}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: subscriptions/listen"}}`},
	}
	a, core := newAdapter(t, nil)
	s := open(t, a, `{}`, true)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantWire(t, s.Handle(context.Background(), req(t, "1", tt.method, tt.params), newRecorder()), tt.want)
		})
	}

	// The stripped members are there in the modern answer to the same
	// requests, so the comparisons above do test the mapping.
	for _, m := range []struct{ method, params string }{
		{"tools/list", `{` + modernMeta + `}`},
		{"tools/call", `{` + modernMeta + `,"name":"echo","arguments":{"text":"hi"}}`},
	} {
		got := wire(core.Handle(context.Background(), req(t, "1", m.method, m.params), nil))
		for _, member := range []string{`"resultType":`, `"io.modelcontextprotocol/serverInfo":`} {
			if !strings.Contains(got, member) {
				t.Errorf("modern %s answer lacks %s: %s", m.method, member, got)
			}
		}
		if m.method == "tools/list" && (!strings.Contains(got, `"ttlMs":`) || !strings.Contains(got, `"cacheScope":`)) {
			t.Errorf("modern tools/list lacks its cache hints: %s", got)
		}
	}
	modern := wire(core.Handle(context.Background(), req(t, "1", "resources/read", `{`+modernMeta+`,"uri":"tiny://nope"}`), nil))
	if !strings.Contains(modern, `"code":-32602`) {
		t.Errorf("modern resources/read of an unknown uri: %s, want -32602", modern)
	}
}

// TestSessionLogging sets a level with logging/setLevel and checks which of
// the tool's messages (debug, info, warning, error) reach the request's
// notifier.
func TestSessionLogging(t *testing.T) {
	tests := []struct {
		level string // "" sends no logging/setLevel
		want  []string
	}{
		// Without logging/setLevel the core sends no log messages at all.
		{level: "", want: nil},
		{level: "debug", want: []string{"debug", "info", "warning", "error"}},
		{level: "info", want: []string{"info", "warning", "error"}},
		{level: "warning", want: []string{"warning", "error"}},
		{level: "error", want: []string{"error"}},
		{level: "critical", want: nil},
	}
	for _, tt := range tests {
		t.Run("level="+tt.level, func(t *testing.T) {
			a, _ := newAdapter(t, nil)
			s := open(t, a, `{}`, true)
			if tt.level != "" {
				wantWire(t, s.Handle(context.Background(), req(t, "1", "logging/setLevel", `{"level":"`+tt.level+`"}`), newRecorder()),
					`{"jsonrpc":"2.0","id":1,"result":{}}`)
			}
			rec := newRecorder()
			wantWire(t, s.Handle(context.Background(), req(t, "2", "tools/call", `{"name":"log"}`), rec),
				`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"logged"}]}}`)
			var want []string
			for _, l := range tt.want {
				want = append(want, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"`+l+`","logger":"tiny","data":"`+l+` message"}}`)
			}
			got := rec.all()
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("notifications\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestSessionLogLevelChanges checks that a later logging/setLevel applies to
// the requests after it.
func TestSessionLogLevelChanges(t *testing.T) {
	a, _ := newAdapter(t, nil)
	s := open(t, a, `{}`, true)
	for i, tt := range []struct {
		level string
		count int
	}{{"error", 1}, {"debug", 4}, {"warning", 2}} {
		s.Handle(context.Background(), req(t, "1", "logging/setLevel", `{"level":"`+tt.level+`"}`), newRecorder())
		rec := newRecorder()
		s.Handle(context.Background(), req(t, "2", "tools/call", `{"name":"log"}`), rec)
		if got := len(rec.all()); got != tt.count {
			t.Errorf("step %d, level %s: %d messages, want %d", i, tt.level, got, tt.count)
		}
	}
	// An invalid level leaves the previous one in place.
	s.Handle(context.Background(), req(t, "1", "logging/setLevel", `{"level":"loud"}`), newRecorder())
	rec := newRecorder()
	s.Handle(context.Background(), req(t, "2", "tools/call", `{"name":"log"}`), rec)
	if got := len(rec.all()); got != 2 {
		t.Errorf("after an invalid level: %d messages, want 2", got)
	}
}

func TestSessionProgress(t *testing.T) {
	tests := []struct {
		name   string
		params string
		want   []string
	}{
		{name: "string token", params: `{"name":"progress","_meta":{"progressToken":"tok-1"}}`,
			want: []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":1,"total":2,"message":"half way"}}`}},
		{name: "integer token", params: `{"name":"progress","_meta":{"progressToken":42}}`,
			want: []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":42,"progress":1,"total":2,"message":"half way"}}`}},
		{name: "no token", params: `{"name":"progress"}`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newAdapter(t, nil)
			s := open(t, a, `{}`, true)
			rec := newRecorder()
			wantWire(t, s.Handle(context.Background(), req(t, "3", "tools/call", tt.params), rec),
				`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}`)
			if got := rec.all(); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("notifications\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSessionCancelled(t *testing.T) {
	a, core := newAdapter(t, nil)
	s := open(t, a, `{}`, true)
	res := call(context.Background(), s, req(t, `"call-1"`, "tools/call", `{"name":"block"}`), newRecorder())
	<-core.started
	// Cancelling other ids, or with malformed params, leaves it running.
	s.HandleNotification(context.Background(), note(t, "notifications/cancelled", `{"requestId":"call-2"}`))
	s.HandleNotification(context.Background(), note(t, "notifications/cancelled", `{"requestId":"call-1","reason":7}`))
	s.HandleNotification(context.Background(), note(t, "notifications/cancelled", ""))
	select {
	case r := <-res:
		t.Fatalf("finished before its cancellation: %s", wire(r))
	case <-time.After(20 * time.Millisecond):
	}
	s.HandleNotification(context.Background(), note(t, "notifications/cancelled", `{"requestId":"call-1","reason":"user"}`))
	if r := await(t, res); r != nil {
		t.Errorf("a cancelled request was answered: %s", wire(r))
	}
	// The session goes on.
	wantWire(t, s.Handle(context.Background(), req(t, "2", "ping", ""), newRecorder()), `{"jsonrpc":"2.0","id":2,"result":{}}`)
}

func TestSessionContextCancelled(t *testing.T) {
	a, core := newAdapter(t, nil)
	s := open(t, a, `{}`, true)
	ctx, cancel := context.WithCancel(context.Background())
	res := call(ctx, s, req(t, "1", "tools/call", `{"name":"block"}`), newRecorder())
	<-core.started
	cancel()
	if r := await(t, res); r != nil {
		t.Errorf("a request whose context ended was answered: %s", wire(r))
	}
}

// TestChangeFeed checks what reaches a session's standalone stream.
func TestChangeFeed(t *testing.T) {
	tests := []struct {
		name    string
		publish func(c *tiny)
		want    string
	}{
		{"tools", func(c *tiny) { c.NotifyToolsChanged() }, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{"prompts", func(c *tiny) { c.NotifyPromptsChanged() }, `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`},
		{"resources", func(c *tiny) { c.NotifyResourcesChanged() }, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, core := newAdapter(t, nil)
			s := open(t, a, `{}`, true)
			feedReady(t, core)
			tt.publish(core)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			got, err := s.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Next\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestResourceUpdatedReachesSubscribers: a resource update reaches only the
// sessions subscribed to its URI, in the order of the feed; a session
// catches up with what changed before its reader attached.
func TestResourceUpdatedReachesSubscribers(t *testing.T) {
	a, core := newAdapter(t, nil)
	subA := open(t, a, `{}`, true)
	subB := open(t, a, `{}`, true)
	none := open(t, a, `{}`, true)
	both := open(t, a, `{}`, true)
	gone := open(t, a, `{}`, true)
	subscribe := func(s *legacy.Session, method, uri string) {
		t.Helper()
		wantWire(t, s.Handle(context.Background(), req(t, "1", method, `{"uri":"`+uri+`"}`), newRecorder()), `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}
	subscribe(subA, "resources/subscribe", tinyURI)
	subscribe(subB, "resources/subscribe", otherURI)
	subscribe(both, "resources/subscribe", tinyURI)
	subscribe(both, "resources/subscribe", otherURI)
	subscribe(gone, "resources/subscribe", tinyURI)
	subscribe(gone, "resources/unsubscribe", tinyURI)
	feedReady(t, core)

	core.NotifyResourceUpdated(tinyURI)
	core.NotifyToolsChanged()
	sessions := []*legacy.Session{subA, subB, none, both, gone}
	const (
		updated = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"tiny://a"}}`
		marker  = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	)
	wants := [][]string{{updated, marker}, {marker}, {marker}, {updated, marker}, {marker}}
	for i, s := range sessions {
		if got := drain(t, s, 50*time.Millisecond); strings.Join(got, "\n") != strings.Join(wants[i], "\n") {
			t.Errorf("session %d\n got %q\nwant %q", i, got, wants[i])
		}
	}
}

// drain reads the messages of s's standalone stream until none comes for
// quiet.
func drain(t testing.TB, s *legacy.Session, quiet time.Duration) []string {
	t.Helper()
	var got []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), quiet)
		m, err := s.Next(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m))
	}
}

// TestNothingQueuedBeforeInitialized: a session receives change
// notifications only after notifications/initialized.
func TestNothingQueuedBeforeInitialized(t *testing.T) {
	a, core := newAdapter(t, nil)
	early := open(t, a, `{}`, false)
	ready := open(t, a, `{}`, true)
	feedReady(t, core)
	core.NotifyToolsChanged()
	core.NotifyPromptsChanged()
	if got := drain(t, ready, 50*time.Millisecond); len(got) != 2 {
		t.Fatalf("the ready session got %q", got)
	}
	if got := drain(t, early, 20*time.Millisecond); len(got) != 0 {
		t.Fatalf("before notifications/initialized: %q", got)
	}

	early.HandleNotification(context.Background(), note(t, "notifications/initialized", ""))
	core.NotifyResourcesChanged()
	want := []string{`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`}
	if got := drain(t, early, 50*time.Millisecond); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after initialized\n got %q\nwant %q", got, want)
	}
}

// TestQueueDropsOldest: beyond QueueSize the oldest messages of an outbox
// nobody reads give way.
func TestQueueDropsOldest(t *testing.T) {
	a, _ := newAdapter(t, &legacy.Options{QueueSize: 2})
	s := open(t, a, `{}`, true)
	for _, m := range []string{"a", "b", "c"} {
		if err := a.Store().Push(context.Background(), s.ID(), []byte(`"`+m+`"`)); err != nil {
			t.Fatal(err)
		}
	}
	if got := drain(t, s, 20*time.Millisecond); strings.Join(got, " ") != `"b" "c"` {
		t.Errorf("outbox %q, want the last two", got)
	}
}

// TestNextWakesOnEnqueue: a reader blocked in Next gets a message published
// while it waits.
func TestNextWakesOnEnqueue(t *testing.T) {
	a, core := newAdapter(t, nil)
	s := open(t, a, `{}`, true)
	feedReady(t, core)
	got := make(chan string, 1)
	go func() {
		m, _ := s.Next(context.Background())
		got <- string(m)
	}()
	time.Sleep(10 * time.Millisecond)
	core.NotifyToolsChanged()
	select {
	case m := <-got:
		if m != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
			t.Errorf("Next = %s", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next did not wake")
	}
}

func TestSessionAttachment(t *testing.T) {
	a, _ := newAdapter(t, nil)
	s := open(t, a, `{}`, false)
	calls := 0
	create := func() any { calls++; return &calls }
	first := s.Attachment(create)
	if second := s.Attachment(create); second != first || calls != 1 {
		t.Errorf("Attachment made %d values", calls)
	}
}

// TestSessionMetaEitherWay: the core sees the same _meta for a legacy
// request whether its params are handed on as they came (no _meta of the
// client's own) or rewritten (with one), the log level set in the session
// included.
func TestSessionMetaEitherWay(t *testing.T) {
	core := server.New(tinyInfo, nil)
	server.AddTool(core, &protocol.Tool{Name: "meta", Description: "Describes its request's _meta"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			m := req.Meta
			b, err := json.Marshal(map[string]any{"version": m.ProtocolVersion, "info": m.ClientInfo,
				"caps": m.ClientCapabilities, "level": m.LogLevel})
			return string(b), err
		})
	a := legacy.New(core, nil)
	defer a.Close()
	ctx := context.Background()
	sess, _ := a.Initialize(ctx, &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: protocol.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"elicitation":{}},"clientInfo":{"name":"either","version":"2"}}`)})
	call := func(params string) string {
		t.Helper()
		msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + params + `}`))
		if err != nil {
			t.Fatal(err)
		}
		out := sess.Handle(ctx, msg, nil).Append(nil)
		var resp struct {
			Result protocol.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || len(resp.Result.Content) == 0 || resp.Result.IsError {
			t.Fatalf("%s: %s", params, out)
		}
		tc, ok := resp.Result.Content[0].(*protocol.TextContent)
		if !ok {
			t.Fatalf("%s: %s", params, out)
		}
		return tc.Text
	}
	for _, level := range []string{"", "warning"} {
		if level != "" {
			msg, _ := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"` + level + `"}}`))
			sess.Handle(ctx, msg, nil)
		}
		plain := call(`{"name":"meta"}`)
		rewritten := call(`{"name":"meta","_meta":{"progressToken":"p"}}`)
		if plain != rewritten {
			t.Errorf("level %q: _meta of params as they came\n%s\nrewritten\n%s", level, plain, rewritten)
		}
		for _, want := range []string{`"version":"2026-07-28"`, `"name":"either"`, `"listChanged":true`, `"level":"` + level + `"`} {
			if !strings.Contains(plain, want) {
				t.Errorf("level %q: %s lacks %s", level, plain, want)
			}
		}
	}
}
