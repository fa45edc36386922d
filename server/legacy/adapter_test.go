package legacy_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

func TestInitializeVersionNegotiation(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
		params   string
		want     string // negotiated version; "" when refused
		code     int64  // error code when refused
	}{
		{name: "2025-11-25 echoed", params: initParams("2025-11-25", `{}`), want: "2025-11-25"},
		{name: "2025-06-18 echoed", params: initParams("2025-06-18", `{}`), want: "2025-06-18"},
		{name: "2025-03-26 echoed", params: initParams("2025-03-26", `{}`), want: "2025-03-26"},
		{name: "2024-11-05 echoed", params: initParams("2024-11-05", `{}`), want: "2024-11-05"},
		{name: "older unknown gets newest", params: initParams("2024-10-07", `{}`), want: "2025-11-25"},
		{name: "future unknown gets newest", params: initParams("2099-01-01", `{}`), want: "2025-11-25"},
		{name: "modern revision gets newest legacy", params: initParams("2026-07-28", `{}`), want: "2025-11-25"},
		{name: "no capabilities", params: `{"protocolVersion":"2025-06-18"}`, want: "2025-06-18"},
		{name: "restricted set echoes a member", versions: []string{"2025-06-18", "2025-03-26"}, params: initParams("2025-03-26", `{}`), want: "2025-03-26"},
		{name: "restricted set answers its newest", versions: []string{"2025-06-18", "2025-03-26"}, params: initParams("2025-11-25", `{}`), want: "2025-06-18"},
		{name: "single version", versions: []string{"2025-03-26"}, params: initParams("2025-06-18", `{}`), want: "2025-03-26"},
		{name: "empty set refuses", versions: []string{}, params: initParams("2025-11-25", `{}`), code: protocol.CodeInvalidRequest},
		{name: "missing protocolVersion", params: `{"capabilities":{}}`, code: protocol.CodeInvalidParams},
		{name: "empty protocolVersion", params: `{"protocolVersion":""}`, code: protocol.CodeInvalidParams},
		{name: "no params", params: "", code: protocol.CodeInvalidParams},
		{name: "protocolVersion not a string", params: `{"protocolVersion":20251125}`, code: protocol.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newAdapter(t, &legacy.Options{Versions: tt.versions})
			ts, resp := a.Initialize(context.Background(), req(t, "1", "initialize", tt.params))
			if tt.want == "" {
				if ts != nil {
					t.Errorf("a refused initialize opened session %s", ts.ID())
				}
				if got := errorCode(t, resp); got != tt.code {
					t.Errorf("error code %d, want %d: %s", got, tt.code, wire(resp))
				}
				if a.Sessions() != 0 {
					t.Errorf("Sessions() = %d after a refusal", a.Sessions())
				}
				return
			}
			if resp.Error != nil || ts == nil {
				t.Fatalf("initialize failed: %s", wire(resp))
			}
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = jsonrpc.Unmarshal(resp.Result, &r)
			got := r.ProtocolVersion
			if got != tt.want {
				t.Errorf("protocolVersion %q, want %q", got, tt.want)
			}
			if ts.Version() != tt.want {
				t.Errorf("Session.Version() = %q, want %q", ts.Version(), tt.want)
			}
			if s, err := a.Session(context.Background(), ts.ID()); err != nil || s != ts {
				t.Errorf("Adapter.Session(%q) = %v, %v", ts.ID(), s, err)
			}
		})
	}
}

// TestInitializeResult asserts the whole initialize response: the core's
// capabilities without the 2026-07-28 extensions member, its info and its
// instructions.
func TestInitializeResult(t *testing.T) {
	a, core := newAdapter(t, nil)
	if core.Capabilities().Extensions == nil {
		t.Fatal("the core advertises no extensions, so the test would prove nothing")
	}
	ts, resp := a.Initialize(context.Background(), req(t, "7", "initialize", initParams("2025-11-25", `{"elicitation":{}}`)))
	wantWire(t, resp, `{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{"logging":{},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},`+
		`"serverInfo":{"name":"tiny","version":"1.2.3"},"instructions":"Use the echo tool."}}`)
	s := ts.(*legacy.Session)
	if caps := s.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		t.Errorf("ClientCapabilities() = %+v, want the declared elicitation", caps)
	}
	if len(s.ID()) < 32 || strings.Trim(s.ID(), "0123456789abcdef") != "" {
		t.Errorf("session id %q is not a long hex string", s.ID())
	}
	ts2, _ := a.Initialize(context.Background(), req(t, "8", "initialize", initParams("2025-11-25", `{}`)))
	if ts2.ID() == ts.ID() {
		t.Errorf("two sessions share the id %q", ts.ID())
	}
	if a.Sessions() != 2 {
		t.Errorf("Sessions() = %d, want 2", a.Sessions())
	}
}

func TestInitializeWithoutInstructions(t *testing.T) {
	leakcheck.Check(t)
	// A bare core: no tools, resources or prompts, no instructions.
	bare := legacy.New(newBare(), nil)
	defer bare.Close()
	_, resp := bare.Initialize(context.Background(), req(t, `"x"`, "initialize", initParams("2025-03-26", `{}`)))
	wantWire(t, resp, `{"jsonrpc":"2.0","id":"x","result":{"protocolVersion":"2025-03-26","capabilities":{"logging":{}},"serverInfo":{"name":"tiny","version":"1.2.3"}}}`)
}

func TestDisabledRefusesInitialize(t *testing.T) {
	a, _ := newAdapter(t, &legacy.Options{Disabled: true})
	if v := a.Versions(); v != nil {
		t.Errorf("Versions() = %v, want none when disabled", v)
	}
	const want = `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"this server does not serve the initialize handshake; it serves protocol versions 2026-07-28 with per-request _meta","data":{"supported":["2026-07-28"]}}}`
	ts, resp := a.Initialize(context.Background(), req(t, "1", "initialize", initParams("2025-11-25", `{}`)))
	if ts != nil {
		t.Error("a disabled adapter opened a session")
	}
	wantWire(t, resp, want)
	if st := streamable.Status(a.InitializeErr(context.Background(), req(t, "9", "initialize", initParams("2025-11-25", `{}`)))); st != 400 {
		t.Errorf("HTTP status %d, want 400", st)
	}
	resp = a.Handle(context.Background(), req(t, "1", "initialize", initParams("2025-11-25", `{}`)), newRecorder())
	wantWire(t, resp, want)
	if a.Sessions() != 0 {
		t.Errorf("Sessions() = %d", a.Sessions())
	}
}

// TestAdapterHandleModern checks that the adapter serves modern requests
// with the core unchanged, a modern initialize included.
func TestAdapterHandleModern(t *testing.T) {
	a, core := newAdapter(t, nil)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	resp := a.Handle(context.Background(), req(t, "1", "tools/call", `{`+meta+`,"name":"echo","arguments":{"text":"hi"}}`), newRecorder())
	wantWire(t, resp, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tiny","version":"1.2.3"}},"content":[{"type":"text","text":"hi"}]}}`)

	// A modern initialize is served by the core, which defines none.
	resp = a.Handle(context.Background(), req(t, "2", "initialize", `{`+meta+`}`), newRecorder())
	if code := errorCode(t, resp); code != protocol.CodeMethodNotFound {
		t.Errorf("code %d, want -32601: %s", code, wire(resp))
	}
	if a.Sessions() != 0 {
		t.Errorf("a modern initialize opened a session")
	}
	_ = core
	if a.ParamHeaders("echo") != nil {
		t.Errorf("ParamHeaders(echo) = %v, want none", a.ParamHeaders("echo"))
	}
	a.Receive(context.Background(), note(t, "notifications/initialized", ""), nil) // ignored by the core
}

func TestMaxSessions(t *testing.T) {
	a, _ := newAdapter(t, &legacy.Options{MaxSessions: 1})
	first := open(t, a, `{}`, true)
	first.Handle(context.Background(), req(t, "77", "ping", ""), newRecorder())
	ts, resp := a.Initialize(context.Background(), req(t, "2", "initialize", initParams("2025-11-25", `{}`)))
	if st := streamable.Status(a.InitializeErr(context.Background(), req(t, "9", "initialize", initParams("2025-11-25", `{}`)))); ts != nil || errorCode(t, resp) != protocol.CodeInternalError || st != 503 {
		t.Fatalf("second session: %v, %s (HTTP %d)", ts, wire(resp), st)
	}
	first.Close()
	if ts, resp := a.Initialize(context.Background(), req(t, "3", "initialize", initParams("2025-11-25", `{}`))); ts == nil {
		t.Errorf("no session after the first closed: %s", wire(resp))
	}
}

// TestUnusedSessionsMakeRoom: sessions opened and never used do not lock
// new clients out when the limit is reached: the longest idle of them end.
func TestUnusedSessionsMakeRoom(t *testing.T) {
	a, _ := newAdapter(t, &legacy.Options{MaxSessions: 3})
	used := open(t, a, `{}`, true)
	used.Handle(context.Background(), req(t, "77", "ping", ""), newRecorder())
	idle1 := open(t, a, `{}`, true)
	idle2 := open(t, a, `{}`, true)
	for i := range 5 {
		ts, resp := a.Initialize(context.Background(), req(t, "88", "initialize", initParams("2025-11-25", `{}`)))
		if ts == nil {
			t.Fatalf("new session %d refused: %s", i, wire(resp))
		}
	}
	for name, s := range map[string]*legacy.Session{"the first unused": idle1, "the second unused": idle2} {
		select {
		case <-s.Done():
		default:
			t.Errorf("%s session is still open", name)
		}
	}
	select {
	case <-used.Done():
		t.Error("the session in use was ended to make room")
	default:
	}
	if n := a.Sessions(); n != 3 {
		t.Errorf("%d sessions, want the limit of 3", n)
	}
}

func TestIdleSessionExpires(t *testing.T) {
	a, _ := newAdapter(t, &legacy.Options{IdleTimeout: 40 * time.Millisecond})
	s := open(t, a, `{}`, true)
	id := s.ID()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the idle session was not closed")
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, legacy.ErrSessionClosed) {
		t.Errorf("Next after expiry: %v, want ErrSessionClosed", err)
	}
	// Next just used the session, so only its being closed keeps
	// Adapter.Session from handing it out again.
	if _, err := a.Session(context.Background(), id); err == nil {
		t.Error("Adapter.Session reports the expired session")
	}
	eventually(t, "Sessions() to drop the expired session", func() bool { return a.Sessions() == 0 })
	wantWire(t, s.Handle(context.Background(), req(t, "1", "ping", ""), newRecorder()),
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"session closed"}}`)
}

// TestSessionLookup finds open sessions by id and nothing else.
func TestSessionLookup(t *testing.T) {
	a, _ := newAdapter(t, &legacy.Options{IdleTimeout: time.Hour})
	s := open(t, a, `{}`, true)
	if _, err := a.Session(context.Background(), s.ID()); err != nil {
		t.Fatal("fresh session not found")
	}
	if _, err := a.Session(context.Background(), "no-such-session"); err == nil {
		t.Error("an unknown id was found")
	}
	s.Close()
	if _, err := a.Session(context.Background(), s.ID()); err == nil {
		t.Error("a closed session was found")
	}
}

// idleSession opens a session of an adapter whose sessions expire after
// idle; call it inside a synctest bubble.
func idleSession(t *testing.T, idle time.Duration) (*tiny, *legacy.Adapter, *legacy.Session) {
	t.Helper()
	core := newTiny(t)
	a := legacy.New(core.Server, &legacy.Options{IdleTimeout: idle})
	t.Cleanup(func() { a.Close() })
	return core, a, open(t, a, `{}`, true)
}

// expiredAfter lets d pass in the bubble and reports whether s was closed
// by then.
func expiredAfter(s *legacy.Session, d time.Duration) bool {
	time.Sleep(d)
	synctest.Wait()
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// TestListeningSessionDoesNotExpire: a session whose standalone stream is
// being read (a stdio process's session, an open GET stream) is in use.
func TestListeningSessionDoesNotExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 40 * time.Millisecond
		_, _, s := idleSession(t, idle)
		ctx, stop := context.WithCancel(context.Background())
		ended := make(chan error, 1)
		go func() {
			_, err := s.Next(ctx)
			ended <- err
		}()
		synctest.Wait()              // the reader waits in Next
		if expiredAfter(s, 8*idle) { // many sweeps
			t.Fatal("a session with a reader waiting on Next was expired")
		}
		stop()
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Errorf("Next: %v, want context.Canceled", err)
		}
		// Nobody listens now: it expires.
		if !expiredAfter(s, 2*idle) {
			t.Fatal("the session did not expire once nobody listened")
		}
	})
}

func TestBusySessionDoesNotExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 40 * time.Millisecond
		core, a, s := idleSession(t, idle)
		res := call(context.Background(), s, req(t, "1", "tools/call", `{"name":"block"}`), newRecorder())
		<-core.started
		if expiredAfter(s, 8*idle) { // many sweeps
			t.Fatal("a session with a request in flight was expired")
		}
		if n := a.Sessions(); n != 1 {
			t.Fatalf("Sessions() = %d while a request is in flight", n)
		}
		core.release <- struct{}{}
		wantWire(t, <-res, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"released"}]}}`)
		// Idle again, it now expires.
		if !expiredAfter(s, 2*idle) {
			t.Fatal("the session did not expire once idle")
		}
	})
}

func TestCloseEndsSessionsAndBackground(t *testing.T) {
	a, core := newAdapter(t, nil)
	s1 := open(t, a, `{}`, true)
	s2 := open(t, a, `{}`, false)
	feedReady(t, core)
	res := call(context.Background(), s1, req(t, "1", "tools/call", `{"name":"block"}`), newRecorder())
	<-core.started
	waiting := make(chan error, 1)
	go func() {
		_, err := s2.Next(context.Background())
		waiting <- err
	}()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for i, s := range []*legacy.Session{s1, s2} {
		select {
		case <-s.Done():
		default:
			t.Errorf("session %d still open after Close", i+1)
		}
	}
	if r := await(t, res); r != nil {
		t.Errorf("the request cancelled by Close was answered: %s", wire(r))
	}
	select {
	case err := <-waiting:
		if !errors.Is(err, legacy.ErrSessionClosed) {
			t.Errorf("Next: %v, want ErrSessionClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next did not return after Close")
	}
	if n := a.Sessions(); n != 0 {
		t.Errorf("Sessions() = %d after Close", n)
	}
	f := core.Feed().(interface{ Subscribers() int })
	eventually(t, "the feed subscription to end", func() bool { return f.Subscribers() == 0 })
	if ts, resp := a.Initialize(context.Background(), req(t, "2", "initialize", initParams("2025-11-25", `{}`))); ts != nil || resp.Error == nil {
		t.Errorf("initialize after Close: %v, %s", ts, wire(resp))
	}
	if err := a.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
}

// TestCloseBeforeInitialize closes an adapter whose background goroutine
// never started.
func TestCloseBeforeInitialize(t *testing.T) {
	a, _ := newAdapter(t, nil)
	done := make(chan struct{})
	go func() {
		a.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked")
	}
}
