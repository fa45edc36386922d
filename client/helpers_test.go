package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

var clientInfo = protocol.Implementation{Name: "client-test", Version: "1.0.0"}

// exchange is one HTTP request the server received.
type exchange struct {
	HTTPMethod string
	Method     string // JSON-RPC method, "" for a response or a GET
	Header     http.Header
	Body       []byte
}

// recorder wraps an http.Handler and records what reaches it. intercept,
// when set, may answer a POST itself (returning true).
type recorder struct {
	next      http.Handler
	intercept func(w http.ResponseWriter, r *http.Request, body []byte, method string) bool

	mu  sync.Mutex
	log []exchange
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	var method string
	if r.Method == http.MethodPost {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		method = m.Method
	}
	rec.mu.Lock()
	rec.log = append(rec.log, exchange{HTTPMethod: r.Method, Method: method, Header: r.Header.Clone(), Body: body})
	rec.mu.Unlock()
	if rec.intercept != nil && rec.intercept(w, r, body, method) {
		return
	}
	rec.next.ServeHTTP(w, r)
}

// count returns how many POSTs of the JSON-RPC method arrived.
func (rec *recorder) count(method string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, e := range rec.log {
		if e.HTTPMethod == http.MethodPost && e.Method == method {
			n++
		}
	}
	return n
}

// posts returns the POSTs of the JSON-RPC method, in order.
func (rec *recorder) posts(method string) []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []exchange
	for _, e := range rec.log {
		if e.HTTPMethod == http.MethodPost && e.Method == method {
			out = append(out, e)
		}
	}
	return out
}

// methods returns the JSON-RPC methods POSTed, in order ("" for responses).
func (rec *recorder) methods() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []string
	for _, e := range rec.log {
		if e.HTTPMethod == http.MethodPost {
			out = append(out, e.Method)
		}
	}
	return out
}

// httpServer serves h over Streamable HTTP behind a recorder until the test
// ends.
type httpServer struct {
	ts  *httptest.Server
	h   *streamable.Handler
	rec *recorder
}

func serveHTTP(t *testing.T, h transport.Handler) *httpServer {
	t.Helper()
	sh := streamable.NewHandler(h, nil)
	rec := &recorder{next: sh}
	ts := httptest.NewServer(rec)
	t.Cleanup(func() {
		// Listen and GET streams last: end their connections first.
		ts.CloseClientConnections()
		ts.Close()
	})
	return &httpServer{ts: ts, h: sh, rec: rec}
}

// conn returns a new client connection to the server.
func (s *httpServer) conn() *streamable.Client {
	return streamable.NewClient(s.ts.URL, &streamable.ClientOptions{HTTPClient: s.ts.Client()})
}

// everythingServers returns the everything core and a dual-era adapter in
// front of it, closed when the test ends.
func everythingServers(t *testing.T, opts *server.Options, lopts *legacy.Options) (*server.Server, *legacy.Adapter) {
	t.Helper()
	core := everything.New(opts)
	both := legacy.New(core, lopts)
	t.Cleanup(func() {
		both.Close()
		core.Close()
	})
	return core, both
}

// serveStdio serves h over an in-process newline-delimited stream and
// returns the client side of it.
func serveStdio(t *testing.T, h transport.Handler) *stdio.Conn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stdio.Serve(ctx, h, inR, outW, nil)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		<-done
	})
	return stdio.NewConn(outR, inW, nil)
}

// stubStdio is a scripted stdio server: answer returns the response to a
// request (nil for silence). It records the methods it receives.
type stubStdio struct {
	mu      sync.Mutex
	methods []string
	done    chan struct{}
}

// wait waits for the stub to reach the end of its input.
func (s *stubStdio) wait() { <-s.done }

func (s *stubStdio) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...)
}

func (s *stubStdio) serve(t *testing.T, answer func(m *jsonrpc.Message) []byte) *stdio.Conn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	s.done = done
	go func() {
		defer close(done)
		defer outW.Close()
		sc := bufio.NewScanner(inR)
		for sc.Scan() {
			m, err := jsonrpc.Decode(sc.Bytes())
			if err != nil {
				continue
			}
			s.mu.Lock()
			s.methods = append(s.methods, m.Method)
			s.mu.Unlock()
			if !m.IsRequest() {
				continue
			}
			if b := answer(m); b != nil {
				if _, err := outW.Write(append(b, '\n')); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		inR.Close()
		<-done
	})
	return stdio.NewConn(outR, inW, nil)
}

// legacyInitialize answers initialize as a 2025-11-25 server.
func legacyInitialize(m *jsonrpc.Message) []byte {
	if m.Method != protocol.MethodInitialize {
		return nil
	}
	return jsonrpc.AppendResult(nil, m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"silent-legacy","version":"0.0.1"}}`))
}

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
	buildDir  string
)

// everythingBinary builds conformance/everything-server once per test
// binary.
func everythingBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the everything-server")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "everything-server")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "everything-server")
		cmd := exec.Command(goTool, "build", "-o", buildBin, "github.com/mcpkit/mcpkit/conformance/everything-server")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("building everything-server: %v", buildErr)
	}
	return buildBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// testCtx returns a context that ends with the test or after d.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// textOf returns the text of a result's first content block.
func textOf(t *testing.T, res *protocol.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) == 0 {
		t.Fatalf("result without content: %+v", res)
	}
	tc, ok := res.Content[0].(*protocol.TextContent)
	if !ok {
		t.Fatalf("first content is %T, not text", res.Content[0])
	}
	return tc.Text
}

// nameElicitation answers every elicitation with name (and the fields the
// everything fixtures ask for), recording the messages it was asked.
type nameElicitation struct {
	name string
	err  error

	mu    sync.Mutex
	asked []string
}

func (e *nameElicitation) handle(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, p.Message)
	e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{
		"name": e.name, "color": "teal", "username": e.name, "email": e.name + "@example.com", "context": "ctx-" + e.name,
	}}, nil
}

func (e *nameElicitation) messages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.asked...)
}

func newClient(opts *client.Options) *client.Client { return client.New(clientInfo, opts) }

func hasTool(tools []*protocol.Tool, name string) bool {
	for _, tl := range tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// member returns the raw value of an object's member name, or nil.
func member(obj json.RawMessage, name string) json.RawMessage {
	var v json.RawMessage
	_ = jsonrpc.EachMember(obj, func(k []byte, value jsontext.Value) error {
		if string(k) == name {
			v = json.RawMessage(value)
		}
		return nil
	})
	return v
}
