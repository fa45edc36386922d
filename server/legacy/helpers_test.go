package legacy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
)

// tinyInfo identifies the small core the tests build.
var tinyInfo = protocol.Implementation{Name: "tiny", Version: "1.2.3"}

const (
	tinyURI      = "tiny://a"
	otherURI     = "tiny://b"
	tinyHello    = "Use the echo tool."
	nameSchema   = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	colourSchema = `{"type":"object","properties":{"colour":{"type":"string"}},"required":["colour"]}`
)

// tiny is the core under test, with hooks its blocking tool reports to.
type tiny struct {
	*server.Server
	started chan struct{} // receives once per call of the "block" tool
	release chan struct{} // closing it lets "block" calls return
}

// newTiny returns a core with a few tools and two resources:
//
//	echo      returns its text
//	traced    returns a result with _meta of its own
//	log       logs debug, info, warning and error, then returns "logged"
//	progress  reports progress 1 of 2, then returns "done"
//	block     reports on started, then waits for release or cancellation
//	greet     elicits a name, then greets
//	twice     elicits a name, then a colour, in two rounds
//	roots     lists the client's roots
func newTiny(t testing.TB) *tiny {
	t.Helper()
	core := server.New(tinyInfo, &server.Options{
		Instructions: tinyHello,
		Extensions:   map[string]protocol.Object{"io.example/ext": {}},
	})
	tc := &tiny{Server: core, started: make(chan struct{}, 16), release: make(chan struct{})}
	type echoArgs struct {
		Text string `json:"text"`
	}
	server.AddTool(core, &protocol.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *server.CallRequest, in echoArgs) (string, error) {
			return in.Text, nil
		})
	server.AddTool(core, &protocol.Tool{Name: "traced", Description: "Returns a result with its own _meta"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (*protocol.CallToolResult, error) {
			res := server.TextResult("traced")
			res.Meta = &protocol.ResultMeta{Extra: map[string]json.RawMessage{"io.example/trace": json.RawMessage(`"t-1"`)}}
			return res, nil
		})
	server.AddTool(core, &protocol.Tool{Name: "log", Description: "Logs at four levels"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			for _, l := range []protocol.LoggingLevel{protocol.LevelDebug, protocol.LevelInfo, protocol.LevelWarning, protocol.LevelError} {
				if err := req.Log(l, "tiny", string(l)+" message"); err != nil {
					return "", err
				}
			}
			return "logged", nil
		})
	server.AddTool(core, &protocol.Tool{Name: "progress", Description: "Reports progress"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			if err := req.Progress(1, 2, "half way"); err != nil {
				return "", err
			}
			return "done", nil
		})
	server.AddTool(core, &protocol.Tool{Name: "block", Description: "Waits for the test"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			tc.started <- struct{}{}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-tc.release:
				return "released", nil
			}
		})
	server.AddTool(core, &protocol.Tool{Name: "greet", Description: "Asks a name, then greets"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.Elicit("name", &protocol.ElicitParams{Message: "What is your name?", RequestedSchema: json.RawMessage(nameSchema)})
			if err != nil {
				return "", err
			}
			return "Hello, " + res.Content["name"].(string) + "!", nil
		})
	server.AddTool(core, &protocol.Tool{Name: "twice", Description: "Asks two questions in two rounds"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			first, err := req.Elicit("name", &protocol.ElicitParams{Message: "Name?", RequestedSchema: json.RawMessage(nameSchema)})
			if err != nil {
				return "", err
			}
			second, err := req.Elicit("colour", &protocol.ElicitParams{Message: "Colour?", RequestedSchema: json.RawMessage(colourSchema)})
			if err != nil {
				return "", err
			}
			return first.Content["name"].(string) + " likes " + second.Content["colour"].(string), nil
		})
	server.AddTool(core, &protocol.Tool{Name: "roots", Description: "Lists the client's roots"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.ListRoots("roots")
			if err != nil {
				return "", err
			}
			return res.Roots[0].URI, nil
		})
	core.AddResource(&protocol.Resource{URI: tinyURI, Name: "a", MIMEType: "text/plain"}, server.TextResource("text/plain", "A"))
	core.AddResource(&protocol.Resource{URI: otherURI, Name: "b", MIMEType: "text/plain"}, server.TextResource("text/plain", "B"))
	return tc
}

// newAdapter checks for leaked goroutines, builds a tiny core and an
// Adapter in front of it, and closes the adapter when the test ends.
func newAdapter(t *testing.T, opts *legacy.Options) (*legacy.Adapter, *tiny) {
	t.Helper()
	leakcheck.Check(t)
	core := newTiny(t)
	a := legacy.New(core.Server, opts)
	t.Cleanup(func() {
		close(core.release)
		a.Close()
	})
	return a, core
}

// decode decodes one wire message, failing the test if it is malformed.
func decode(t testing.TB, line string) *jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.Decode([]byte(line))
	if err != nil {
		t.Fatalf("decoding %s: %v", line, err)
	}
	return m
}

// req decodes a request with the given raw id, method and params ("" for
// none).
func req(t testing.TB, id, method, params string) *jsonrpc.Message {
	t.Helper()
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	return decode(t, line+"}")
}

// note decodes a notification.
func note(t testing.TB, method, params string) *jsonrpc.Message {
	t.Helper()
	line := `{"jsonrpc":"2.0","method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	return decode(t, line+"}")
}

// initParams are initialize params for version with the capabilities.
func initParams(version, caps string) string {
	return `{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"test-client","version":"0.0.1"}}`
}

// open initializes a 2025-11-25 session with the client capabilities and,
// when ready, sends notifications/initialized.
func open(t *testing.T, a *legacy.Adapter, caps string, ready bool) *legacy.Session {
	t.Helper()
	ts, resp := a.Initialize(context.Background(), req(t, "0", "initialize", initParams("2025-11-25", caps)))
	if resp == nil || resp.Error != nil || ts == nil {
		t.Fatalf("initialize: session %v, response %s", ts, wire(resp))
	}
	s := ts.(*legacy.Session)
	if ready {
		s.HandleNotification(context.Background(), note(t, "notifications/initialized", ""))
	}
	return s
}

// wire returns the encoding of a response ("<nil>" for none).
func wire(r *jsonrpc.Response) string {
	if r == nil {
		return "<nil>"
	}
	return string(r.Append(nil))
}

// wantWire fails unless r encodes exactly as want.
func wantWire(t testing.TB, r *jsonrpc.Response, want string) {
	t.Helper()
	if got := wire(r); got != want {
		t.Errorf("response\n got %s\nwant %s", got, want)
	}
}

// recorder is a transport.Notifier that keeps what it is sent.
type recorder struct {
	ch   chan []byte
	mu   sync.Mutex
	fail error // returned by Notify when set
}

func newRecorder() *recorder { return &recorder{ch: make(chan []byte, 64)} }

func (r *recorder) Notify(msg []byte) error {
	r.mu.Lock()
	err := r.fail
	r.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case r.ch <- bytes.Clone(msg):
		return nil
	default:
		return errors.New("recorder full")
	}
}

// next returns the next message sent, failing after a few seconds.
func (r *recorder) next(t testing.TB) string {
	t.Helper()
	select {
	case m := <-r.ch:
		return string(m)
	case <-time.After(5 * time.Second):
		t.Fatal("no message sent through the notifier")
		return ""
	}
}

// none fails if a message is sent within d.
func (r *recorder) none(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case m := <-r.ch:
		t.Fatalf("unexpected message: %s", m)
	case <-time.After(d):
	}
}

// all returns the messages sent so far.
func (r *recorder) all() []string {
	var out []string
	for {
		select {
		case m := <-r.ch:
			out = append(out, string(m))
		default:
			return out
		}
	}
}

var _ transport.Notifier = (*recorder)(nil)

// call runs s.Handle in a goroutine; the result arrives on the channel.
func call(ctx context.Context, s *legacy.Session, msg *jsonrpc.Message, n transport.Notifier) <-chan *jsonrpc.Response {
	out := make(chan *jsonrpc.Response, 1)
	go func() { out <- s.Handle(ctx, msg, n) }()
	return out
}

// await returns the response of a call, failing after a few seconds.
func await(t testing.TB, ch <-chan *jsonrpc.Response) *jsonrpc.Response {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the request did not finish")
		return nil
	}
}

// eventually polls cond for a few seconds.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// feedReady checks that the adapter is subscribed to the core's change
// feed: it must be once an initialize is answered, or the changes that
// follow it are lost.
func feedReady(t testing.TB, core *tiny) {
	t.Helper()
	if n := core.Feed().(*server.MemoryFeed).Subscribers(); n == 0 {
		t.Fatal("the adapter is not subscribed to the change feed after initialize")
	}
}

// errorCode returns the error code of a response, failing if it has none.
func errorCode(t testing.TB, r *jsonrpc.Response) int64 {
	t.Helper()
	if r == nil || r.Error == nil {
		t.Fatalf("want an error response, got %s", wire(r))
	}
	return r.Error.Code
}

// newBare returns a core with nothing registered.
func newBare() *server.Server { return server.New(tinyInfo, nil) }

var errBroken = errors.New("stream gone")

// Handle serves a modern request with the core, as a transport does.
func (c *tiny) Handle(ctx context.Context, msg *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := c.Server.ServeModern(ctx, &transport.Request{Message: msg, Notifier: n, Cancel: cancel})
	return transport.Respond(ctx, msg.ID, res, err)
}
