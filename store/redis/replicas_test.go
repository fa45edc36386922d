package redis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/store/redis"
	"github.com/mcpkit/mcpkit/store/redis/redistest"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// replica is one server of a cluster, in this process but with a Redis
// connection of its own, as a replica in a process of its own has.
type replica struct {
	addr string
	srv  *server.Server
	st   *redis.Store
	hs   *http.Server
}

// cluster is n replicas sharing one Redis, behind nginx.
type cluster struct {
	redis    *redistest.Process
	replicas []*replica
	nginx    string // host:port
}

var stateKey = bytes.Repeat([]byte{7}, 32)

// cancelled receives the name of the replica whose "block" call was
// cancelled.
var cancelled = make(chan string, 8)

// onceRuns counts the runs of the "once" tool past its confirmation.
var onceRuns atomic.Int32

func newCluster(t *testing.T, n int, idle time.Duration) *cluster {
	t.Helper()
	c := &cluster{redis: redistest.Redis(t)}
	var addrs []string
	for i := 0; i < n; i++ {
		r := startReplica(t, c.redis.URL(), fmt.Sprintf("r%d", i+1), idle)
		c.replicas = append(c.replicas, r)
		addrs = append(addrs, r.addr)
	}
	c.nginx = redistest.StartNginx(t, addrs)
	return c
}

func startReplica(t *testing.T, url, name string, idle time.Duration) *replica {
	t.Helper()
	st, err := redis.Open(context.Background(), url, &redis.Options{Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(protocol.Implementation{Name: "replicas", Version: "1"}, &server.Options{
		StateKey:  stateKey,
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Feed:      st.Feed(),
		OnceStore: st.OnceStore(),
		Legacy: legacy.Options{Store: st.Sessions(), Bus: st.Bus(), Replica: name, IdleTimeout: idle,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("replica", name)},
	})
	server.AddTool(srv, &protocol.Tool{Name: "change", Description: "announces a tool-list change"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (*protocol.CallToolResult, error) {
			srv.NotifyToolsChanged()
			return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: name}}}, nil
		})
	server.AddTool(srv, &protocol.Tool{Name: "whoami", Description: "names the replica"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: name}}}, nil
		})
	server.AddTool(srv, &protocol.Tool{Name: "block", Description: "waits until cancelled"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (*protocol.CallToolResult, error) {
			select {
			case <-ctx.Done():
				cancelled <- name
				return nil, ctx.Err()
			case <-time.After(20 * time.Second):
				return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: "not cancelled"}}}, nil
			}
		})
	server.AddTool(srv, &protocol.Tool{Name: "ask", Description: "asks the user's name"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (*protocol.CallToolResult, error) {
			res, err := req.Elicit("name", &protocol.ElicitParams{Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: name + " heard " + res.Action + " " + fmt.Sprint(res.Content["name"])}}}, nil
		})
	server.AddTool(srv, &protocol.Tool{Name: "once", Description: "runs once per confirmation"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (*protocol.CallToolResult, error) {
			req.SingleUse()
			if _, err := req.Elicit("ok", &protocol.ElicitParams{Message: "Run?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)}); err != nil {
				return nil, err
			}
			onceRuns.Add(1)
			return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: name + " ran"}}}, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable.NewHandler(srv, &streamable.Options{Events: st.Events(), KeepAlive: time.Second}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{addr: ln.Addr().String(), srv: srv, st: st, hs: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	done := make(chan struct{})
	go func() { defer close(done); _ = r.hs.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = r.hs.Shutdown(ctx)
		_ = r.hs.Close()
		<-done
		st.Close()
	})
	return r
}

const toolsChanged = "notifications/tools/list_changed"

// warm lets every replica's change-feed reader start before changes are
// announced.
func (c *cluster) warm(t *testing.T) {
	t.Helper()
	for _, r := range c.replicas {
		cl := newClient(t, r.addr)
		cl.initialize()
		cl.initialized()
	}
}

// TestInitializedOnAnotherReplica: initialize, notifications/initialized
// and the GET stream each land on a different replica (nginx, round
// robin); a change announced on any of them reaches the stream once.
func TestInitializedOnAnotherReplica(t *testing.T) {
	c := newCluster(t, 3, time.Minute)
	c.warm(t)
	for i := 0; i < 3; i++ {
		cl := newClient(t, c.nginx)
		cl.initialize()
		cl.initialized()
		s := cl.get("")
		time.Sleep(200 * time.Millisecond) // the stream is followed
		if code, body := cl.call(1, "change"); code != 200 {
			t.Fatalf("tools/call: %d %s", code, body)
		}
		s.expect(t, []string{toolsChanged}, 10*time.Second, 500*time.Millisecond)
		s.close()
	}
}

// TestDeleteOnOneReplica: a DELETE through nginx ends the session on every
// replica.
func TestDeleteOnOneReplica(t *testing.T) {
	c := newCluster(t, 3, time.Minute)
	cl := newClient(t, c.nginx)
	cl.initialize()
	cl.initialized()
	// Every replica has served the session, so every one holds a copy.
	for i := 0; i < 3; i++ {
		if code, body := cl.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)); code != 200 {
			t.Fatalf("ping: %d %s", code, body)
		}
	}
	resp, err := cl.request("DELETE", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 && resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	for _, r := range c.replicas {
		direct := newClient(t, r.addr)
		direct.sid = cl.sid
		if code, _ := direct.post(`{"jsonrpc":"2.0","id":9,"method":"ping"}`); code != 404 {
			t.Errorf("ping on %s after DELETE: %d, want 404", r.addr, code)
		}
	}
}

// TestIdleOnOneBusyOnAnother: a session used only on replica B is not
// expired by replica A, where it began and has been idle since.
func TestIdleOnOneBusyOnAnother(t *testing.T) {
	const idle = 2 * time.Second
	c := newCluster(t, 3, idle)
	a := newClient(t, c.replicas[0].addr)
	a.initialize()
	a.initialized()
	b := newClient(t, c.replicas[1].addr)
	b.sid = a.sid
	for end := time.Now().Add(3 * idle); time.Now().Before(end); time.Sleep(idle / 5) {
		if code, body := b.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != 200 {
			t.Fatalf("ping on B: %d %s", code, body)
		}
	}
	if code, body := a.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != 200 {
		t.Fatalf("ping on A after the session was busy on B: %d %s", code, body)
	}
	// Unused anywhere, it does expire.
	time.Sleep(idle + idle/2)
	if code, _ := newClientWith(t, c.replicas[2].addr, a.sid).post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); code != 404 {
		t.Fatalf("ping after the idle timeout: %d, want 404", code)
	}
}

// TestGetStreamResumesOnAnotherReplica: a dropped GET stream resumed with
// Last-Event-ID on another replica loses and repeats nothing.
func TestGetStreamResumesOnAnotherReplica(t *testing.T) {
	c := newCluster(t, 3, time.Minute)
	c.warm(t)
	cl := newClient(t, c.replicas[0].addr)
	cl.initialize()
	cl.initialized()
	s := cl.get("")
	time.Sleep(200 * time.Millisecond)
	for i := 0; i < 3; i++ {
		c.replicas[i].srv.NotifyToolsChanged()
	}
	got := s.expect(t, []string{toolsChanged, toolsChanged, toolsChanged}, 10*time.Second, 300*time.Millisecond)
	s.close()
	// Changes while no stream is open.
	c.replicas[1].srv.NotifyPromptsChanged()
	c.replicas[2].srv.NotifyResourcesChanged()
	other := newClientWith(t, c.replicas[1].addr, cl.sid)
	s2 := other.get(got[len(got)-1].id)
	resumed := s2.expect(t, []string{"notifications/prompts/list_changed", "notifications/resources/list_changed"}, 10*time.Second, 500*time.Millisecond)
	// The same stream goes on (its ids follow), not a new one.
	stream, _, _ := strings.Cut(got[0].id, "-")
	for i, e := range resumed {
		if want := fmt.Sprintf("%s-%d", stream, len(got)+i+1); e.id != want {
			t.Errorf("resumed event %d has id %q, want %q", i, e.id, want)
		}
	}
	c.replicas[2].srv.NotifyToolsChanged()
	s2.expect(t, []string{toolsChanged}, 10*time.Second, 500*time.Millisecond)
}

// TestChangeReachesEveryReplicaOnce: a tool-list change announced on
// replica 1 reaches streams followed on replicas 2 and 3 exactly once.
func TestChangeReachesEveryReplicaOnce(t *testing.T) {
	c := newCluster(t, 3, time.Minute)
	c.warm(t)
	var streams []*stream
	for _, r := range c.replicas[1:] {
		for j := 0; j < 2; j++ {
			cl := newClient(t, r.addr)
			cl.initialize()
			cl.initialized()
			streams = append(streams, cl.get(""))
		}
	}
	time.Sleep(300 * time.Millisecond)
	c.replicas[0].srv.NotifyToolsChanged()
	for _, s := range streams {
		s.expect(t, []string{toolsChanged}, 10*time.Second, 0)
	}
	time.Sleep(500 * time.Millisecond)
	for i, s := range streams {
		select {
		case e := <-s.events:
			t.Errorf("stream %d: a second message %s", i, e.data)
		default:
		}
	}
}

// TestSingleUseReplayedOnAnotherReplica: a single-use state accepted by one
// replica is refused by another.
func TestSingleUseReplayedOnAnotherReplica(t *testing.T) {
	p := redistest.Redis(t)
	var stores []*redis.Store
	for i := 0; i < 2; i++ {
		st, err := redis.Open(context.Background(), p.URL(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	ctx := context.Background()
	exp := time.Now().Add(time.Minute)
	if ok, err := stores[0].OnceStore().Use(ctx, "state-1", exp); !ok || err != nil {
		t.Fatalf("first use: %v %v", ok, err)
	}
	if ok, err := stores[1].OnceStore().Use(ctx, "state-1", exp); ok || err != nil {
		t.Fatalf("replay on another replica: %v %v, want refused", ok, err)
	}
}

// TestSingleUseReplayedThroughNginx: a modern client confirms a
// single-use call through nginx; the same confirmed request sent again
// lands on another replica (round robin) and is refused there, and the
// tool ran once.
func TestSingleUseReplayedThroughNginx(t *testing.T) {
	c := newCluster(t, 3, time.Minute)
	onceRuns.Store(0)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	post := func(body string) map[string]json.RawMessage {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+c.nginx+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "once")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%d %s: %v", resp.StatusCode, b, err)
		}
		return m
	}
	first := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"once","arguments":{},` + meta + `}}`)
	var ask struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(first["result"], &ask); err != nil || ask.ResultType != "input_required" || ask.RequestState == "" {
		t.Fatalf("first round: %s", first["result"])
	}
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"once","arguments":{},` +
		`"inputResponses":{"ok":{"action":"accept","content":{}}},"requestState":` + strconv.Quote(ask.RequestState) + `,` + meta + `}}`
	if got := post(retry); !strings.Contains(string(got["result"]), " ran") {
		t.Fatalf("confirmed round: %s %s", got["result"], got["error"])
	}
	for i := 0; i < 2; i++ { // round robin: the other two replicas
		got := post(retry)
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(got["error"], &e); err != nil || e.Code != protocol.CodeInvalidParams {
			t.Fatalf("replay %d: %s %s, want -32602", i+1, got["result"], got["error"])
		}
	}
	if n := onceRuns.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want once", n)
	}
}

// TestRedisRestart: while Redis is down, requests that need it fail with
// 503 and nothing panics; once it is back (empty), new sessions work and
// their streams get changes again.
func TestRedisRestart(t *testing.T) {
	c := newCluster(t, 2, time.Minute)
	cl := newClient(t, c.nginx)
	cl.initialize()
	cl.initialized()
	c.redis.Stop()
	if code, body := cl.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != 503 {
		t.Errorf("ping with Redis down: %d %s, want 503", code, body)
	}
	fresh := newClient(t, c.nginx)
	code, _ := fresh.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if code != 503 {
		t.Errorf("initialize with Redis down: %d, want 503", code)
	}
	c.redis.Restart(t)
	// The session was in the lost data: it is gone, and said so.
	if code, _ := cl.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != 404 {
		t.Errorf("ping after Redis came back empty: %d, want 404", code)
	}
	var s *stream
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := newClient(t, c.replicas[1].addr)
		n.initialize()
		n.initialized()
		s = n.get("")
		time.Sleep(300 * time.Millisecond)
		c.replicas[0].srv.NotifyToolsChanged()
		select {
		case e := <-s.events:
			if !strings.Contains(e.data, toolsChanged) {
				t.Fatalf("message %s", e.data)
			}
			return
		case <-time.After(2 * time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatal("changes do not reach streams after Redis came back")
		}
		s.close()
	}
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { goredis.SetLogger(quiet{}) }

// TestCancelOnAnotherReplica: notifications/cancelled POSTed to replica 2
// cancels the request replica 1 serves.
func TestCancelOnAnotherReplica(t *testing.T) {
	c := newCluster(t, 3, time.Minute)
	a := newClient(t, c.replicas[0].addr)
	a.initialize()
	a.initialized()
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := a.request("POST", `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"block","arguments":{}}}`, nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	time.Sleep(300 * time.Millisecond) // the call is in flight on replica 1
	b := newClientWith(t, c.replicas[1].addr, a.sid)
	if code, body := b.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1","reason":"changed my mind"}}`); code != 202 {
		t.Fatalf("cancel on replica 2: %d %s", code, body)
	}
	select {
	case who := <-cancelled:
		if who != "r1" {
			t.Errorf("cancelled on %s, want r1", who)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call on replica 1 was not cancelled")
	}
	<-done
}

// TestAnswerOnAnotherReplica: the client's answer to an elicitation that
// replica 1 sent reaches replica 1 over the bus when it is POSTed to
// replica 2, and the tool call completes on replica 1's stream.
func TestAnswerOnAnotherReplica(t *testing.T) {
	c := newCluster(t, 3, time.Minute)
	a := newClient(t, c.replicas[0].addr)
	code, body := a.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if code != 200 || a.sid == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	a.initialized()
	resp, err := a.request("POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask","arguments":{}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := newSSE(resp.Body)
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	for ask.Method != "elicitation/create" {
		e, ok := r.next()
		if !ok {
			t.Fatal("the stream ended before the elicitation")
		}
		_ = json.Unmarshal([]byte(e.data), &ask)
	}
	if !strings.Contains(string(ask.ID), "mcpkit-r1-") {
		t.Errorf("request id %s does not name replica r1", ask.ID)
	}
	b := newClientWith(t, c.replicas[1].addr, a.sid)
	if code, body := b.post(`{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`); code != 202 {
		t.Fatalf("answer on replica 2: %d %s", code, body)
	}
	for {
		e, ok := r.next()
		if !ok {
			t.Fatal("the stream ended without the result")
		}
		if strings.Contains(e.data, `"id":7`) {
			if !strings.Contains(e.data, "r1 heard accept Ada") {
				t.Fatalf("result %s", e.data)
			}
			return
		}
	}
}
