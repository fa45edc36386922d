package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

const wait = 10 * time.Second

// version is the revision the tests' clients speak.
const version = protocol.Version2024_11_05

// probe observes the slow tool of testServer.
type probe struct {
	started   chan struct{}
	cancelled chan struct{}
}

// testServer returns a server with tools (echo, sample, slow), a resource
// and a prompt; it is closed when the test ends.
func testServer(t *testing.T) (*server.Server, *probe) {
	t.Helper()
	p := &probe{started: make(chan struct{}, 8), cancelled: make(chan struct{}, 8)}
	s := server.New(protocol.Implementation{Name: "sse-test", Version: "1.0.0"}, nil)
	t.Cleanup(func() { s.Close() })
	type echoArgs struct {
		Text string `json:"text"`
	}
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *server.CallRequest, in echoArgs) (string, error) {
			return "echo: " + in.Text, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "sample", Description: "Asks the client's model"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.CreateMessage("sample", &protocol.CreateMessageParams{
				Messages:  []*protocol.SamplingMessage{{Role: protocol.RoleUser, Content: []protocol.Content{&protocol.TextContent{Text: "Say hi"}}}},
				MaxTokens: 10,
			})
			if err != nil {
				return "", err
			}
			if len(res.Content) == 0 {
				return "", nil
			}
			tc, _ := res.Content[0].(*protocol.TextContent)
			return "model said: " + tc.Text + " (" + res.Model + ")", nil
		})
	server.AddTool(s, &protocol.Tool{Name: "slow", Description: "Runs until cancelled"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			p.started <- struct{}{}
			<-ctx.Done()
			p.cancelled <- struct{}{}
			return "", ctx.Err()
		})
	s.AddResource(&protocol.Resource{URI: "test://hello", Name: "hello", MIMEType: "text/plain"}, server.TextResource("text/plain", "Hello, world"))
	s.AddPrompt(&protocol.Prompt{Name: "greet", Description: "Greets someone", Arguments: []*protocol.PromptArgument{{Name: "name", Required: true}}},
		func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{{Role: protocol.RoleUser, Content: &protocol.TextContent{Text: "Greet " + req.Arguments["name"]}}}}, nil
		})
	return s, p
}

// serveHTTP serves h over HTTP until the test ends. Call leakcheck.Check
// before it: the server is closed first.
func serveHTTP(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs
}

// withPrincipal puts the X-Principal header's value on the request's
// context, as authentication middleware would.
func withPrincipal(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get("X-Principal"); p != "" {
			r = r.WithContext(transport.WithPrincipal(r.Context(), p))
		}
		h.ServeHTTP(w, r)
	})
}

// tracked signals each GET's end, once its handler has returned.
type tracked struct {
	h     http.Handler
	ended chan struct{}
}

func track(h http.Handler) *tracked { return &tracked{h: h, ended: make(chan struct{}, 16)} }

func (t *tracked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.h.ServeHTTP(w, r)
	if r.Method == http.MethodGet {
		t.ended <- struct{}{}
	}
}

// rawStream is a GET stream read event by event.
type rawStream struct {
	t        *testing.T
	hs       *httptest.Server
	resp     *http.Response
	endpoint string // absolute
	events   chan event
	cancel   context.CancelFunc
	done     chan struct{}
}

// openStream opens a stream at path with the header (name, value pairs)
// and reads its endpoint event. It is closed when the test ends.
func openStream(t *testing.T, hs *httptest.Server, path string, header ...string) *rawStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("GET %s: %s %s %s", path, resp.Status, resp.Header.Get("Content-Type"), b)
	}
	s := &rawStream{t: t, hs: hs, resp: resp, events: make(chan event, 64), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(s.events)
		r := newEventReader(resp.Body, 1<<20)
		for {
			ev, err := r.next()
			if err != nil {
				return
			}
			select {
			case s.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(s.close)
	ev := s.next()
	if ev.typ != "endpoint" {
		t.Fatalf("first event %q %s, want endpoint", ev.typ, ev.data)
	}
	if !strings.HasPrefix(string(ev.data), "/") {
		t.Fatalf("endpoint %q is not a relative URL with an absolute path", ev.data)
	}
	s.endpoint = hs.URL + string(ev.data)
	return s
}

// next returns the next event; it fails the test when the stream ends or
// is silent too long.
func (s *rawStream) next() event {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(wait):
		s.t.Fatal("no event")
	}
	return event{}
}

// message returns the next message event's data.
func (s *rawStream) message() string {
	s.t.Helper()
	ev := s.next()
	if ev.typ != "message" {
		s.t.Fatalf("event %q, want message", ev.typ)
	}
	return string(ev.data)
}

// ended waits for the stream to end.
func (s *rawStream) ended() {
	s.t.Helper()
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-time.After(wait):
			s.t.Fatal("the stream did not end")
		}
	}
}

func (s *rawStream) close() {
	s.cancel()
	<-s.done
	s.resp.Body.Close()
}

// post POSTs body to the stream's endpoint and returns the status and the
// answer's body.
func (s *rawStream) post(body string, header ...string) (int, string) {
	s.t.Helper()
	return post(s.t, s.hs, s.endpoint, body, header...)
}

func post(t *testing.T, hs *httptest.Server, url, body string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// initialize runs the handshake on the stream.
func (s *rawStream) initialize(header ...string) {
	s.t.Helper()
	if st, b := s.post(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, header...); st != http.StatusAccepted {
		s.t.Fatalf("initialize: %d %s", st, b)
	}
	if m := s.message(); !strings.Contains(m, `"id":"init"`) || !strings.Contains(m, `"protocolVersion":"`+version+`"`) {
		s.t.Fatalf("initialize answered %s", m)
	}
	if st, b := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, header...); st != http.StatusAccepted {
		s.t.Fatalf("initialized: %d %s", st, b)
	}
}

// idOf returns a message's id, as JSON.
func idOf(t *testing.T, msg string) string {
	t.Helper()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	return string(m.ID)
}

// errorCode returns the code of a JSON-RPC error body, or 0.
func errorCode(body string) int {
	var m struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace([]byte(body)), &m) != nil || m.Error == nil {
		return 0
	}
	return m.Error.Code
}

func checkLeaks(t *testing.T) { leakcheck.Check(t) }
