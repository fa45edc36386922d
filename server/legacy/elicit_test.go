package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
)

const urlCaps = `{"elicitation":{"form":{},"url":{}}}`

// addURLTools adds to core:
//
//	signin   a URL elicitation with elicitationId "e-1"; once accepted, it
//	         announces the completion on its own stream
//	later    a URL elicitation with elicitationId "e-2", completed later
//	anon     a URL elicitation without an elicitationId
//	form     a form elicitation with mode "form" and an elicitationId
func addURLTools(core *server.Server) {
	url := func(id string, complete bool) func(context.Context, *server.CallRequest, struct{}) (string, error) {
		return func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.Elicit("signin", &protocol.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/signin", ElicitationID: id})
			if err != nil {
				return "", err
			}
			if complete {
				if err := req.ElicitationComplete(id); err != nil {
					return "", err
				}
			}
			return res.Action, nil
		}
	}
	server.AddTool(core, &protocol.Tool{Name: "signin"}, url("e-1", true))
	server.AddTool(core, &protocol.Tool{Name: "later"}, url("e-2", false))
	server.AddTool(core, &protocol.Tool{Name: "anon"}, url("", false))
	server.AddTool(core, &protocol.Tool{Name: "form"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.Elicit("name", &protocol.ElicitParams{Mode: "form", Message: "Name?", RequestedSchema: json.RawMessage(nameSchema), ElicitationID: "not-sent"})
			if err != nil {
				return "", err
			}
			return res.Content["name"].(string), nil
		})
}

func openAt(t *testing.T, a *legacy.Adapter, version, caps string) *legacy.Session {
	t.Helper()
	ts, resp := a.Initialize(context.Background(), req(t, "0", "initialize", initParams(version, caps)))
	if resp == nil || resp.Error != nil || ts == nil {
		t.Fatalf("initialize: %s", wire(resp))
	}
	s := ts.(*legacy.Session)
	s.HandleNotification(context.Background(), note(t, "notifications/initialized", ""))
	return s
}

// TestURLElicitation: a 2025-11-25 client that declared url mode gets the
// handler's URL elicitation with its elicitationId, then, once it
// accepted, the completion notification on the request's stream.
func TestURLElicitation(t *testing.T) {
	a, core := newAdapter(t, nil)
	addURLTools(core.Server)
	s := openAt(t, a, "2025-11-25", urlCaps)
	rec := newRecorder()
	res := call(context.Background(), s, req(t, "5", "tools/call", `{"name":"signin"}`), rec)
	line := rec.next(t)
	if want := `{"jsonrpc":"2.0","id":"mcpkit-1","method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/signin","elicitationId":"e-1"}}`; line != want {
		t.Errorf("request to the client\n got %s\nwant %s", line, want)
	}
	answer(s, clientRequest(t, line, "elicitation/create").ID, `{"action":"accept"}`)
	if got, want := rec.next(t), `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e-1"}}`; got != want {
		t.Errorf("notification\n got %s\nwant %s", got, want)
	}
	wantWire(t, await(t, res), `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"accept"}]}}`)
	// Told once: the session forgot the id.
	if err := a.ElicitationComplete("e-1"); !errors.Is(err, legacy.ErrUnknownElicitation) {
		t.Errorf("second completion: %v, want ErrUnknownElicitation", err)
	}
}

// TestURLElicitationCompletedLater: the server announces the completion
// after the request, through the adapter (or the server), on the
// standalone stream of the session that was sent the id — and of no other.
func TestURLElicitationCompletedLater(t *testing.T) {
	a, core := newAdapter(t, nil)
	addURLTools(core.Server)
	s := openAt(t, a, "2025-11-25", urlCaps)
	other := openAt(t, a, "2025-11-25", urlCaps)
	if err := a.ElicitationComplete("e-2"); !errors.Is(err, legacy.ErrUnknownElicitation) {
		t.Fatalf("completion of an id never sent: %v, want ErrUnknownElicitation", err)
	}
	rec := newRecorder()
	res := call(context.Background(), s, req(t, "5", "tools/call", `{"name":"later"}`), rec)
	m := clientRequest(t, rec.next(t), "elicitation/create")
	answer(s, m.ID, `{"action":"accept"}`)
	wantWire(t, await(t, res), `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"accept"}]}}`)

	if err := a.ElicitationComplete("e-2"); err != nil {
		t.Fatalf("ElicitationComplete: %v", err)
	}
	want := `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e-2"}}`
	if got := legacy.LastQueued(s); got != want {
		t.Errorf("queued %s, want %s", got, want)
	}
	if n := legacy.QueueLen(other); n != 0 {
		t.Errorf("the other session has %d messages queued: %s", n, legacy.LastQueued(other))
	}
	rec.none(t, 10*time.Millisecond)
	if err := core.ElicitationComplete("e-2"); !errors.Is(err, legacy.ErrUnknownElicitation) {
		t.Errorf("second completion: %v, want ErrUnknownElicitation", err)
	}

	// Through the server, and forgotten with the session.
	res = call(context.Background(), s, req(t, "6", "tools/call", `{"name":"later"}`), rec)
	answer(s, clientRequest(t, rec.next(t), "elicitation/create").ID, `{"action":"decline"}`)
	await(t, res)
	s.Close()
	if err := core.ElicitationComplete("e-2"); !errors.Is(err, legacy.ErrUnknownElicitation) {
		t.Errorf("completion after the session ended: %v, want ErrUnknownElicitation", err)
	}
}

// TestURLElicitationBounded: a session remembers the last 64 ids.
func TestURLElicitationBounded(t *testing.T) {
	a, core := newAdapter(t, nil)
	server.AddTool(core.Server, &protocol.Tool{Name: "numbered"},
		func(ctx context.Context, req *server.CallRequest, in struct {
			N int `json:"n"`
		}) (string, error) {
			_, err := req.Elicit("u", &protocol.ElicitParams{Mode: "url", Message: "Go", URL: "https://example.com/", ElicitationID: fmt.Sprint("n-", in.N)})
			return "", err
		})
	s := openAt(t, a, "2025-11-25", urlCaps)
	rec := newRecorder()
	for n := range 65 {
		res := call(context.Background(), s, req(t, "1", "tools/call", fmt.Sprintf(`{"name":"numbered","arguments":{"n":%d}}`, n)), rec)
		answer(s, clientRequest(t, rec.next(t), "elicitation/create").ID, `{"action":"cancel"}`)
		await(t, res)
	}
	if err := a.ElicitationComplete("n-0"); !errors.Is(err, legacy.ErrUnknownElicitation) {
		t.Errorf("the oldest id: %v, want ErrUnknownElicitation", err)
	}
	for _, id := range []string{"n-1", "n-64"} {
		if err := a.ElicitationComplete(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// TestURLElicitationMadeUpID: without the handler's elicitationId, the
// client gets one made up, which no completion names.
func TestURLElicitationMadeUpID(t *testing.T) {
	a, core := newAdapter(t, nil)
	addURLTools(core.Server)
	s := openAt(t, a, "2025-11-25", urlCaps)
	rec := newRecorder()
	res := call(context.Background(), s, req(t, "5", "tools/call", `{"name":"anon"}`), rec)
	m := clientRequest(t, rec.next(t), "elicitation/create")
	var p protocol.ElicitParams
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Mode != "url" || len(p.ElicitationID) < 16 {
		t.Errorf("params %s: want url mode with a long elicitationId", m.Params)
	}
	answer(s, m.ID, `{"action":"accept"}`)
	await(t, res)
}

// TestURLElicitationRefused: url mode needs a 2025-11-25 client that
// declared it; the others get the missing-capability error, without being
// asked.
func TestURLElicitationRefused(t *testing.T) {
	const want = `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{"url":{}}}}}}`
	const wantAny = `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{}}}}}`
	tests := []struct {
		version, caps, want string
	}{
		{"2025-11-25", `{"elicitation":{}}`, want},
		{"2025-11-25", `{"elicitation":{"form":{}}}`, want},
		{"2025-11-25", `{}`, want},
		{"2025-06-18", urlCaps, want},
		{"2025-06-18", `{"elicitation":{}}`, want},
		// No elicitation at all before 2025-06-18.
		{"2025-03-26", urlCaps, want},
		{"2024-11-05", urlCaps, want},
	}
	for _, tt := range tests {
		t.Run(tt.version+tt.caps, func(t *testing.T) {
			a, core := newAdapter(t, nil)
			addURLTools(core.Server)
			s := openAt(t, a, tt.version, tt.caps)
			rec := newRecorder()
			wantWire(t, s.Handle(context.Background(), req(t, "5", "tools/call", `{"name":"signin"}`), rec), tt.want)
			if tt.version < "2025-06-18" {
				// Nor form mode.
				wantWire(t, s.Handle(context.Background(), req(t, "5", "tools/call", `{"name":"greet"}`), rec), wantAny)
			}
			if got := rec.all(); len(got) != 0 {
				t.Errorf("the client was asked: %q", got)
			}
		})
	}
}

// TestFormElicitationShape: form mode's mode member is 2025-11-25's, and
// an elicitationId is url mode's only.
func TestFormElicitationShape(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"2025-11-25", `{"mode":"form","message":"Name?","requestedSchema":` + nameSchema + `}`},
		{"2025-06-18", `{"message":"Name?","requestedSchema":` + nameSchema + `}`},
	} {
		t.Run(tt.version, func(t *testing.T) {
			a, core := newAdapter(t, nil)
			addURLTools(core.Server)
			s := openAt(t, a, tt.version, `{"elicitation":{}}`)
			rec := newRecorder()
			res := call(context.Background(), s, req(t, "5", "tools/call", `{"name":"form"}`), rec)
			m := clientRequest(t, rec.next(t), "elicitation/create")
			if string(m.Params) != tt.want {
				t.Errorf("params\n got %s\nwant %s", m.Params, tt.want)
			}
			answer(s, m.ID, `{"action":"accept","content":{"name":"Ada"}}`)
			wantWire(t, await(t, res), `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"Ada"}]}}`)
		})
	}
}

// TestSamplingShape: before 2025-11-25 a sampling message has one block
// and no _meta; 2024-11-05 has no audio.
func TestSamplingShape(t *testing.T) {
	add := func(core *server.Server) {
		server.AddTool(core, &protocol.Tool{Name: "sample"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.CreateMessage("m", &protocol.CreateMessageParams{MaxTokens: 10, Messages: []*protocol.SamplingMessage{{
				Role:    protocol.RoleUser,
				Content: []protocol.Content{&protocol.TextContent{Text: "Listen:"}, &protocol.AudioContent{Data: "YXU=", MIMEType: "audio/wav"}},
				Meta:    protocol.Meta{"io.example/k": "v"},
			}}})
			if err != nil {
				return "", err
			}
			return res.Model, nil
		})
	}
	tests := []struct{ version, want string }{
		{"2025-11-25", `{"messages":[{"role":"user","content":[{"type":"text","text":"Listen:"},{"type":"audio","data":"YXU=","mimeType":"audio/wav"}],"_meta":{"io.example/k":"v"}}],"maxTokens":10}`},
		{"2025-06-18", `{"messages":[{"role":"user","content":{"type":"text","text":"Listen:"}},{"role":"user","content":{"type":"audio","data":"YXU=","mimeType":"audio/wav"}}],"maxTokens":10}`},
		{"2024-11-05", `{"messages":[{"role":"user","content":{"type":"text","text":"Listen:"}},{"role":"user","content":{"type":"text","text":"[audio content omitted: not supported by protocol revision 2024-11-05]"}}],"maxTokens":10}`},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			a, core := newAdapter(t, nil)
			add(core.Server)
			s := openAt(t, a, tt.version, `{"sampling":{"tools":{}}}`)
			rec := newRecorder()
			res := call(context.Background(), s, req(t, "5", "tools/call", `{"name":"sample"}`), rec)
			m := clientRequest(t, rec.next(t), "sampling/createMessage")
			if string(m.Params) != tt.want {
				t.Errorf("params\n got %s\nwant %s", m.Params, tt.want)
			}
			answer(s, m.ID, `{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m-1"}`)
			wantWire(t, await(t, res), `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"m-1"}]}}`)
		})
	}
}

// TestProgressShape: 2024-11-05 progress has no message.
func TestProgressShape(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"2025-03-26", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2,"message":"half way"}}`},
		{"2024-11-05", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2}}`},
	} {
		t.Run(tt.version, func(t *testing.T) {
			a, _ := newAdapter(t, nil)
			s := openAt(t, a, tt.version, `{}`)
			rec := newRecorder()
			resp := s.Handle(context.Background(), req(t, "5", "tools/call", `{"name":"progress","_meta":{"progressToken":"p"}}`), rec)
			wantWire(t, resp, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"done"}]}}`)
			if got := strings.Join(rec.all(), "\n"); got != tt.want {
				t.Errorf("notifications\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
