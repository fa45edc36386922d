package check

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
)

// addTool appends a tool definition to modern tools/list results.
func addTool(def string) func(e *exchange) {
	return func(e *exchange) {
		res := e.result()
		if e.method != "tools/list" || !e.modern || res == nil {
			return
		}
		var t any
		_ = json.Unmarshal([]byte(def), &t)
		res["tools"] = append(res["tools"].([]any), t)
	}
}

// dropMember removes a member from every modern result.
func dropMember(name string) func(e *exchange) {
	return func(e *exchange) {
		if res := e.result(); res != nil && e.modern {
			delete(res, name)
		}
	}
}

// TestFixtures checks servers that each break one rule: exactly the checks
// of that rule change status, every other check keeps the status it has
// against the unaltered everything-server.
func TestFixtures(t *testing.T) {
	base := statuses(runCheck(t, everythingHandler(t, true, nil), echoCall))
	allLists := func(s Status, more ...string) map[string]Status {
		m := map[string]Status{"list.tools.result": s, "list.resources.result": s, "list.resource-templates.result": s, "list.prompts.result": s}
		for _, id := range more {
			m[id] = s
		}
		return m
	}
	var calls atomic.Int64
	tests := []struct {
		name   string
		before func(w http.ResponseWriter, e *exchange) bool
		after  func(e *exchange)
		want   map[string]Status
	}{
		{
			name:  "results without resultType",
			after: dropMember("resultType"),
			want:  allLists(Fail, "discover.result-type", "resources.read", "call.result"),
		},
		{
			name:  "results without ttlMs",
			after: dropMember("ttlMs"),
			want:  allLists(Fail, "discover.ttl", "resources.read"),
		},
		{
			name: "mismatched Mcp-Name accepted",
			before: func(w http.ResponseWriter, e *exchange) bool {
				if e.req.Header.Get("Mcp-Name") != "" {
					e.req.Header.Del("Mcp-Name")
					e.req.Header.Set("Mcp-Name", bodyName(e))
				}
				return false
			},
			want: map[string]Status{"http.name-header-mismatch": Fail},
		},
		{
			name: "any Origin accepted",
			before: func(w http.ResponseWriter, e *exchange) bool {
				e.req.Header.Del("Origin")
				return false
			},
			want: map[string]Status{"http.origin-rejected": Fail},
		},
		{
			name: "unsupported version answered -32602",
			before: func(w http.ResponseWriter, e *exchange) bool {
				if e.req.Header.Get("MCP-Protocol-Version") != "1900-01-01" {
					return false
				}
				writeJSON(w, http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": -32602, "message": "bad version"}})
				return true
			},
			want: map[string]Status{"version.unsupported": Fail},
		},
		{
			name: "unsupported version answered HTTP 200",
			after: func(e *exchange) {
				if e.req.Header.Get("MCP-Protocol-Version") == "1900-01-01" {
					e.status = http.StatusOK
				}
			},
			want: map[string]Status{"http.unsupported-version": Fail},
		},
		{
			name:  "tool with an external $ref",
			after: addTool(`{"name":"ext_ref","inputSchema":{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}}`),
			want:  map[string]Status{"tools.schemas": Fail},
		},
		{
			name:  "tool with an invalid x-mcp-header",
			after: addTool(`{"name":"bad_header","inputSchema":{"type":"object","properties":{"a":{"type":"array","x-mcp-header":"A"}}}}`),
			want:  map[string]Status{"tools.x-mcp-header": Fail},
		},
		{
			name:  "tool with a non-object inputSchema",
			after: addTool(`{"name":"not_object","inputSchema":{"type":"string"}}`),
			want:  map[string]Status{"tools.input-schema": Fail},
		},
		{
			name:  "tool name with a space",
			after: addTool(`{"name":"bad name","inputSchema":{"type":"object"}}`),
			want:  map[string]Status{"tools.names": Warn},
		},
		{
			name: "nondeterministic tool order",
			after: func(e *exchange) {
				res := e.result()
				if e.method != "tools/list" || !e.modern || res == nil || calls.Add(1)%2 == 0 {
					return
				}
				ts := res["tools"].([]any)
				for i, j := 0, len(ts)-1; i < j; i, j = i+1, j-1 {
					ts[i], ts[j] = ts[j], ts[i]
				}
			},
			want: map[string]Status{"list.tools.order": Fail},
		},
		{
			name: "no serverInfo",
			after: func(e *exchange) {
				if res := e.result(); e.method == "server/discover" && res != nil {
					delete(res, "_meta")
				}
			},
			want: map[string]Status{"discover.server-info": Warn},
		},
		{
			name: "unknown method answered HTTP 200",
			after: func(e *exchange) {
				if e.method == "mcpkit-check/unknown" {
					e.status = http.StatusOK
				}
			},
			want: map[string]Status{"http.unknown-method": Fail},
		},
		{
			name: "error bodies as text/plain",
			before: func(w http.ResponseWriter, e *exchange) bool {
				if e.req.Header.Get("Content-Type") != "text/plain" {
					return false
				}
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusUnsupportedMediaType)
				_, _ = w.Write([]byte("unsupported media type"))
				return true
			},
			want: map[string]Status{"http.error-bodies": Fail},
		},
		{
			name: "legacy results with resultType",
			after: func(e *exchange) {
				if res := e.result(); res != nil && !e.modern && e.method == "tools/list" {
					res["resultType"] = "complete"
				}
			},
			want: map[string]Status{"legacy.no-result-type": Fail},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &rewriter{h: everythingHandler(t, true, nil), before: tc.before, after: tc.after}
			rep := runCheck(t, h, echoCall)
			assertStatuses(t, rep, func(id string) Status {
				if s, ok := tc.want[id]; ok {
					return s
				}
				return base[id]
			})
		})
	}
}

// bodyName returns the value the request body names (tool name or URI).
func bodyName(e *exchange) string {
	var p struct {
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	b, _ := readBody(e.req)
	_ = json.Unmarshal(b, &p)
	if p.Params.Name != "" {
		return p.Params.Name
	}
	return p.Params.URI
}
