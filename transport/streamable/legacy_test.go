package streamable_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// The legacy era (initialize handshake, sessions) of Streamable HTTP,
// exercised from outside against the everything-server behind a
// legacy.Adapter on a loopback listener.

// modernMeta is the per-request _meta of a modern (2026-07-28) request.
const modernMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// legacyRetry is the SSE retry interval the test handlers announce.
const legacyRetry = 50 * time.Millisecond

// legacyEnv is a dual-era endpoint under test and a client of its own.
type legacyEnv struct {
	t    *testing.T
	core *server.Server
	a    *legacy.Adapter
	ts   *httptest.Server
	c    *http.Client
}

// newLegacyEnv serves everything.New(nil) through a legacy.Adapter and
// the Streamable HTTP handler. extend, when set, adds fixtures to the core;
// wrap, when set, wraps the handler. Everything is stopped at cleanup, and
// the test fails if goroutines are left behind.
func newLegacyEnv(t *testing.T, opts *legacy.Options, extend func(*server.Server), wrap func(http.Handler) http.Handler) *legacyEnv {
	t.Helper()
	leakcheck.Check(t)
	core := everything.New(nil)
	if extend != nil {
		extend(core)
	}
	a := legacy.New(core, opts)
	var h http.Handler = streamable.NewHandler(a, &streamable.Options{RetryInterval: legacyRetry})
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewUnstartedServer(h)
	// net/http reports misuse of a ResponseWriter (a write after the
	// handler returned, a second WriteHeader) in its error log.
	serverLog := &lockedBuffer{}
	ts.Config.ErrorLog = log.New(serverLog, "", 0)
	var tr *http.Transport
	if legacyHTTP2 {
		ts.EnableHTTP2 = true
		ts.StartTLS()
		tr = ts.Client().Transport.(*http.Transport)
	} else {
		ts.Start()
		tr = &http.Transport{}
	}
	t.Cleanup(func() {
		ts.Close()
		if s := serverLog.String(); s != "" {
			t.Errorf("the HTTP server logged:\n%s", s)
		}
	})
	t.Cleanup(func() { _ = a.Close() })
	t.Cleanup(tr.CloseIdleConnections)
	return &legacyEnv{t: t, core: core, a: a, ts: ts, c: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// legacyHTTP2 makes newLegacyEnv serve (and its client speak) HTTP/2 over
// TLS, where requests run on workers rather than on the connection's
// goroutine; TestLegacyHTTP2 sets it.
var legacyHTTP2 bool

// TestLegacyHTTP2 runs the tests of requests that outlive their
// connection over HTTP/2.
func TestLegacyHTTP2(t *testing.T) {
	legacyHTTP2 = true
	defer func() { legacyHTTP2 = false }()
	t.Run("protocol", func(t *testing.T) {
		e := newLegacyEnv(t, nil, nil, nil)
		resp, _ := e.exchange(http.MethodPost, postHeaders(), initializeBody(1, "2025-11-25", `{}`))
		if resp.ProtoMajor != 2 {
			t.Fatalf("served over %s, want HTTP/2", resp.Proto)
		}
	})
	t.Run("polling", TestLegacyPolling)
	t.Run("outlives client", TestLegacyRequestOutlivesClient)
	t.Run("elicitation", TestLegacyElicitation)
}

// lockedBuffer is a buffer safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// exchange sends one request and reads the whole response.
func (e *legacyEnv) exchange(method string, h http.Header, body string) (*http.Response, []byte) {
	e.t.Helper()
	resp := e.open(context.Background(), method, h, body)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s: reading body: %v", method, err)
	}
	return resp, b
}

// open sends one request and returns the response with its body unread.
func (e *legacyEnv) open(ctx context.Context, method string, h http.Header, body string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, e.ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header = h
	resp, err := e.c.Do(req)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// postHeaders are the headers of a POST from a client taking either JSON
// or SSE.
func postHeaders() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	return h
}

// initializeBody returns an initialize request for version, declaring the
// client capabilities caps (raw JSON).
func initializeBody(id int, version, caps string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"legacy-test-client","version":"1.0.0"}}}`, id, version, caps)
}

// legacySession is a client's view of one open session.
type legacySession struct {
	e       *legacyEnv
	id      string
	version string // negotiated
}

// initialize opens a session at version with the capabilities caps and
// sends notifications/initialized.
func (e *legacyEnv) initialize(version, caps string) *legacySession {
	e.t.Helper()
	resp, body := e.exchange(http.MethodPost, postHeaders(), initializeBody(1, version, caps))
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("initialize: status %d: %s", resp.StatusCode, body)
	}
	sid := resp.Header.Get(streamable.HeaderSessionID)
	if sid == "" {
		e.t.Fatalf("initialize: no %s header", streamable.HeaderSessionID)
	}
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		e.t.Fatalf("initialize: %v: %s", err, body)
	}
	s := &legacySession{e: e, id: sid, version: r.Result.ProtocolVersion}
	resp, body = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp.StatusCode != http.StatusAccepted || len(body) != 0 {
		e.t.Fatalf("notifications/initialized: status %d, body %q; want 202 and no body", resp.StatusCode, body)
	}
	return s
}

// headers are the headers of a request of the session: the session id
// and, from 2025-06-18 on, the negotiated MCP-Protocol-Version.
// (Revisions compare as strings: they are dates.)
func (s *legacySession) headers() http.Header {
	h := postHeaders()
	h.Set(streamable.HeaderSessionID, s.id)
	if s.version >= protocol.Version2025_06_18 {
		h.Set(streamable.HeaderProtocolVersion, s.version)
	}
	return h
}

// post sends body to the session and reads the whole response.
func (s *legacySession) post(body string) (*http.Response, []byte) {
	s.e.t.Helper()
	return s.e.exchange(http.MethodPost, s.headers(), body)
}

// call sends a request that is answered with JSON and decodes the answer.
func (s *legacySession) call(body string) rpcResponse {
	s.e.t.Helper()
	resp, b := s.post(body)
	if resp.StatusCode != http.StatusOK {
		s.e.t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		s.e.t.Fatalf("Content-Type %q, want application/json: %s", ct, b)
	}
	return decodeResponse(s.e.t, b)
}

// getHeaders are the headers of a GET of the session's stream.
func (s *legacySession) getHeaders(lastEventID string) http.Header {
	h := s.headers()
	h.Del("Content-Type")
	h.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		h.Set("Last-Event-ID", lastEventID)
	}
	return h
}

// rpcResponse is a decoded JSON-RPC response.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
	raw     []byte
}

type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func decodeResponse(t *testing.T, b []byte) rpcResponse {
	t.Helper()
	var r rpcResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("not a JSON-RPC response: %v: %s", err, b)
	}
	if r.JSONRPC != "2.0" {
		t.Fatalf("jsonrpc = %q: %s", r.JSONRPC, b)
	}
	r.raw = b
	return r
}

// wantError asserts that r is an error with the code.
func (r rpcResponse) wantError(t *testing.T, code int64) *rpcError {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("got a result, want error %d: %s", code, r.raw)
	}
	if r.Error.Code != code || r.Error.Message == "" {
		t.Fatalf("error %d %q, want code %d with a message: %s", r.Error.Code, r.Error.Message, code, r.raw)
	}
	if r.Result != nil {
		t.Fatalf("error response has a result: %s", r.raw)
	}
	return r.Error
}

// toolText returns the text of a tools/call result's content; it fails on
// an error or a tool error.
func (r rpcResponse) toolText(t *testing.T) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("tools/call failed: %s", r.raw)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("not a successful tool result: %s", r.raw)
	}
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, " ")
}

// wantErrorBody asserts a transport-level JSON-RPC error body: compact
// JSON with the code and without an id.
func wantErrorBody(t *testing.T, resp *http.Response, body []byte, code int64) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	pattern := `^\{"jsonrpc":"2\.0","error":\{"code":` + strconv.FormatInt(code, 10) + `,"message":"[^"]+"\}\}$`
	if !regexp.MustCompile(pattern).Match(body) {
		t.Errorf("body %s, want a JSON-RPC error %d without id", body, code)
	}
}

// modernMembers are the members of a result that revision 2026-07-28
// added and legacy results must not carry.
var modernMembers = []string{"resultType", "ttlMs", "cacheScope"}

// wantLegacyShape asserts that a result has none of the modern members
// and no serverInfo in its _meta.
func wantLegacyShape(t *testing.T, what string, result json.RawMessage) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(result, &members); err != nil {
		t.Fatalf("%s: result is not an object: %s", what, result)
	}
	for _, m := range modernMembers {
		if _, ok := members[m]; ok {
			t.Errorf("%s: legacy result has %s: %s", what, m, result)
		}
	}
	if meta, ok := members["_meta"]; ok {
		var mm map[string]json.RawMessage
		_ = json.Unmarshal(meta, &mm)
		if _, ok := mm[protocol.MetaServerInfo]; ok {
			t.Errorf("%s: legacy result has %s in _meta: %s", what, protocol.MetaServerInfo, result)
		}
	}
}

// sseEvent is one event (or comment) read from an SSE stream.
type sseEvent struct {
	Comment  bool
	ID       string
	HasID    bool
	Retry    string
	HasRetry bool
	Event    string
	Data     string
	HasData  bool
}

// readSSE reads the next event or comment, failing on a field the
// transport does not write.
func readSSE(br *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	started := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && started {
				return ev, io.ErrUnexpectedEOF
			}
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if started {
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			if !started {
				ev.Comment, started = true, true
			}
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		started = true
		switch name {
		case "id":
			ev.ID, ev.HasID = value, true
		case "retry":
			ev.Retry, ev.HasRetry = value, true
		case "event":
			ev.Event = value
		case "data":
			if ev.HasData {
				ev.Data += "\n"
			}
			ev.Data += value
			ev.HasData = true
		default:
			return ev, fmt.Errorf("unexpected SSE line %q", line)
		}
	}
}

// sseStream reads an SSE response in a goroutine it owns; close stops it.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	cancel context.CancelFunc
	events chan sseEvent
	err    error // set before events is closed
	done   chan struct{}
}

// openStream sends a request whose answer is an SSE stream and starts
// reading it.
func (e *legacyEnv) openStream(method string, h http.Header, body string) *sseStream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp := e.open(ctx, method, h, body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		e.t.Fatalf("%s: status %d, Content-Type %q, want 200 text/event-stream: %s", method, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &sseStream{t: e.t, resp: resp, cancel: cancel, events: make(chan sseEvent, 64), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(s.events)
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := readSSE(br)
			if err != nil {
				s.err = err
				return
			}
			s.events <- ev
		}
	}()
	e.t.Cleanup(s.close)
	return s
}

// close drops the connection and waits for the reader.
func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
	for range s.events {
	}
	<-s.done
}

// next returns the next event, skipping comments.
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("stream ended while waiting for an event: %v", s.err)
			}
			if ev.Comment {
				continue
			}
			return ev
		case <-timeout:
			s.t.Fatalf("timed out waiting for an SSE event")
		}
	}
}

// message returns the next event, which must carry a JSON-RPC message
// with an id.
func (s *sseStream) message() (sseEvent, map[string]json.RawMessage) {
	s.t.Helper()
	ev := s.next()
	if ev.Event != "message" || !ev.HasID || ev.ID == "" {
		s.t.Fatalf("event %+v, want an \"event: message\" with an id", ev)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
		s.t.Fatalf("event data is not a JSON-RPC message: %v: %q", err, ev.Data)
	}
	return ev, m
}

// wantEnd asserts that the stream ends (the server closes it) without
// another event.
func (s *sseStream) wantEnd() {
	s.t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				if !errors.Is(s.err, io.EOF) {
					s.t.Fatalf("stream ended with %v, want a clean end", s.err)
				}
				return
			}
			if !ev.Comment {
				s.t.Fatalf("event %+v, want the end of the stream", ev)
			}
		case <-timeout:
			s.t.Fatalf("the server did not end the stream")
		}
	}
}

// wantPriming asserts that ev is a priming event (an id, the retry
// interval and empty data) and returns its id.
func wantPriming(t *testing.T, ev sseEvent) string {
	t.Helper()
	if !ev.HasID || ev.ID == "" || !ev.HasRetry || ev.Retry != strconv.Itoa(int(legacyRetry/time.Millisecond)) || !ev.HasData || ev.Data != "" || ev.Event != "" {
		t.Fatalf("first event %+v, want a priming event: an id, retry %d and empty data", ev, legacyRetry/time.Millisecond)
	}
	return ev.ID
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s is not a string", raw)
	}
	return s
}

func toolCall(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

// TestLegacyInitialize checks the handshake over HTTP: the session id, the
// negotiated version and the legacy shape of the result.
func TestLegacyInitialize(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	tests := []struct {
		name, offered, want string
	}{
		{"latest legacy", "2025-11-25", "2025-11-25"},
		{"older legacy", "2025-06-18", "2025-06-18"},
		{"first streamable", "2025-03-26", "2025-03-26"},
		{"unknown", "2024-01-01", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.exchange(http.MethodPost, postHeaders(), initializeBody(1, tt.offered, `{}`))
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if sid := resp.Header.Get(streamable.HeaderSessionID); sid == "" {
				t.Fatalf("no %s header", streamable.HeaderSessionID)
			}
			r := decodeResponse(t, body)
			if string(r.ID) != "1" || r.Error != nil {
				t.Fatalf("response %s, want the result for id 1", body)
			}
			var res struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
				ServerInfo      protocol.Implementation    `json:"serverInfo"`
			}
			if err := json.Unmarshal(r.Result, &res); err != nil {
				t.Fatal(err)
			}
			if res.ProtocolVersion != tt.want {
				t.Errorf("protocolVersion %q, want %q", res.ProtocolVersion, tt.want)
			}
			if res.ServerInfo.Name != everything.Info.Name || res.ServerInfo.Version != everything.Info.Version {
				t.Errorf("serverInfo %+v, want %+v", res.ServerInfo, everything.Info)
			}
			for _, c := range []string{"tools", "resources", "prompts", "logging"} {
				if _, ok := res.Capabilities[c]; !ok {
					t.Errorf("capabilities lack %s: %s", c, r.Result)
				}
			}
			if _, ok := res.Capabilities["extensions"]; ok {
				t.Errorf("capabilities carry the modern extensions member: %s", r.Result)
			}
			wantLegacyShape(t, "initialize", r.Result)

			s := &legacySession{e: e, id: resp.Header.Get(streamable.HeaderSessionID), version: res.ProtocolVersion}
			resp, body = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if resp.StatusCode != http.StatusAccepted || len(body) != 0 {
				t.Errorf("notifications/initialized: status %d, body %q; want 202, no body", resp.StatusCode, body)
			}
		})
	}

	t.Run("session ids", func(t *testing.T) {
		const n = 200
		ids := make([]string, n)
		seen := map[string]bool{}
		alphabet := map[rune]bool{}
		for i := range ids {
			resp, body := e.exchange(http.MethodPost, postHeaders(), initializeBody(i, "2025-11-25", `{}`))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("initialize %d: status %d: %s", i, resp.StatusCode, body)
			}
			id := resp.Header.Get(streamable.HeaderSessionID)
			for _, c := range id {
				if c < 0x21 || c > 0x7e {
					t.Fatalf("session id %q has a character outside visible ASCII (0x21-0x7E): %U", id, c)
				}
				alphabet[c] = true
			}
			if seen[id] {
				t.Fatalf("session id %q issued twice", id)
			}
			seen[id] = true
			ids[i] = id
		}
		// A lower bound of the ids' randomness: the positions that vary
		// across the sample, each worth log2 of the characters seen.
		varying := 0
		for pos := 0; pos < len(ids[0]); pos++ {
			for _, id := range ids[1:] {
				if len(id) != len(ids[0]) {
					t.Fatalf("session ids of different lengths: %q, %q", ids[0], id)
				}
				if id[pos] != ids[0][pos] {
					varying++
					break
				}
			}
		}
		bits := float64(varying) * math.Log2(float64(len(alphabet)))
		if bits < 128 {
			t.Errorf("session ids (e.g. %q) carry about %.0f bits of randomness, want at least 128", ids[0], bits)
		}
	})
}

// TestLegacySessionRules checks how requests naming a session are
// refused: unknown and deleted sessions, version mismatch, Accept of the
// GET stream and methods.
func TestLegacySessionRules(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	s := e.initialize("2025-11-25", `{}`)
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`

	with := func(mod func(h http.Header)) http.Header {
		h := s.headers()
		mod(h)
		return h
	}
	tests := []struct {
		name       string
		method     string
		header     http.Header
		body       string
		wantStatus int
		wantCode   int64 // 0: no error body expected
	}{
		{"unknown session", http.MethodPost, with(func(h http.Header) { h.Set(streamable.HeaderSessionID, "no-such-session") }), ping, http.StatusNotFound, -32600},
		{"other version", http.MethodPost, with(func(h http.Header) { h.Set(streamable.HeaderProtocolVersion, "2025-06-18") }), ping, http.StatusBadRequest, -32600},
		{"modern version", http.MethodPost, with(func(h http.Header) { h.Set(streamable.HeaderProtocolVersion, "2026-07-28") }), ping, http.StatusBadRequest, -32600},
		{"no version header", http.MethodPost, with(func(h http.Header) { h.Del(streamable.HeaderProtocolVersion) }), ping, http.StatusOK, 0},
		{"GET without SSE", http.MethodGet, with(func(h http.Header) { h.Set("Accept", "application/json") }), "", http.StatusNotAcceptable, -32600},
		{"PUT", http.MethodPut, s.headers(), ping, http.StatusMethodNotAllowed, -32600},
		{"PUT without session", http.MethodPut, postHeaders(), ping, http.StatusMethodNotAllowed, -32600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.exchange(tt.method, tt.header, tt.body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantCode != 0 {
				wantErrorBody(t, resp, body, tt.wantCode)
				return
			}
			if string(body) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("body %s, want the ping result", body)
			}
		})
	}

	t.Run("no version header without 2025-03-26", func(t *testing.T) {
		// Only 2025-03-26 clients may omit the header; a server that does
		// not serve that revision rejects requests without it.
		e2 := newLegacyEnv(t, &legacy.Options{Versions: []string{"2025-11-25", "2025-06-18"}}, nil, nil)
		s2 := e2.initialize("2025-11-25", `{}`)
		h := s2.headers()
		h.Del(streamable.HeaderProtocolVersion)
		resp, body := e2.exchange(http.MethodPost, h, ping)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
		}
		wantErrorBody(t, resp, body, -32600)
	})

	t.Run("DELETE", func(t *testing.T) {
		d := e.initialize("2025-11-25", `{}`)
		if n := e.a.Sessions(); n < 2 {
			t.Fatalf("Sessions() = %d with two open", n)
		}
		before := e.a.Sessions()
		resp, body := e.exchange(http.MethodDelete, d.headers(), "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("DELETE: status %d: %s", resp.StatusCode, body)
		}
		if n := e.a.Sessions(); n != before-1 {
			t.Errorf("Sessions() = %d after DELETE, want %d", n, before-1)
		}
		for _, req := range []struct{ method, body string }{{http.MethodPost, ping}, {http.MethodGet, ""}, {http.MethodDelete, ""}} {
			h := d.headers()
			if req.method == http.MethodGet {
				h = d.getHeaders("")
			}
			resp, body := e.exchange(req.method, h, req.body)
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s after DELETE: status %d, want 404: %s", req.method, resp.StatusCode, body)
				continue
			}
			wantErrorBody(t, resp, body, -32600)
		}
		// The other session is untouched.
		if r := s.call(ping); r.Error != nil {
			t.Errorf("ping of the remaining session: %s", r.raw)
		}
	})
}

// TestLegacyResultShapes checks results and errors inside a session as a
// legacy client reads them.
func TestLegacyResultShapes(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	s := e.initialize("2025-11-25", `{}`)

	t.Run("tools/list", func(t *testing.T) {
		r := s.call(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`)
		if r.Error != nil || string(r.ID) != `"a"` {
			t.Fatalf("tools/list: %s", r.raw)
		}
		wantLegacyShape(t, "tools/list", r.Result)
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(r.Result, &res)
		found := false
		for _, tool := range res.Tools {
			found = found || tool.Name == "test_elicitation"
		}
		if !found {
			t.Errorf("tools/list lacks test_elicitation: %s", r.raw)
		}
	})
	t.Run("resources/read", func(t *testing.T) {
		r := s.call(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://static-text"}}`)
		if r.Error != nil {
			t.Fatalf("resources/read: %s", r.raw)
		}
		wantLegacyShape(t, "resources/read", r.Result)
		want := `{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]}`
		if string(r.Result) != want {
			t.Errorf("result %s, want %s", r.Result, want)
		}
	})
	t.Run("resources/read unknown", func(t *testing.T) {
		r := s.call(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://no-such-resource"}}`)
		e := r.wantError(t, protocol.CodeResourceNotFoundLegacy)
		var data struct {
			URI string `json:"uri"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil || data.URI != "test://no-such-resource" {
			t.Errorf("error data %s, want the uri", e.Data)
		}
	})
	t.Run("ping", func(t *testing.T) {
		_, b := s.post(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
		if string(b) != `{"jsonrpc":"2.0","id":5,"result":{}}` {
			t.Errorf("ping answered %s", b)
		}
	})
	t.Run("logging/setLevel", func(t *testing.T) {
		for _, level := range []string{`"loud"`, `""`, `7`} {
			r := s.call(`{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":` + level + `}}`)
			r.wantError(t, protocol.CodeInvalidParams)
		}
		_, b := s.post(`{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"info"}}`)
		if string(b) != `{"jsonrpc":"2.0","id":7,"result":{}}` {
			t.Errorf("logging/setLevel info answered %s", b)
		}
	})
}

// modernHeaders are the headers of a modern request of method naming name.
func modernHeaders(method, name string) http.Header {
	h := postHeaders()
	h.Set(streamable.HeaderProtocolVersion, protocol.Version2026_07_28)
	h.Set(streamable.HeaderMethod, method)
	if name != "" {
		h.Set(streamable.HeaderName, name)
	}
	return h
}

// TestLegacyAndModernInterleaved serves a modern, stateless client and a
// legacy session on one endpoint at once.
func TestLegacyAndModernInterleaved(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	s := e.initialize("2025-11-25", `{}`)

	const workers, rounds = 8, 12
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				id := w*1000 + i
				text := fmt.Sprintf("w%d-r%d", w, i)
				if i%2 == 0 {
					body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q},"_meta":%s}}`, id, text, modernMeta)
					if err := checkEcho(e, modernHeaders("tools/call", "echo"), body, id, text, true); err != nil {
						t.Errorf("modern %s: %v", text, err)
					}
				} else {
					if err := checkEcho(e, s.headers(), toolCall(id, "echo", fmt.Sprintf(`{"text":%q}`, text)), id, text, false); err != nil {
						t.Errorf("legacy %s: %v", text, err)
					}
				}
			}
		}()
	}
	wg.Wait()

	t.Run("modern initialize", func(t *testing.T) {
		before := e.a.Sessions()
		body := `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"},"_meta":` + modernMeta + `}}`
		resp, b := e.exchange(http.MethodPost, modernHeaders("initialize", ""), body)
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d, want 404: %s", resp.StatusCode, b)
		}
		if sid := resp.Header.Get(streamable.HeaderSessionID); sid != "" {
			t.Errorf("a modern initialize opened session %q", sid)
		}
		r := decodeResponse(t, b)
		if string(r.ID) != "9" {
			t.Errorf("id %s, want 9", r.ID)
		}
		r.wantError(t, protocol.CodeMethodNotFound)
		if n := e.a.Sessions(); n != before {
			t.Errorf("Sessions() = %d, want %d", n, before)
		}
	})
}

// checkEcho posts an echo call and checks its answer: the text back, in
// the modern shape (resultType) or the legacy one.
func checkEcho(e *legacyEnv, h http.Header, body string, id int, text string, modern bool) error {
	req, err := http.NewRequest(http.MethodPost, e.ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = h
	resp, err := e.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		return fmt.Errorf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var r struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			ResultType *string `json:"resultType"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Result == nil {
		return fmt.Errorf("not a result: %s", b)
	}
	if string(r.ID) != strconv.Itoa(id) {
		return fmt.Errorf("id %s, want %d", r.ID, id)
	}
	if len(r.Result.Content) != 1 || r.Result.Content[0].Text != text {
		return fmt.Errorf("content %s, want the text %q", b, text)
	}
	if modern && (r.Result.ResultType == nil || *r.Result.ResultType != "complete") {
		return fmt.Errorf("modern result without resultType complete: %s", b)
	}
	if !modern && r.Result.ResultType != nil {
		return fmt.Errorf("legacy result with resultType: %s", b)
	}
	return nil
}

// TestLegacyElicitation runs the MRTR tools of the fixture for a legacy
// client: the input requests reach it as real elicitation/create
// requests on the response stream, and its answers come back as POSTed
// JSON-RPC responses.
func TestLegacyElicitation(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	s := e.initialize("2025-11-25", `{"elicitation":{}}`)

	tests := []struct {
		name, tool, args string
		answer           string // the client's result
		wantParams       map[string]string
		wantText         string
	}{
		{
			name: "test_elicitation", tool: "test_elicitation", args: `{"message":"Who are you?"}`,
			answer:     `{"action":"accept","content":{"username":"u","email":"e@x"}}`,
			wantParams: map[string]string{"message": "Who are you?"},
			wantText:   `User response: action=accept, content={"email":"e@x","username":"u"}`,
		},
		{
			name: "modern MRTR tool", tool: "test_input_required_result_elicitation", args: `{}`,
			answer:     `{"action":"accept","content":{"name":"Ada"}}`,
			wantParams: map[string]string{"message": "What is your name?"},
			wantText:   "Hello, Ada!",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := e.openStream(http.MethodPost, s.headers(), toolCall(10+i, tt.tool, tt.args))
			wantPriming(t, st.next())
			_, req := st.message()
			if got := str(t, req["method"]); got != "elicitation/create" {
				t.Fatalf("first message is %s, want elicitation/create", got)
			}
			id := req["id"]
			if len(id) == 0 || string(id) == "null" {
				t.Fatalf("elicitation/create has no id")
			}
			var params map[string]json.RawMessage
			if err := json.Unmarshal(req["params"], &params); err != nil {
				t.Fatalf("params: %v", err)
			}
			for k, v := range tt.wantParams {
				if got := str(t, params[k]); got != v {
					t.Errorf("params.%s = %q, want %q", k, got, v)
				}
			}
			if _, ok := params["requestedSchema"]; !ok {
				t.Errorf("elicitation/create without requestedSchema: %s", req["params"])
			}

			resp, b := s.post(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + tt.answer + `}`)
			if resp.StatusCode != http.StatusAccepted || len(b) != 0 {
				t.Fatalf("posting the answer: status %d, body %q; want 202, no body", resp.StatusCode, b)
			}

			_, final := st.message()
			if string(final["id"]) != strconv.Itoa(10+i) {
				t.Fatalf("final message %v, want the response to %d", final, 10+i)
			}
			r := rpcResponse{ID: final["id"], Result: final["result"], raw: []byte(fmt.Sprintf("%s", final["result"]))}
			if final["error"] != nil {
				t.Fatalf("tool call failed: %s", final["error"])
			}
			if got := r.toolText(t); got != tt.wantText {
				t.Errorf("tool text %q, want %q", got, tt.wantText)
			}
			wantLegacyShape(t, tt.tool, r.Result)
			st.wantEnd()
		})
	}

	t.Run("without the capability", func(t *testing.T) {
		plain := e.initialize("2025-11-25", `{}`)
		done := make(chan rpcResponse, 1)
		go func() {
			resp, b := plain.e.exchange(http.MethodPost, plain.headers(), toolCall(20, "test_elicitation", `{"message":"hi"}`))
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			var r rpcResponse
			_ = json.Unmarshal(b, &r)
			r.raw = b
			done <- r
		}()
		select {
		case r := <-done:
			if string(r.ID) != "20" {
				t.Fatalf("id %s, want 20: %s", r.ID, r.raw)
			}
			r.wantError(t, protocol.CodeInvalidRequest)
		case <-time.After(5 * time.Second):
			t.Fatal("no answer: the request waits for input the client cannot give")
		}
	})
}

// TestLegacyPolling checks server-initiated polling: test_reconnection
// closes its response's connection after the priming event, and the client
// receives the result by resuming with Last-Event-ID.
func TestLegacyPolling(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	s := e.initialize("2025-11-25", `{}`)

	resp, body := s.post(toolCall(30, "test_reconnection", `{}`))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	m := regexp.MustCompile(`^id: (\S+)\nretry: ` + strconv.Itoa(int(legacyRetry/time.Millisecond)) + `\ndata: \n\n$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("body %q, want exactly one priming event before the connection closes", body)
	}
	last := string(m[1])

	st := e.openStream(http.MethodGet, s.getHeaders(last), "")
	ev, msg := st.message()
	if ev.ID == last {
		t.Errorf("the resumed event repeats id %s", last)
	}
	r := rpcResponse{ID: msg["id"], Result: msg["result"], raw: []byte(ev.Data)}
	if string(r.ID) != "30" {
		t.Fatalf("resumed stream sent %s, want the response to 30", ev.Data)
	}
	if got := r.toolText(t); got != "Reconnection test completed" {
		t.Errorf("tool text %q", got)
	}
	wantLegacyShape(t, "test_reconnection", r.Result)
	st.wantEnd()

	// Resuming again after the last event finds nothing more to send.
	again := e.openStream(http.MethodGet, s.getHeaders(ev.ID), "")
	again.wantEnd()
}

// TestLegacyResumeUnknownEvent: a Last-Event-ID that names no stream of the
// session is refused with 400 (the session goes on: not 404), never
// answered with a new standalone stream in place of the one resumed.
func TestLegacyResumeUnknownEvent(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	s := e.initialize("2025-11-25", `{}`)
	for _, id := range []string{"999-1", "garbage", "1-1"} {
		resp, body := e.exchange(http.MethodGet, s.getHeaders(id), "")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Last-Event-ID names no stream") {
			t.Errorf("GET with Last-Event-ID %q: %d %s, want 400", id, resp.StatusCode, body)
		}
	}
	// The session goes on.
	if r := s.call(`{"jsonrpc":"2.0","id":5,"method":"ping"}`); r.Error != nil {
		t.Fatalf("ping after the refused resumption: %s", r.raw)
	}
	st := e.openStream(http.MethodGet, s.getHeaders(""), "")
	wantPriming(t, st.next())
	st.close()
}

// TestLegacyResumeGetStream drops the standalone GET stream and resumes
// it: the events sent meanwhile arrive once each, in order, then live
// ones follow.
func TestLegacyResumeGetStream(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	s := e.initialize("2025-11-25", `{}`)
	uri := func(n int) string { return fmt.Sprintf("test://watched-resource?n=%d", n) }
	const total = 9
	for _, u := range []string{"test://watched-resource", uri(1), uri(2), uri(3), uri(4), uri(5), uri(6), uri(7), uri(8), uri(9)} {
		_, b := s.post(`{"jsonrpc":"2.0","id":40,"method":"resources/subscribe","params":{"uri":"` + u + `"}}`)
		if string(b) != `{"jsonrpc":"2.0","id":40,"result":{}}` {
			t.Fatalf("resources/subscribe %s answered %s", u, b)
		}
	}
	trigger := func(u string) {
		t.Helper()
		r := s.call(toolCall(41, "test_trigger_resource_update", `{"uri":"`+u+`"}`))
		if got := r.toolText(t); got != "Resource update triggered for "+u {
			t.Fatalf("trigger answered %q", got)
		}
	}
	seen := map[string]bool{}
	expect := func(st *sseStream, u string) string {
		t.Helper()
		ev, msg := st.message()
		if got := str(t, msg["method"]); got != "notifications/resources/updated" {
			t.Fatalf("event %s, want notifications/resources/updated", ev.Data)
		}
		if _, ok := msg["id"]; ok {
			t.Fatalf("notification with an id: %s", ev.Data)
		}
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(msg["params"], &p)
		if p.URI != u {
			t.Fatalf("update of %q, want %q (a repeated, lost or reordered event)", p.URI, u)
		}
		if seen[ev.ID] {
			t.Fatalf("event id %s sent twice", ev.ID)
		}
		seen[ev.ID] = true
		return ev.ID
	}

	st := e.openStream(http.MethodGet, s.getHeaders(""), "")
	seen[wantPriming(t, st.next())] = true
	trigger("test://watched-resource")
	expect(st, "test://watched-resource")
	// An update of a resource the session did not subscribe to is not
	// sent; the next event is the next subscribed update.
	trigger("test://static-text")
	last := ""
	for n := 1; n <= 3; n++ {
		trigger(uri(n))
		last = expect(st, uri(n))
	}
	st.close()

	// Meanwhile, requests with SSE responses come and go in the session.
	for i := 0; i < 40; i++ {
		h := s.headers()
		h.Set("Accept", "text/event-stream, application/json")
		resp, b := e.exchange(http.MethodPost, h, toolCall(42, "echo", `{"text":"x"}`))
		if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(string(b), `"text":"x"`) {
			t.Fatalf("echo over SSE: %s: %s", resp.Header.Get("Content-Type"), b)
		}
	}
	for n := 4; n <= 6; n++ {
		trigger(uri(n))
	}

	resumed := e.openStream(http.MethodGet, s.getHeaders(last), "")
	for n := 4; n <= 6; n++ {
		expect(resumed, uri(n))
	}
	for n := 7; n <= total; n++ {
		trigger(uri(n))
		expect(resumed, uri(n))
	}
}

// TestLegacyBatches checks JSON-RPC batches, allowed in 2025-03-26 only.
func TestLegacyBatches(t *testing.T) {
	e := newLegacyEnv(t, nil, nil, nil)
	old := e.initialize("2025-03-26", `{}`)

	t.Run("2025-03-26", func(t *testing.T) {
		batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},` +
			`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo","arguments":{"text":"batched"}}},` +
			`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://nope"}}]`
		resp, b := old.post(batch)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		var parts []json.RawMessage
		if err := json.Unmarshal(b, &parts); err != nil {
			t.Fatalf("not a JSON array: %s", b)
		}
		if len(parts) != 3 {
			t.Fatalf("%d responses, want 3 (none for the notification): %s", len(parts), b)
		}
		if string(parts[0]) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Errorf("ping answered %s", parts[0])
		}
		echo := decodeResponse(t, parts[1])
		if string(echo.ID) != `"two"` || echo.toolText(t) != "batched" {
			t.Errorf("echo answered %s", parts[1])
		}
		wantLegacyShape(t, "batched tools/call", echo.Result)
		nf := decodeResponse(t, parts[2])
		if string(nf.ID) != "3" {
			t.Errorf("third response %s, want id 3", parts[2])
		}
		nf.wantError(t, protocol.CodeResourceNotFoundLegacy)
	})
	t.Run("2025-03-26 notifications only", func(t *testing.T) {
		resp, b := old.post(`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`)
		if resp.StatusCode != http.StatusAccepted || len(b) != 0 {
			t.Errorf("status %d, body %q; want 202 and no body", resp.StatusCode, b)
		}
	})
	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			s := e.initialize(v, `{}`)
			resp, b := s.post(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, b)
			}
			wantErrorBody(t, resp, b, protocol.CodeInvalidRequest)
		})
	}
}

// TestLegacyRequestOutlivesClient lets a client go away before its
// request sends anything, then has the request send a notification: the
// notification must fail cleanly rather than write to a response whose
// handler has returned, and the session must go on.
func TestLegacyRequestOutlivesClient(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	outcome := make(chan string, 1)
	extend := func(core *server.Server) {
		server.AddTool(core, &protocol.Tool{Name: "late_progress", Description: "Reports progress once released"},
			func(ctx context.Context, req *server.CallRequest, _ everything.NoArgs) (text string, err error) {
				defer func() {
					if p := recover(); p != nil {
						outcome <- fmt.Sprint("panic: ", p)
						text, err = "", nil
					}
				}()
				started <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					outcome <- "cancelled"
					return "", ctx.Err()
				}
				if err := req.Progress(1, 1, ""); err != nil {
					outcome <- "error"
				} else {
					outcome <- "sent"
				}
				return "released", nil
			})
	}
	returned := make(chan struct{}, 1)
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			if r.Header.Get("X-Test-Watch") != "" {
				returned <- struct{}{}
			}
		})
	}
	e := newLegacyEnv(t, nil, extend, wrap)
	s := e.initialize("2025-11-25", `{}`)

	ctx, cancel := context.WithCancel(context.Background())
	h := s.headers()
	h.Set("X-Test-Watch", "1")
	body := `{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"late_progress","arguments":{},"_meta":{"progressToken":"p"}}}`
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.ts.URL+"/mcp", strings.NewReader(body))
		req.Header = h
		resp, err := e.c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the request succeeded though its client went away")
	}
	// The request goes on, on a goroutine of its own; the handler returns
	// once the server sees the client gone. Only then is the tool let
	// report progress.
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not return after its client left")
	}
	close(release)
	select {
	case got := <-outcome:
		if got != "error" {
			t.Errorf("progress after the client left: %s; want an error", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tool did not finish")
	}
	if r := s.call(`{"jsonrpc":"2.0","id":51,"method":"ping"}`); r.Error != nil {
		t.Errorf("ping after the abandoned request: %s", r.raw)
	}
}

// TestLegacyAbandonedSessions opens many sessions that are never ended
// and checks that idle expiry gives back their goroutines and memory. It
// does so twice: what the first round leaves (map capacity, which Go does
// not shrink) must be reused by the second, not added to.
func TestLegacyAbandonedSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2 x 10,000 sessions")
	}
	leakcheck.Check(t)
	const (
		sessions = 10000
		MiB      = 1 << 20
		// Long enough for all the sessions to be open at once (for the
		// peak), short enough to wait for.
		idle = 2 * time.Second
	)
	heapInUse := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	mib := func(b uint64) float64 { return float64(b) / MiB }
	baseGoroutines := runtime.NumGoroutine()
	base := heapInUse()

	a := legacy.New(everything.New(nil), &legacy.Options{IdleTimeout: idle})
	t.Cleanup(func() { _ = a.Close() })
	h := streamable.NewHandler(a, nil)
	var after [2]uint64
	for round := range after {
		ids := make(map[string]bool, sessions)
		start := time.Now()
		for i := range sessions {
			req := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(initializeBody(i, "2025-11-25", `{"elicitation":{}}`)))
			req.Header = postHeaders()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			sid := rec.Header().Get(streamable.HeaderSessionID)
			if rec.Code != http.StatusOK || sid == "" {
				t.Fatalf("initialize %d: status %d, session %q: %s", i, rec.Code, sid, rec.Body.Bytes())
			}
			ids[sid] = true
		}
		opened := time.Since(start)
		if len(ids) != sessions {
			t.Fatalf("%d distinct session ids for %d sessions", len(ids), sessions)
		}
		ids = nil
		open := a.Sessions()
		peak := heapInUse()
		if open != sessions && opened < idle {
			t.Errorf("Sessions() = %d right after opening %d", open, sessions)
		}

		deadline := time.Now().Add(idle + 10*time.Second)
		for a.Sessions() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d sessions still open long after their idle timeout", a.Sessions())
			}
			time.Sleep(20 * time.Millisecond)
		}
		after[round] = heapInUse()
		t.Logf("round %d: opened %d sessions in %v; heap in use: baseline %.2f MiB, peak %.2f MiB with %d open (%+.2f MiB), after expiry %.2f MiB (%+.2f MiB)",
			round+1, sessions, opened.Round(time.Millisecond), mib(base), mib(peak), open, mib(peak)-mib(base), mib(after[round]), mib(after[round])-mib(base))
		if after[round] > base+8*MiB {
			t.Errorf("round %d: heap in use %.2f MiB after expiry, baseline %.2f MiB: more than 8 MiB kept", round+1, mib(after[round]), mib(base))
		}
		// The adapter's three background goroutines (change feed, sweep,
		// bus) run until Close; nothing else may be left.
		if n := runtime.NumGoroutine(); n > baseGoroutines+3 {
			t.Errorf("round %d: %d goroutines after expiry, baseline %d", round+1, n, baseGoroutines)
		}
	}
	if after[1] > after[0]+MiB {
		t.Errorf("heap in use grew from %.2f to %.2f MiB across two rounds of abandoned sessions", mib(after[0]), mib(after[1]))
	}
}

// TestLegacySessionsFull: an initialize refused for want of room is a 503
// with Retry-After; sessions never used after initialize make room first.
func TestLegacySessionsFull(t *testing.T) {
	e := newLegacyEnv(t, &legacy.Options{MaxSessions: 1}, nil, nil)
	s := e.initialize(protocol.Version2025_11_25, `{}`)
	e.initialize(protocol.Version2025_11_25, `{}`) // the unused one made room
	s = e.initialize(protocol.Version2025_11_25, `{}`)
	s.call(`{"jsonrpc":"2.0","id":5,"method":"ping"}`) // now in use
	resp, body := e.exchange(http.MethodPost, postHeaders(), initializeBody(2, protocol.Version2025_11_25, `{}`))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "too many open sessions") {
		t.Fatalf("initialize with no room: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}
