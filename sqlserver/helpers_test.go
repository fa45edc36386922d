package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// env is one database under test, on either dialect, seeded with
//
//	t(id primary key, name text not null) holding 3 rows
//	u(id primary key, t_id references t(id))
type env struct {
	name   string
	opts   Options // Path or DSN set
	write  *sql.DB // a separate writable connection
	series func(n int) string
	slow   string // a statement that runs for many seconds
	// refusal and multi are the messages refusing a write and a script.
	refusal, multi string
	// PostgreSQL: the DSNs of the writer role (used with AllowWrites) and
	// of the superuser, both with the test's schema as search_path.
	writerDSN, adminDSN string
}

// open opens e's database with the given limits on top of e.opts.
func (e *env) open(t testing.TB, mod func(*Options)) (*DB, *server.Server) {
	t.Helper()
	o := e.opts
	if mod != nil {
		mod(&o)
	}
	if o.AllowWrites && e.writerDSN != "" && o.DSN == e.opts.DSN {
		o.DSN = e.writerDSN
	}
	d, err := Open(context.Background(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	s := server.New(protocol.Implementation{Name: "sql-test", Version: "1.0.0"}, nil)
	d.Register(s)
	return d, s
}

func (e *env) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := e.write.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// collector records the notifications of one request.
type collector struct {
	mu   sync.Mutex
	msgs []string
}

func (c *collector) Notify(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, string(b))
	return nil
}

func (c *collector) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

const elicitCaps = `{"elicitation":{}}`

// wireResult is a result as the wire carries it.
type wireResult struct {
	ResultType        string                     `json:"resultType"`
	Content           []map[string]any           `json:"content"`
	StructuredContent json.RawMessage            `json:"structuredContent"`
	IsError           bool                       `json:"isError"`
	InputRequests     map[string]json.RawMessage `json:"inputRequests"`
	RequestState      string                     `json:"requestState"`
	Contents          []map[string]any           `json:"contents"`
	Resources         []map[string]any           `json:"resources"`
	Tools             []map[string]any           `json:"tools"`
	Completion        *protocol.Completion       `json:"completion"`
	Messages          []map[string]any           `json:"messages"`
	TTLMs             int64                      `json:"ttlMs"`
	CacheScope        string                     `json:"cacheScope"`
}

func (r *wireResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if s, ok := c["text"].(string); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// requestMessage is a request of the 2026-07-28 era: params with the
// _meta every request carries (a "progressToken" member goes into it).
func requestMessage(t testing.TB, method string, params map[string]any) *jsonrpc.Message {
	t.Helper()
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	meta := map[string]any{
		protocol.MetaProtocolVersion:    "2026-07-28",
		protocol.MetaClientCapabilities: json.RawMessage(elicitCaps),
	}
	if tok, ok := p["progressToken"]; ok {
		meta[protocol.MetaProgressToken] = tok
		delete(p, "progressToken")
	}
	p["_meta"] = meta
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: method, Params: b}
}

// handle sends one request to s with a modern _meta and decodes the result.
func handle(t testing.TB, ctx context.Context, s *server.Server, n *collector, method string, params map[string]any) (*wireResult, *jsonrpc.Error) {
	t.Helper()
	if n == nil {
		n = &collector{}
	}
	resp := serveOne(s, ctx, requestMessage(t, method, params), n)
	if resp == nil {
		t.Fatalf("%s: no response", method)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	var r wireResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		t.Fatalf("%s: %v in %s", method, err, resp.Result)
	}
	return &r, nil
}

func mustHandle(t testing.TB, s *server.Server, method string, params map[string]any) *wireResult {
	t.Helper()
	r, e := handle(t, context.Background(), s, nil, method, params)
	if e != nil {
		t.Fatalf("%s: error %d %s", method, e.Code, e.Message)
	}
	return r
}

func callTool(t testing.TB, s *server.Server, name string, args map[string]any) *wireResult {
	t.Helper()
	return mustHandle(t, s, "tools/call", map[string]any{"name": name, "arguments": args})
}

// wireQuery is the query tool's structuredContent as a client reads it.
type wireQuery struct {
	Columns    []resultColumn `json:"columns"`
	Rows       [][]any        `json:"rows"`
	RowCount   int            `json:"row_count"`
	Offset     int            `json:"offset"`
	Truncated  bool           `json:"truncated"`
	NextCursor string         `json:"next_cursor"`
	Notice     string         `json:"notice"`
}

func decodeQuery(t *testing.T, r *wireResult) wireQuery {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", r.text())
	}
	var q wireQuery
	if err := json.Unmarshal(r.StructuredContent, &q); err != nil {
		t.Fatalf("structuredContent %s: %v", r.StructuredContent, err)
	}
	return q
}

// waitEvent waits for an event on ch that ok accepts.
func waitEvent(t *testing.T, ch <-chan server.Event, within time.Duration, ok func(server.Event) bool) server.Event {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case e, open := <-ch:
			if !open {
				t.Fatal("feed closed")
			}
			if ok(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no matching event within %s", within)
		}
	}
}

// serveOne serves one request as a transport does and makes its response.
func serveOne(s *server.Server, ctx context.Context, msg *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := s.Serve(ctx, &transport.Request{Message: msg, Notifier: n, Cancel: cancel})
	return transport.Respond(ctx, msg.ID, res, err)
}
