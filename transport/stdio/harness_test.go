package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/transporttest"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// checkLeaks fails the test if it leaves goroutines behind.
func checkLeaks(t testing.TB) { leakcheck.Check(t) }

// pipeConn runs Serve over two io.Pipes. The test writes lines as the
// client; a reader goroutine collects every line Serve writes and checks
// that each one is a single JSON-RPC message.
type pipeConn struct {
	t      testing.TB
	in     *io.PipeWriter // the server's input; closing it is end of input
	out    *io.PipeReader
	outW   *io.PipeWriter
	lines  chan []byte
	served chan error // Serve's result, once
	read   chan struct{}
	cancel context.CancelFunc
}

func startConn(t testing.TB, h transport.Handler, opts *stdio.Options) *pipeConn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &pipeConn{
		t: t, in: inW, out: outR, outW: outW,
		lines:  make(chan []byte, 4096),
		served: make(chan error, 1),
		read:   make(chan struct{}),
		cancel: cancel,
	}
	go func() {
		c.served <- stdio.Serve(ctx, h, inR, outW, opts)
	}()
	go func() {
		defer close(c.read)
		defer close(c.lines)
		r := bufio.NewReaderSize(outR, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				checkLine(t, line)
				c.lines <- bytes.TrimSuffix(line, []byte("\n"))
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		inR.Close()
		c.wait(10 * time.Second)
		outW.Close()
		<-c.read
	})
	return c
}

// checkLine fails the test unless line is exactly one JSON-RPC message
// (or a batch of responses: an array of them) followed by a newline.
func checkLine(t testing.TB, line []byte) {
	t.Helper()
	if !bytes.HasSuffix(line, []byte("\n")) {
		t.Errorf("output line without newline: %.200q", line)
		return
	}
	body := line[:len(line)-1]
	if bytes.ContainsAny(body, "\r\n") {
		t.Errorf("output line with an embedded line break: %.200q", body)
	}
	if jsonrpc.IsBatch(body) {
		var parts []json.RawMessage
		if err := json.Unmarshal(body, &parts); err != nil || len(parts) == 0 {
			t.Errorf("output line is not a batch of responses (%v): %.200q", err, body)
		}
		for _, p := range parts {
			if m, err := jsonrpc.Decode(p); err != nil || !m.IsResponse() {
				t.Errorf("batch member is not a JSON-RPC response (%v): %.200q", err, p)
			}
		}
		return
	}
	if _, err := jsonrpc.Decode(body); err != nil {
		t.Errorf("output line is not a JSON-RPC message (%v): %.200q", err, body)
	}
}

// send writes each string as one line.
func (c *pipeConn) send(lines ...string) {
	c.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(c.in, l+"\n"); err != nil {
			c.t.Fatalf("writing %q: %v", l, err)
		}
	}
}

// sendRaw writes b as it is.
func (c *pipeConn) sendRaw(b []byte) {
	c.t.Helper()
	if _, err := c.in.Write(b); err != nil {
		c.t.Fatalf("writing: %v", err)
	}
}

// recv returns the next output line, failing after timeout.
func (c *pipeConn) recv(timeout time.Duration) []byte {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatal("output closed")
		}
		return l
	case <-time.After(timeout):
		c.t.Fatalf("no output line within %v", timeout)
		return nil
	}
}

// expectNone fails if a line arrives within d.
func (c *pipeConn) expectNone(d time.Duration) {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		if ok {
			c.t.Fatalf("unexpected output line: %.300s", l)
		}
	case <-time.After(d):
	}
}

// closeInput signals end of input.
func (c *pipeConn) closeInput() { c.in.Close() }

// wait returns Serve's result, failing after timeout.
func (c *pipeConn) wait(timeout time.Duration) error {
	c.t.Helper()
	select {
	case err := <-c.served:
		c.served <- err // later calls see it too
		return err
	case <-time.After(timeout):
		c.t.Fatalf("Serve did not return within %v", timeout)
		return nil
	}
}

// rest closes the output after Serve has returned and gives the lines not
// yet received. Serve's writes to a pipe complete only once read, so these
// are all the lines it wrote before returning.
func (c *pipeConn) rest() [][]byte {
	c.t.Helper()
	c.wait(10 * time.Second)
	c.outW.Close()
	<-c.read
	var out [][]byte
	for l := range c.lines {
		out = append(out, l)
	}
	return out
}

// idOf returns the raw id of an output line ("" for none).
func idOf(line []byte) string {
	m, err := jsonrpc.Decode(line)
	if err != nil || !m.ID.IsValid() {
		return ""
	}
	return string(m.ID.Raw())
}

// stub is a transport.Handler whose methods the test scripts. Each request
// is answered by the function registered for its method; unknown methods
// echo the method name as the result.
type stub struct {
	mu        sync.Mutex
	methods   map[string]func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response
	notes     []string // methods of notifications received
	responses []string // raw ids of client responses received
}

func newStub() *stub {
	return &stub{methods: map[string]func(context.Context, *jsonrpc.Message, transport.Notifier) *jsonrpc.Response{}}
}

func (s *stub) on(method string, f func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods[method] = f
}

func (s *stub) Serve(ctx context.Context, r *transport.Request) (protocol.Result, error) {
	req := r.Message
	s.mu.Lock()
	f := s.methods[req.Method]
	s.mu.Unlock()
	if f != nil {
		return transporttest.Serve(f(ctx, req, r.Notifier))
	}
	return transporttest.Serve(result(req, map[string]string{"method": req.Method}))
}

func (s *stub) Receive(ctx context.Context, msg *jsonrpc.Message, sess transport.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if msg.IsResponse() {
		s.responses = append(s.responses, string(msg.ID.Raw()))
		return
	}
	s.notes = append(s.notes, msg.Method)
}

func (s *stub) ParamHeaders(string) []transport.HeaderParam { return nil }

func (s *stub) Legacy() transport.Legacy { return nil }

func (s *stub) notifications() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}

func result(req *jsonrpc.Message, v any) *jsonrpc.Response {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &jsonrpc.Response{ID: req.ID, Result: b}
}

func request(id, method string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"}`
}

func cancelled(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`
}

// waitFor polls cond for up to timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var errBoom = errors.New("boom")

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBoom }

// failReader returns its data, then err.
type failReader struct {
	r   *strings.Reader
	err error
}

func (f *failReader) Read(p []byte) (int, error) {
	if f.r.Len() == 0 {
		return 0, f.err
	}
	return f.r.Read(p)
}
