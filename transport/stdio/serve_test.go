package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

const wait = 5 * time.Second

func TestServeConcurrent(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	release := make(chan struct{})
	st.on("slow", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		select {
		case <-release:
			return result(req, "slow done")
		case <-ctx.Done():
			return nil
		}
	})
	c := startConn(t, st, nil)
	c.send(request("1", "slow"), request(`"f"`, "fast"))
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":"f","result":{"method":"fast"}}`; got != want {
		t.Fatalf("first line = %s, want %s", got, want)
	}
	close(release)
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":1,"result":"slow done"}`; got != want {
		t.Fatalf("second line = %s, want %s", got, want)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatalf("Serve = %v", err)
	}
}

// TestServeCorrelation sends many requests whose answers come back in a
// random order and checks every response carries its own request's id.
func TestServeCorrelation(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	st.on("delay", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		var p struct {
			Ms  int    `json:"ms"`
			Tag string `json:"tag"`
		}
		_ = json.Unmarshal(req.Params, &p)
		select {
		case <-time.After(time.Duration(p.Ms) * time.Millisecond):
		case <-ctx.Done():
			return nil
		}
		return result(req, map[string]string{"tag": p.Tag})
	})
	c := startConn(t, st, nil)
	const n = 100
	ids := make([]string, n)
	var lines []string
	for i := range n {
		if i%2 == 0 {
			ids[i] = strconv.Itoa(i)
		} else {
			ids[i] = strconv.Quote("s-" + strconv.Itoa(i))
		}
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"delay","params":{"ms":%d,"tag":%q}}`, ids[i], rand.IntN(30), ids[i]))
	}
	start := time.Now()
	c.send(lines...)
	seen := map[string]bool{}
	for range n {
		m, err := jsonrpc.Decode(c.recv(wait))
		if err != nil {
			t.Fatal(err)
		}
		var res struct{ Tag string }
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatal(err)
		}
		if res.Tag != string(m.ID.Raw()) {
			t.Errorf("response id %s carries the result of %s", m.ID.Raw(), res.Tag)
		}
		if seen[res.Tag] {
			t.Errorf("two responses for %s", res.Tag)
		}
		seen[res.Tag] = true
	}
	// Served one at a time they would take about n*15ms.
	if d := time.Since(start); d > n*15*time.Millisecond/2 {
		t.Errorf("%d requests took %v: not served concurrently", n, d)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
}

func TestServeNotificationsBeforeResponse(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	kept := make(chan transport.Notifier, 1)
	st.on("notify", func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
		for i := range 3 {
			if err := n.Notify(jsonrpc.AppendNotification(nil, "notifications/progress", json.RawMessage(`{"progressToken":"p","progress":`+strconv.Itoa(i)+`}`))); err != nil {
				t.Errorf("Notify: %v", err)
			}
		}
		kept <- n
		return result(req, "done")
	})
	c := startConn(t, st, nil)
	c.send(request("7", "notify"))
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":0}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2}}`,
		`{"jsonrpc":"2.0","id":7,"result":"done"}`,
	}
	for _, w := range want {
		if got := string(c.recv(wait)); got != w {
			t.Fatalf("got  %s\nwant %s", got, w)
		}
	}
	// Once the request is answered its notifier is closed.
	n := <-kept
	if err := n.Notify([]byte(`{"jsonrpc":"2.0","method":"late"}`)); err == nil {
		t.Error("Notify after the response succeeded")
	}
	c.expectNone(50 * time.Millisecond)
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
}

func TestServeCancel(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	started := make(chan struct{})
	notifyErr := make(chan error, 1)
	st.on("block", func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
		close(started)
		<-ctx.Done()
		notifyErr <- n.Notify([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`))
		// A handler that answers anyway must not have its answer written.
		return result(req, "too late")
	})
	c := startConn(t, st, nil)
	c.send(request(`"c-1"`, "block"))
	<-started
	c.send(cancelled(`"c-1"`))
	select {
	case err := <-notifyErr:
		if err == nil {
			t.Error("Notify on a cancelled request succeeded")
		}
	case <-time.After(wait):
		t.Fatal("the cancelled request's context was not cancelled")
	}
	c.send(request("2", "ping"))
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":2,"result":{"method":"ping"}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
	for _, l := range c.rest() {
		t.Errorf("line written after cancellation: %s", l)
	}
	// The cancellation was handled by the transport, not passed on.
	if got := st.notifications(); len(got) != 0 {
		t.Errorf("handler received notifications %q", got)
	}
}

func TestServeMalformedCancellationIgnored(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	ctxs := make(chan context.Context, 1)
	release := make(chan struct{})
	st.on("block", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		ctxs <- ctx
		select {
		case <-release:
		case <-ctx.Done():
		}
		return result(req, "finished")
	})
	c := startConn(t, st, nil)
	c.send(request("1", "block"))
	ctx := <-ctxs
	c.send(
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.0}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"id":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}`, // a string id is another id
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,  // unknown
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"no id"}}`,
	)
	// Lines are dispatched in order, so once ping is answered every
	// cancellation above has been handled, and none wrote anything.
	c.send(request("2", "ping"))
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":2,"result":{"method":"ping"}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if ctx.Err() != nil {
		t.Fatal("a malformed cancellation cancelled request 1")
	}
	close(release)
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":1,"result":"finished"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// A cancellation for a request already answered is ignored too.
	c.send(cancelled("1"), request("3", "ping"))
	if got := idOf(c.recv(wait)); got != "3" {
		t.Fatalf("got response for %s, want 3", got)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
}

// TestServeBadLines sends lines that are not JSON-RPC requests and checks
// the exact answer to each, in order, and that the connection goes on.
func TestServeBadLines(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	c := startConn(t, st, nil)
	tests := []struct {
		name string
		line string
		want string // "" for no answer
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON"}}`},
		{"not JSON", `hello`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON"}}`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported"}}`},
		{"not an object", `42`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be a JSON object"}}`},
		{"wrong version keeps id", `{"jsonrpc":"1.0","id":"v","method":"ping"}`, `{"jsonrpc":"2.0","id":"v","error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must not be null"}}`},
		{"string params", `{"jsonrpc":"2.0","id":3,"method":"ping","params":"x"}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: params must be an object or an array"}}`},
		{"blank", ``, ``},
		{"spaces", " \t ", ``},
		{"carriage return", "\r", ``},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/other"}`, ``},
		{"client response", `{"jsonrpc":"2.0","id":"srv-1","result":{}}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.send(tt.line, request(`"after"`, "ping"))
			if tt.want != "" {
				if got := string(c.recv(wait)); got != tt.want {
					t.Errorf("got  %s\nwant %s", got, tt.want)
				}
			}
			if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":"after","result":{"method":"ping"}}`; got != want {
				t.Errorf("next line answered with %s, want %s", got, want)
			}
		})
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
	if got := st.notifications(); len(got) != 1 || got[0] != "notifications/other" {
		t.Errorf("notifications passed on: %q", got)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.responses) != 1 || st.responses[0] != `"srv-1"` {
		t.Errorf("client responses passed on: %q", st.responses)
	}
}

func TestServeDuplicateID(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	st.on("block", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil
		}
		return result(req, "first")
	})
	c := startConn(t, st, nil)
	c.send(request("1", "block"))
	<-started
	c.send(request("1", "ping"))
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: id 1 is already in use"}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// The same digits as a string are a different id.
	c.send(request(`"1"`, "ping"))
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":"1","result":{"method":"ping"}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	close(release)
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":1,"result":"first"}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Once answered, the id may be used again.
	c.send(request("1", "ping"))
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":1,"result":{"method":"ping"}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
}

// lineOf returns a request line of exactly n bytes (without the newline).
func lineOf(t *testing.T, id string, n int) string {
	t.Helper()
	head := `{"jsonrpc":"2.0","id":` + id + `,"method":"`
	pad := n - len(head) - len(`"}`)
	if pad < 1 {
		t.Fatalf("a %d-byte line is too short for id %s", n, id)
	}
	l := head + strings.Repeat("m", pad) + `"}`
	if len(l) != n {
		t.Fatalf("built %d bytes, want %d", len(l), n)
	}
	return l
}

func TestServeMaxLineBytes(t *testing.T) {
	const limit = 64
	tooLong := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message exceeds the limit of 64 bytes"}}`
	tests := []struct {
		name    string
		input   func(t *testing.T) string
		wantIDs []string // raw ids answered with a result; "limit" for the limit error
	}{
		{"at the limit", func(t *testing.T) string { return lineOf(t, "1", limit) + "\n" }, []string{"1"}},
		{"at the limit with CRLF", func(t *testing.T) string { return lineOf(t, "1", limit) + "\r\n" }, []string{"1"}},
		{"one over", func(t *testing.T) string { return lineOf(t, "1", limit+1) + "\n" + lineOf(t, "2", 40) + "\n" }, []string{"limit", "2"}},
		{"one over with CRLF", func(t *testing.T) string { return lineOf(t, "1", limit+1) + "\r\n" + lineOf(t, "2", 40) + "\n" }, []string{"limit", "2"}},
		{"two over", func(t *testing.T) string { return lineOf(t, "1", limit+2) + "\n" + lineOf(t, "2", 40) + "\n" }, []string{"limit", "2"}},
		{"far over, past the read buffer", func(t *testing.T) string {
			return lineOf(t, "1", 1<<20) + "\n" + lineOf(t, "2", 40) + "\n"
		}, []string{"limit", "2"}},
		{"between two good lines", func(t *testing.T) string {
			return lineOf(t, "1", 40) + "\n" + lineOf(t, "2", 500) + "\n" + lineOf(t, "3", 40) + "\n"
		}, []string{"1", "limit", "3"}},
		{"last line without newline", func(t *testing.T) string { return lineOf(t, "1", 40) }, []string{"1"}},
		{"over-long last line without newline", func(t *testing.T) string { return lineOf(t, "1", 40) + "\n" + lineOf(t, "2", 200) }, []string{"1", "limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			var out bytes.Buffer
			err := stdio.Serve(context.Background(), newStub(), strings.NewReader(tt.input(t)), &out, &stdio.Options{MaxLineBytes: limit})
			if err != nil {
				t.Fatalf("Serve = %v", err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if out.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.wantIDs) {
				t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(tt.wantIDs), out.String())
			}
			// The limit error is written as the line is read, answers as
			// their handlers finish: compare without order.
			var got []string
			for i, l := range lines {
				checkLine(t, []byte(l+"\n"))
				switch {
				case l == tooLong:
					got = append(got, "limit")
				case strings.Contains(l, `"result"`):
					got = append(got, idOf([]byte(l)))
				default:
					t.Errorf("line %d = %s", i, l)
				}
			}
			want := append([]string(nil), tt.wantIDs...)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("answered %v, want %v", got, want)
			}
		})
	}
}

// TestServeNewlinesInHandlerOutput checks that whatever a handler hands
// over, each message is written as one line of valid JSON.
func TestServeNewlinesInHandlerOutput(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	st.on("indented", func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
		_ = n.Notify([]byte("{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"notifications/message\",\n  \"params\": {\"data\": \"a\\nb\"}\n}"))
		return &jsonrpc.Response{ID: req.ID, Result: json.RawMessage("{\n  \"a\": \"x y\",\r\n  \"b\": [\n    1\n  ]\n}")}
	})
	st.on("raw-newline", func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
		// Not valid JSON: a raw newline inside a string. The line stays one
		// line, with the newline escaped.
		return &jsonrpc.Response{ID: req.ID, Result: json.RawMessage("{\"s\":\"a\nb\"}")}
	})
	c := startConn(t, st, nil)
	c.send(request("2", "raw-newline"))
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":2,"result":{"s":"a\nb"}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	c.send(request("1", "indented"))
	for _, want := range []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"a\nb"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":"x y","b":[1]}}`,
	} {
		if got := string(c.recv(wait)); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
}

func TestServeEOFFlushesInFlight(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	st.on("work", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		select {
		case <-time.After(100 * time.Millisecond):
			return result(req, "worked")
		case <-ctx.Done():
			return nil
		}
	})
	c := startConn(t, st, nil)
	c.send(request("1", "work"), request("2", "work"), request("3", "work"))
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatalf("Serve = %v, want nil at end of input", err)
	}
	var ids []string
	for _, l := range c.rest() {
		if !bytes.Contains(l, []byte(`"result":"worked"`)) {
			t.Errorf("unexpected line %s", l)
		}
		ids = append(ids, idOf(l))
	}
	sort.Strings(ids)
	if strings.Join(ids, ",") != "1,2,3" {
		t.Errorf("responses flushed for %v, want 1,2,3", ids)
	}
}

func TestServeShutdownGrace(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	started := make(chan struct{})
	sawCancel := make(chan struct{})
	st.on("stubborn", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		close(started)
		<-ctx.Done()
		close(sawCancel)
		return nil
	})
	c := startConn(t, st, &stdio.Options{ShutdownGrace: 100 * time.Millisecond})
	c.send(request("1", "stubborn"))
	<-started
	begin := time.Now()
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("Serve returned %v after end of input, want about the 100ms grace", d)
	}
	select {
	case <-sawCancel:
	default:
		t.Error("the request outliving the grace period was not cancelled")
	}
	// It is answered all the same.
	if rest := c.rest(); len(rest) != 1 || idOf(rest[0]) != "1" || !bytes.Contains(rest[0], []byte(`"server shutting down`)) {
		t.Errorf("lines written: %q, want the shutdown error for 1", rest)
	}
}

// TestServeEveryRequestAnswered: requests still queued or running at end
// of input each get an answer — a result, or an error saying the server
// shut down — never nothing.
func TestServeEveryRequestAnswered(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	st.on("long", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		<-ctx.Done()
		return nil
	})
	c := startConn(t, st, &stdio.Options{ShutdownGrace: 50 * time.Millisecond})
	const n = 50
	for i := range n {
		c.send(request(strconv.Itoa(i), "long"))
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range c.rest() {
		if !bytes.Contains(l, []byte(`"server shutting down`)) {
			t.Errorf("unexpected line %s", l)
		}
		seen[idOf(l)] = true
	}
	if len(seen) != n {
		t.Errorf("%d of %d requests answered", len(seen), n)
	}
}

func TestServeContextCancel(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	started := make(chan struct{})
	st.on("block", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		close(started)
		<-ctx.Done()
		return nil
	})
	c := startConn(t, st, nil)
	c.send(request("1", "block"))
	<-started
	c.cancel()
	// The input stays open: Serve must not wait for it.
	if err := c.wait(wait); !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v, want context.Canceled", err)
	}
}

func TestServeEmptyInput(t *testing.T) {
	checkLeaks(t)
	var out bytes.Buffer
	if err := stdio.Serve(context.Background(), newStub(), strings.NewReader(""), &out, nil); err != nil {
		t.Fatalf("Serve on empty input = %v, want nil", err)
	}
	if out.Len() != 0 {
		t.Errorf("output %q", out.String())
	}
}

func TestServeContextCancelIdle(t *testing.T) {
	checkLeaks(t)
	c := startConn(t, newStub(), nil)
	c.send(request("1", "ping"))
	c.recv(wait)
	c.cancel()
	if err := c.wait(wait); !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v, want context.Canceled", err)
	}
}

// TestServeWrappedHandler: a handler wrapped with middleware keeps every
// message kind: requests, client responses and notifications all pass the
// middleware and reach the handler.
func TestServeWrappedHandler(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	var seen atomic.Int32
	h := transport.Use(st, func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			seen.Add(1)
			return next(ctx, req)
		}
	})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":"srv-1","result":{}}` + "\n" + request("1", "ping") + "\n" + `{"jsonrpc":"2.0","method":"notifications/x"}` + "\n")
	var out bytes.Buffer
	if err := stdio.Serve(context.Background(), h, in, &out, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), `{"jsonrpc":"2.0","id":1,"result":{"method":"ping"}}`+"\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if seen.Load() != 3 || len(st.responses) != 1 || len(st.notes) != 1 {
		t.Errorf("middleware saw %d messages; handler got responses %v, notifications %v", seen.Load(), st.responses, st.notes)
	}
}

func TestServeIOErrors(t *testing.T) {
	checkLeaks(t)
	t.Run("write error", func(t *testing.T) {
		in := strings.NewReader(request("1", "ping") + "\n" + request("2", "ping") + "\n")
		err := stdio.Serve(context.Background(), newStub(), in, failWriter{}, nil)
		if !errors.Is(err, errBoom) {
			t.Fatalf("Serve = %v, want the write error", err)
		}
	})
	t.Run("read error", func(t *testing.T) {
		in := &failReader{r: strings.NewReader(request("1", "ping") + "\n"), err: errBoom}
		var out bytes.Buffer
		err := stdio.Serve(context.Background(), newStub(), in, &out, nil)
		if !errors.Is(err, errBoom) {
			t.Fatalf("Serve = %v, want the read error", err)
		}
		if got, want := out.String(), `{"jsonrpc":"2.0","id":1,"result":{"method":"ping"}}`+"\n"; got != want {
			t.Errorf("output = %q, want %q", got, want)
		}
	})
}

// TestServeBlockedHandlersDoNotHoldTheQueue blocks many more requests than
// the transport keeps workers for and checks that a later request is still
// answered, and that every blocked one finishes once released.
func TestServeBlockedHandlersDoNotHoldTheQueue(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	release := make(chan struct{})
	var started sync.WaitGroup
	const blocked = 40
	started.Add(blocked)
	st.on("slow", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		started.Done()
		select {
		case <-release:
			return result(req, "slow done")
		case <-ctx.Done():
			return nil
		}
	})
	c := startConn(t, st, nil)
	for i := range blocked {
		c.send(request(strconv.Itoa(i+1), "slow"))
	}
	// Every blocked request gets to run, however few workers the pool has.
	done := make(chan struct{})
	go func() { started.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("queued requests did not start while earlier ones were blocked")
	}
	c.send(request(`"f"`, "fast"))
	if got, want := string(c.recv(wait)), `{"jsonrpc":"2.0","id":"f","result":{"method":"fast"}}`; got != want {
		t.Fatalf("first line = %s, want %s", got, want)
	}
	close(release)
	seen := map[string]bool{}
	for range blocked {
		var m struct{ ID json.RawMessage }
		line := c.recv(wait)
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		seen[string(m.ID)] = true
	}
	if len(seen) != blocked {
		t.Fatalf("%d distinct responses, want %d", len(seen), blocked)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatalf("Serve = %v", err)
	}
}

// TestServeContextEndLeavesNothing: when Serve's context ends while its
// reader is blocked on an os.Pipe (as on stdin), Serve interrupts the read
// and returns with no goroutine of its own left running.
func TestServeContextEndLeavesNothing(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(ctx, newStub(), pr, out, nil) }()
	if _, err := pw.Write([]byte(request("1", "ping") + "\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the answer", func() bool { return strings.Contains(out.String(), `"id":1`) })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	// Serve has returned: everything it started has ended (the goroutine
	// that called it above has too, or is about to).
	waitFor(t, 5*time.Second, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

// TestServePanics: a panic in a handler or middleware — serving a
// request on its goroutine, serving initialize or receiving a
// notification on the reader's — is answered with -32603 and no detail
// (notifications get nothing), and the connection goes on serving.
func TestServePanics(t *testing.T) {
	checkLeaks(t)
	h := transport.Use(server.New(protocol.Implementation{Name: "p", Version: "1"}, nil), func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			if strings.HasPrefix(req.Message.Method, "boom") || req.Kind == transport.KindInitialize && strings.Contains(string(req.Message.Params), "boom") {
				panic("secret detail")
			}
			return next(ctx, req)
		}
	})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"boom/request","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","method":"boom/notification"}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"boom","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta + `}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := stdio.Serve(context.Background(), h, strings.NewReader(in), &out, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	byID := map[string]string{}
	for _, l := range lines {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(l), &m)
		byID[string(m.ID)] = l
	}
	for _, id := range []string{"1", "2"} {
		if got, want := byID[id], `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32603,"message":"internal error"}}`; got != want {
			t.Errorf("id %s: got %s, want %s", id, got, want)
		}
	}
	if !strings.Contains(byID["3"], `"supportedVersions"`) {
		t.Errorf("after the panics, server/discover got %s", byID["3"])
	}
	if len(lines) != 3 || strings.Contains(out.String(), "secret") {
		t.Errorf("output %s", out.String())
	}
}

// TestServeInlineHandsOn: a request the reader serves itself does not keep
// the input from being read. One that runs long has reading handed on, so
// that a request read after it is served while it runs; one that sends the
// client a message hands reading on at once. MaxConcurrent still bounds
// the requests served at once (the reader's own count against it).
func TestServeInlineHandsOn(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	release := make(chan struct{})
	var running, most atomic.Int32
	// both is closed once the two blocking requests are running at once;
	// "free" waits for it, since the request after them may be started
	// before the second of them is.
	both := make(chan struct{})
	var bothOnce sync.Once
	enter := func() {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n == 2 {
			bothOnce.Do(func() { close(both) })
		}
	}
	st.on("wait", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		enter()
		defer running.Add(-1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return result(req, "waited")
	})
	st.on("notify", func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
		enter()
		defer running.Add(-1)
		_ = n.Notify([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`))
		select {
		case <-release:
		case <-ctx.Done():
		}
		return result(req, "notified")
	})
	st.on("free", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		select {
		case <-both:
		case <-time.After(5 * time.Second): // the check below reports it
		case <-ctx.Done():
		}
		close(release)
		return result(req, "freed")
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- stdio.Serve(context.Background(), st, inR, outW, &stdio.Options{MaxConcurrent: 3})
	}()
	lines := make(chan string, 16)
	go func() {
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- line
		}
	}()
	for _, m := range []string{request("1", "wait"), request("2", "notify"), request("3", "free")} {
		if _, err := io.WriteString(inW, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for len(got) < 4 {
		select {
		case line := <-lines:
			for _, want := range []string{`"id":1,"result"`, `"id":2,"result"`, `"id":3,"result"`, `notifications/progress`} {
				if strings.Contains(line, want) {
					got[want] = true
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("after 10s only %v: a request served by the reader kept the input from being read", got)
		}
	}
	if m := most.Load(); m != 2 {
		t.Errorf("%d of the blocking requests ran at once, want 2", m)
	}
	inW.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	outR.Close()
}

// TestServeSlowRequestsSideBySide: requests that take a while (here 200 µs
// each, yielding meanwhile as one waiting on a database would) are served
// side by side, not one after the other by the reader.
func TestServeSlowRequestsSideBySide(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	var running, most atomic.Int32
	st.on("wait", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		for start := time.Now(); time.Since(start) < 200*time.Microsecond; {
			runtime.Gosched()
		}
		running.Add(-1)
		return result(req, "waited")
	})
	var in strings.Builder
	for i := range 64 {
		in.WriteString(request(strconv.Itoa(i+1), "wait") + "\n")
	}
	var out bytes.Buffer
	if err := stdio.Serve(context.Background(), st, strings.NewReader(in.String()), &out, nil); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if n := strings.Count(out.String(), `"result"`); n != 64 {
		t.Fatalf("%d answers, want 64", n)
	}
	if m := most.Load(); m < 2 {
		t.Errorf("at most %d request ran at once: the requests were served one after the other", m)
	}
}

// TestServeOneAtATimeOnReader: a client that sends its next request only
// once the last is answered gets its slow requests (here 200 µs each, as
// one waiting on a database) served by the reader, after the first few:
// with nothing else in flight, a worker would only add a hand-off. The
// same requests sent all at once go to workers (TestServeSlowRequestsSideBySide).
func TestServeOneAtATimeOnReader(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	var byWorker []bool
	var mu sync.Mutex
	st.on("wait", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		for start := time.Now(); time.Since(start) < 200*time.Microsecond; {
			runtime.Gosched()
		}
		buf := make([]byte, 16<<10)
		stack := string(buf[:runtime.Stack(buf, false)])
		mu.Lock()
		byWorker = append(byWorker, strings.Contains(stack, "stdio.(*workers).work"))
		mu.Unlock()
		return result(req, "waited")
	})
	c := startConn(t, st, nil)
	const n = 20
	for i := range n {
		id := strconv.Itoa(i + 1)
		c.send(request(id, "wait"))
		if got := string(c.recv(5 * time.Second)); !strings.Contains(got, `"id":`+id+`,"result"`) {
			t.Fatalf("request %s: %s", id, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, w := range byWorker[n/2:] {
		if w {
			t.Errorf("request %d of %d, sent alone, was handed to a worker: %v", n/2+i+1, n, byWorker)
			break
		}
	}
}
