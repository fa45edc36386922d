package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// rawTools is a tools/list page with tools whose x-mcp-header annotations
// break the rules beside valid ones; a server would refuse to register
// the invalid ones.
const rawTools = `{"resultType":"complete","tools":[
{"name":"good","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
{"name":"plain","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}},
{"name":"bad_type","inputSchema":{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"Obj"}}}},
{"name":"bad_duplicate","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"string","x-mcp-header":"dup"}}}},
{"name":"bad_unreachable","inputSchema":{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}},
{"name":"bad_token","inputSchema":{"type":"object","properties":{"s":{"type":"string","x-mcp-header":"Not A Token"}}}}
],"ttlMs":0}`

// syncWriter is a log destination safe for concurrent writes.
type syncWriter struct{ syncBuffer }

// compactTools is rawTools on one line, for stdio framing.
func compactTools(t *testing.T) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(rawTools)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestListToolsDropsInvalidHeaderAnnotations(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	hs.rec.intercept = func(w http.ResponseWriter, r *http.Request, body []byte, method string) bool {
		if method != protocol.MethodToolsList {
			return false
		}
		m, err := jsonrpc.Decode(body)
		if err != nil {
			t.Errorf("tools/list body: %v", err)
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(jsonrpc.AppendResult(nil, m.ID, json.RawMessage(rawTools)))
		return true
	}
	logs := &syncWriter{}
	c := newClient(&client.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s, err := c.Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Tools); !slices.Equal(got, []string{"good", "plain"}) {
		t.Errorf("tools %v, want [good plain]", got)
	}
	out := logs.String()
	for _, bad := range []string{"bad_type", "bad_duplicate", "bad_unreachable", "bad_token"} {
		if !strings.Contains(out, "tool="+bad) {
			t.Errorf("no warning for %s in %q", bad, out)
		}
	}

	// Over stdio no header is carried: the same list is kept whole.
	stub := &stubStdio{}
	conn := stub.serve(t, func(m *jsonrpc.Message) []byte {
		if m.Method == protocol.MethodToolsList {
			return jsonrpc.AppendResult(nil, m.ID, compactTools(t))
		}
		return legacyInitialize(m)
	})
	ss, err := newClient(&client.Options{Era: client.EraLegacy}).Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	res, err = ss.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 6 {
		t.Errorf("over stdio %d tools listed, want all 6: %v", len(res.Tools), names(res.Tools))
	}
}

func TestParamHeaders(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	core, both := everythingServers(t, nil, nil)
	core.AddToolHandler(&protocol.Tool{Name: "typed", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"n":{"type":"integer","x-mcp-header":"N"},
		"flag":{"type":"boolean","x-mcp-header":"Flag"},
		"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`)},
		func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
			return server.TextResult(string(req.Arguments)), nil
		})
	hs := serveHTTP(t, both)
	s, err := newClient(nil).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListTools(ctx, &client.ListOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool string
		args map[string]any
		want map[string]string // Mcp-Param-* headers; "" means absent
		text string
	}{
		{"test_custom_header", map[string]any{"region": "us-west-1"}, map[string]string{"Mcp-Param-Region": "us-west-1"}, "Region: us-west-1"},
		{"test_custom_header", map[string]any{"region": "東京"}, map[string]string{"Mcp-Param-Region": "=?base64?5p2x5Lqs?="}, "Region: 東京"},
		{"test_custom_header", map[string]any{"region": " padded"}, map[string]string{"Mcp-Param-Region": "=?base64?IHBhZGRlZA==?="}, "Region:  padded"},
		{"typed", map[string]any{"n": 42, "flag": true, "where": map[string]any{"zone": "eu"}},
			map[string]string{"Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Zone": "eu"}, ""},
		{"typed", map[string]any{"flag": false},
			map[string]string{"Mcp-Param-N": "", "Mcp-Param-Flag": "false", "Mcp-Param-Zone": ""}, ""},
	}
	for _, tc := range cases {
		before := len(hs.rec.posts(protocol.MethodToolsCall))
		res, err := s.CallTool(ctx, tc.tool, tc.args, nil)
		if err != nil {
			t.Errorf("%s %v: %v", tc.tool, tc.args, err)
			continue
		}
		if tc.text != "" && textOf(t, res) != tc.text {
			t.Errorf("%s: result %q, want %q", tc.tool, textOf(t, res), tc.text)
		}
		calls := hs.rec.posts(protocol.MethodToolsCall)[before:]
		if len(calls) != 1 {
			t.Fatalf("%s: %d tools/call requests, want 1", tc.tool, len(calls))
		}
		h := calls[0].Header
		for k, want := range tc.want {
			if got := h.Get(k); got != want {
				t.Errorf("%s %v: %s = %q, want %q", tc.tool, tc.args, k, got, want)
			}
		}
		if h.Get("Mcp-Method") != protocol.MethodToolsCall || h.Get("Mcp-Name") != tc.tool {
			t.Errorf("%s: Mcp-Method %q, Mcp-Name %q", tc.tool, h.Get("Mcp-Method"), h.Get("Mcp-Name"))
		}
	}
}

// A session that calls a header tool before listing learns its headers
// from the server's refusal and retries once.
func TestParamHeadersRelist(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	s, err := newClient(nil).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "test_custom_header", map[string]any{"region": "ap"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if textOf(t, res) != "Region: ap" {
		t.Errorf("result %q", textOf(t, res))
	}
	calls := hs.rec.posts(protocol.MethodToolsCall)
	if len(calls) != 2 || hs.rec.count(protocol.MethodToolsList) != 1 {
		t.Fatalf("%d tools/call, %d tools/list; want 2 and 1", len(calls), hs.rec.count(protocol.MethodToolsList))
	}
	if calls[0].Header.Get("Mcp-Param-Region") != "" || calls[1].Header.Get("Mcp-Param-Region") != "ap" {
		t.Errorf("Mcp-Param-Region %q then %q", calls[0].Header.Get("Mcp-Param-Region"), calls[1].Header.Get("Mcp-Param-Region"))
	}
}
