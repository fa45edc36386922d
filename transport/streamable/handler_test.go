package streamable

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// pipelineCase is one request through the validation pipeline.
type pipelineCase struct {
	name   string
	method string // HTTP method; POST when empty
	body   string
	opts   *Options
	edit   func(h http.Header) // applied to the standard headers
	prep   func(r *http.Request) *http.Request
	status int
	code   int64  // expected JSON-RPC error code; 0 expects a result
	id     string // expected raw id of an error; "" expects none
	check  func(t *testing.T, rec *httptest.ResponseRecorder)
}

func set(kv ...string) func(http.Header) {
	return func(h http.Header) {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				h.Del(kv[i])
				continue
			}
			h.Set(kv[i], kv[i+1])
		}
	}
}

func del(keys ...string) func(http.Header) {
	return func(h http.Header) {
		for _, k := range keys {
			h.Del(k)
		}
	}
}

func runPipeline(t *testing.T, cases []pipelineCase) {
	t.Helper()
	srv := newTestServer()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHandler(srv, tc.opts)
			r := newPost(tc.body)
			if tc.method != "" {
				r.Method = tc.method
			}
			if tc.edit != nil {
				tc.edit(r.Header)
			}
			if tc.prep != nil {
				r = tc.prep(r)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code != 0 {
				checkErrorBody(t, rec.Header(), rec.Body.Bytes(), tc.code, tc.id)
			} else if tc.status == http.StatusOK {
				checkResult(t, rec)
			}
			if tc.check != nil {
				tc.check(t, rec)
			}
		})
	}
}

// checkResult asserts a JSON (or single-event SSE) response carrying a
// result, not an error.
func checkResult(t *testing.T, rec *httptest.ResponseRecorder) wireError {
	t.Helper()
	body := rec.Body.String()
	switch ct := rec.Header().Get("Content-Type"); ct {
	case "application/json":
	case "text/event-stream":
		events := parseSSE(t, body)
		if len(events) == 0 {
			t.Fatalf("SSE response without events")
		}
		body = events[len(events)-1]
	default:
		t.Fatalf("Content-Type = %q", ct)
	}
	var m wireError
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, body)
	}
	if m.Error != nil || m.Result == nil {
		t.Fatalf("want a result, got %s", body)
	}
	return m
}

func onLocalAddr(ip string) func(r *http.Request) *http.Request {
	return func(r *http.Request) *http.Request {
		addr := &net.TCPAddr{IP: net.ParseIP(ip), Port: 8080}
		return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	}
}

func withHost(host string) func(r *http.Request) *http.Request {
	return func(r *http.Request) *http.Request { r.Host = host; return r }
}

func TestPipelineHostAndOrigin(t *testing.T) {
	list := rpc("1", protocol.MethodToolsList, "")
	runPipeline(t, []pipelineCase{
		{name: "host evil", body: list, prep: withHost("evil.example.com"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "host evil with port", body: list, prep: withHost("evil.example.com:8080"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "host localhost", body: list, prep: withHost("localhost"), status: 200},
		{name: "host localhost port", body: list, prep: withHost("localhost:3000"), status: 200},
		{name: "host upper case", body: list, prep: withHost("LOCALHOST:3000"), status: 200},
		{name: "host 127.0.0.1", body: list, prep: withHost("127.0.0.1:9"), status: 200},
		{name: "host [::1]", body: list, prep: withHost("[::1]"), status: 200},
		{name: "host [::1] port", body: list, prep: withHost("[::1]:65535"), status: 200},
		{name: "host 127.0.0.1 lookalike", body: list, prep: withHost("127.0.0.1.evil.example.com"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "host localhost lookalike", body: list, prep: withHost("localhost.evil.example.com"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "host empty", body: list, prep: withHost(""), status: 403, code: protocol.CodeInvalidRequest},
		{name: "allowed host", body: list, opts: &Options{AllowedHosts: []string{"mcp.example.com"}}, prep: withHost("mcp.example.com:443"), status: 200},
		{name: "allowed host and port", body: list, opts: &Options{AllowedHosts: []string{"MCP.example.com:8443"}}, prep: withHost("mcp.example.com:8443"), status: 200},
		{name: "allowed host other port", body: list, opts: &Options{AllowedHosts: []string{"mcp.example.com:8443"}}, prep: withHost("mcp.example.com:9443"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "host not checked off loopback", body: list, prep: func(r *http.Request) *http.Request {
			r.Host = "evil.example.com"
			return onLocalAddr("192.0.2.7")(r)
		}, status: 200},
		{name: "host checked on loopback listener", body: list, prep: func(r *http.Request) *http.Request {
			r.Host = "evil.example.com"
			return onLocalAddr("127.0.0.1")(r)
		}, status: 403, code: protocol.CodeInvalidRequest},
		{name: "host checked on ipv6 loopback listener", body: list, prep: func(r *http.Request) *http.Request {
			r.Host = "evil.example.com"
			return onLocalAddr("::1")(r)
		}, status: 403, code: protocol.CodeInvalidRequest},

		{name: "origin absent", body: list, edit: del("Origin"), status: 200},
		{name: "origin localhost", body: list, edit: set("Origin", "http://localhost:3000"), status: 200},
		{name: "origin 127.0.0.1 https", body: list, edit: set("Origin", "https://127.0.0.1"), status: 200},
		{name: "origin [::1]", body: list, edit: set("Origin", "http://[::1]:8080"), status: 200},
		{name: "origin evil", body: list, edit: set("Origin", "http://evil.example.com"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "origin null", body: list, edit: set("Origin", "null"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "origin other scheme", body: list, edit: set("Origin", "file://localhost"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "origin lookalike", body: list, edit: set("Origin", "http://localhost.evil.example.com"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "origin allowed", body: list, opts: &Options{AllowedOrigins: []string{"https://app.example.com/"}}, edit: set("Origin", "https://APP.example.com"), status: 200},
		{name: "origin not in list", body: list, opts: &Options{AllowedOrigins: []string{"https://app.example.com"}}, edit: set("Origin", "https://app.example.com:8443"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "origin any", body: list, opts: &Options{AllowedOrigins: []string{"*"}}, edit: set("Origin", "https://anything.example"), status: 200},
		{name: "rebinding attack", body: list, prep: withHost("evil.example.com"), edit: set("Origin", "http://evil.example.com"), status: 403, code: protocol.CodeInvalidRequest},
		{name: "origin checked before method", method: http.MethodGet, body: list, edit: set("Origin", "http://evil.example.com"), status: 403, code: protocol.CodeInvalidRequest},
	})
}

func TestPipelineHTTPLayer(t *testing.T) {
	list := rpc("1", protocol.MethodToolsList, "")
	allowPost := func(t *testing.T, rec *httptest.ResponseRecorder) {
		if got := rec.Header().Get("Allow"); got != http.MethodPost {
			t.Errorf("Allow = %q, want POST", got)
		}
	}
	runPipeline(t, []pipelineCase{
		{name: "GET", method: http.MethodGet, body: list, status: 405, code: protocol.CodeInvalidRequest, check: allowPost},
		{name: "DELETE", method: http.MethodDelete, body: list, status: 405, code: protocol.CodeInvalidRequest, check: allowPost},
		{name: "PUT", method: http.MethodPut, body: list, status: 405, code: protocol.CodeInvalidRequest, check: allowPost},
		{name: "session headers ignored", body: list, edit: set("Mcp-Session-Id", "abc", "Last-Event-ID", "7"), status: 200, check: func(t *testing.T, rec *httptest.ResponseRecorder) {
			if v := rec.Header().Get("Mcp-Session-Id"); v != "" {
				t.Errorf("Mcp-Session-Id echoed: %q", v)
			}
		}},
		{name: "content type missing", body: list, edit: del("Content-Type"), status: 415, code: protocol.CodeInvalidRequest},
		{name: "content type text/plain", body: list, edit: set("Content-Type", "text/plain"), status: 415, code: protocol.CodeInvalidRequest},
		{name: "content type malformed", body: list, edit: set("Content-Type", "application/json;;="), status: 415, code: protocol.CodeInvalidRequest},
		{name: "content type with charset", body: list, edit: set("Content-Type", "application/json; charset=utf-8"), status: 200},
		{name: "content type upper case", body: list, edit: set("Content-Type", "Application/JSON"), status: 200},
		{name: "accept image/png", body: list, edit: set("Accept", "image/png"), status: 406, code: protocol.CodeInvalidRequest},
		{name: "accept both refused", body: list, edit: set("Accept", "application/json;q=0, text/event-stream;q=0"), status: 406, code: protocol.CodeInvalidRequest},
		{name: "body too large", body: list, opts: &Options{MaxBodyBytes: 32}, status: 413, code: protocol.CodeInvalidRequest},
		{name: "body at limit", body: list, opts: &Options{MaxBodyBytes: int64(len(list))}, status: 200},
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":1,`, status: 400, code: protocol.CodeParseError, id: "null"},
		{name: "empty body", body: ``, status: 400, code: protocol.CodeParseError, id: "null"},
		{name: "batch", body: `[` + list + `]`, status: 400, code: protocol.CodeInvalidRequest, id: "null"},
		{name: "not an object", body: `"tools/list"`, status: 400, code: protocol.CodeInvalidRequest, id: "null"},
		{name: "wrong jsonrpc version echoes id", body: `{"jsonrpc":"1.0","id":9,"method":"tools/list"}`, status: 400, code: protocol.CodeInvalidRequest, id: "9"},
		{name: "response body", body: `{"jsonrpc":"2.0","id":1,"result":{}}`, status: 400, code: protocol.CodeInvalidRequest},
		{name: "error response body", body: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`, status: 400, code: protocol.CodeInvalidRequest},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: 202, check: emptyBody},
		{name: "notification without headers", body: `{"jsonrpc":"2.0","method":"notifications/x"}`, edit: del(HeaderProtocolVersion, HeaderMethod), status: 202, check: emptyBody},
	})
}

func emptyBody(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Body.Len() != 0 {
		t.Errorf("body = %q, want empty", rec.Body)
	}
}

func TestPipelineProtocolHeaders(t *testing.T) {
	list := rpc("1", protocol.MethodToolsList, "")
	noMeta := `{"jsonrpc":"2.0","id":101,"method":"server/discover","params":{}}`
	noParams := `{"jsonrpc":"2.0","id":"x","method":"server/discover"}`
	noMetaVersion := `{"jsonrpc":"2.0","id":102,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`
	noCaps := `{"jsonrpc":"2.0","id":104,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	v999 := `{"jsonrpc":"2.0","id":301,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`
	unsupported := func(t *testing.T, rec *httptest.ResponseRecorder) {
		var e wireError
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		var data protocol.UnsupportedVersionData
		if err := json.Unmarshal(e.Error.Data, &data); err != nil {
			t.Fatalf("data: %v", err)
		}
		if len(data.Supported) != 1 || data.Supported[0] != protocol.Version2026_07_28 || data.Requested != "v999.0.0" {
			t.Errorf("data = %+v", data)
		}
	}
	runPipeline(t, []pipelineCase{
		{name: "version header missing", body: list, edit: del(HeaderProtocolVersion), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "version header differs from _meta", body: list, edit: set(HeaderProtocolVersion, "2025-11-25"), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "version header with spaces", body: list, edit: set(HeaderProtocolVersion, " 2026-07-28\t"), status: 200},
		{name: "_meta missing", body: noMeta, status: 400, code: protocol.CodeInvalidParams, id: "101"},
		{name: "params missing", body: noParams, status: 400, code: protocol.CodeInvalidParams, id: `"x"`},
		{name: "_meta without version", body: noMetaVersion, status: 400, code: protocol.CodeInvalidParams, id: "102"},
		{name: "_meta without capabilities", body: noCaps, status: 400, code: protocol.CodeInvalidParams, id: "104"},
		{name: "unsupported version", body: v999, edit: set(HeaderProtocolVersion, "v999.0.0"), status: 400, code: protocol.CodeUnsupportedProtocolVersion, id: "301", check: unsupported},
		{name: "mismatch before unsupported", body: v999, status: 400, code: protocol.CodeHeaderMismatch, id: "301"},
		{name: "method header missing", body: list, edit: del(HeaderMethod), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "method header mismatched", body: list, edit: set(HeaderMethod, "prompts/list"), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "method header wrong case", body: list, edit: set(HeaderMethod, "TOOLS/LIST"), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "method header with spaces", body: list, edit: set(HeaderMethod, "  tools/list "), status: 200},
		{name: "string id echoed", body: rpc(`"req-1"`, protocol.MethodToolsList, ""), edit: del(HeaderMethod), status: 400, code: protocol.CodeHeaderMismatch, id: `"req-1"`},
		{name: "unknown method", body: rpc("601", "unknown/method", ""), status: 404, code: protocol.CodeMethodNotFound, id: "601"},
		{name: "initialize", body: rpc("500", protocol.MethodInitialize, ""), status: 404, code: protocol.CodeMethodNotFound, id: "500"},
		{name: "ping", body: rpc("500", protocol.MethodPing, ""), status: 404, code: protocol.CodeMethodNotFound, id: "500"},
		{name: "resources/list without resources", body: rpc("7", protocol.MethodResourcesList, ""), status: 404, code: protocol.CodeMethodNotFound, id: "7"},
	})
}

func TestPipelineNameHeader(t *testing.T) {
	fixed := callBody("1", "fixed", "{}")
	runPipeline(t, []pipelineCase{
		{name: "name matches", body: fixed, status: 200},
		{name: "name missing", body: fixed, edit: del(HeaderName), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "name mismatched", body: fixed, edit: set(HeaderName, "wrong_tool_name"), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "name wrong case", body: fixed, edit: set(HeaderName, "FIXED"), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "name surrounding spaces", body: fixed, edit: set(HeaderName, "  fixed  "), status: 200},
		{name: "name surrounding tabs", body: fixed, edit: set(HeaderName, "\tfixed\t"), status: 200},
		{name: "name base64", body: fixed, edit: set(HeaderName, "=?base64?Zml4ZWQ=?="), status: 200},
		{name: "name base64 mismatched", body: fixed, edit: set(HeaderName, "=?base64?ZWNobw==?="), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "name base64 missing padding", body: fixed, edit: set(HeaderName, "=?base64?Zml4ZWQ?="), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "name base64 bad chars", body: fixed, edit: set(HeaderName, "=?base64?Zml4!!ZWQ=?="), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "name base64 url alphabet", body: callBody("1", "\u00ff\u00fe", "{}"), edit: set(HeaderName, "=?base64?w7_Dvg==?="), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "name base64 std alphabet", body: callBody("1", "\u00ff\u00fe", "{}"), edit: set(HeaderName, "=?base64?w7/Dvg==?="), status: 200, code: protocol.CodeInvalidParams, id: "1"},
		{name: "name sentinel prefix only is literal", body: callBody("1", "=?base64?abc", "{}"), status: 200, code: protocol.CodeInvalidParams, id: "1"},
		{name: "name raw non-ASCII", body: callBody("1", "caf\u00e9", "{}"), edit: set(HeaderName, "caf\u00e9"), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "name control character", body: fixed, edit: set(HeaderName, "fix\x01ed"), status: 400, code: protocol.CodeHeaderMismatch, id: "1"},
		{name: "prompt name", body: rpc("2", protocol.MethodPromptsGet, `"name":"hello"`), status: 200},
		{name: "prompt name missing", body: rpc("2", protocol.MethodPromptsGet, `"name":"hello"`), edit: del(HeaderName), status: 400, code: protocol.CodeHeaderMismatch, id: "2"},
		{name: "resource uri mismatched", body: rpc("3", protocol.MethodResourcesRead, `"uri":"test://a"`), edit: set(HeaderName, "test://b"), status: 400, code: protocol.CodeHeaderMismatch, id: "3"},
		{name: "name not required for tools/list", body: rpc("4", protocol.MethodToolsList, ""), edit: del(HeaderName), status: 200},
		{name: "duplicate name member", body: rpc("5", protocol.MethodToolsCall, `"name":"fixed","name":"echo","arguments":{"text":"x"}`), edit: set(HeaderName, "fixed"), status: 400, code: protocol.CodeInvalidParams, id: "5"},
		// Names are exact, for the header check as for the server: "NAME"
		// is an unknown member, and the call is to "fixed", as the header says.
		{name: "name member in other case", body: rpc("6", protocol.MethodToolsCall, `"name":"fixed","NAME":"echo","arguments":{"text":"x"}`), edit: set(HeaderName, "fixed"), status: 200},
		{name: "name member in other case, header for it", body: rpc("7", protocol.MethodToolsCall, `"name":"fixed","NAME":"echo","arguments":{"text":"x"}`), edit: set(HeaderName, "echo"), status: 400, code: protocol.CodeHeaderMismatch, id: "7"},
		{name: "duplicate _meta version", body: `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`, status: 400, code: protocol.CodeInvalidParams, id: "8"},
	})
}

// regionCall is a tools/call of the region tool with arguments args and
// Mcp-Param-* headers from kv (name, value pairs; the prefix is added).
func regionCase(name, args string, status int, code int64, kv ...string) pipelineCase {
	return pipelineCase{
		name: name, body: callBody("200", "region", args), status: status, code: code,
		id: map[bool]string{true: "200", false: ""}[code != 0],
		edit: func(h http.Header) {
			for i := 0; i < len(kv); i += 2 {
				h.Set(HeaderParamPrefix+kv[i], kv[i+1])
			}
		},
	}
}

func TestPipelineParamHeaders(t *testing.T) {
	const bad = protocol.CodeHeaderMismatch
	runPipeline(t, []pipelineCase{
		regionCase("string matches", `{"region":"us-west1"}`, 200, 0, "Region", "us-west1"),
		regionCase("string mismatched", `{"region":"us-west1"}`, 400, bad, "Region", "eu-west1"),
		regionCase("string missing header", `{"region":"test-value"}`, 400, bad),
		regionCase("string null needs no header", `{"region":null}`, 200, 0),
		regionCase("string absent needs no header", `{}`, 200, 0),
		regionCase("arguments absent need no header", `null`, 200, 0),
		regionCase("header without argument", `{}`, 400, bad, "Region", "us-west1"),
		regionCase("header name in other case", `{"region":"us-west1"}`, 200, 0, "REGION", "us-west1"),
		regionCase("string with spaces trimmed", `{"region":"us-west1"}`, 200, 0, "Region", "  us-west1 "),
		regionCase("base64 decoded", `{"region":"Hello"}`, 200, 0, "Region", "=?base64?SGVsbG8=?="),
		regionCase("base64 missing padding", `{"region":"Hello"}`, 400, bad, "Region", "=?base64?SGVsbG8?="),
		regionCase("base64 bad chars", `{"region":"Hello"}`, 400, bad, "Region", "=?base64?SGVs!!!bG8=?="),
		regionCase("base64 looking literal", `{"region":"SGVsbG8="}`, 200, 0, "Region", "SGVsbG8="),
		regionCase("sentinel without suffix is literal", `{"region":"=?base64?SGVsbG8="}`, 200, 0, "Region", "=?base64?SGVsbG8="),
		regionCase("sentinel literal encoded", `{"region":"=?base64?literal?="}`, 200, 0, "Region", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
		regionCase("non-ASCII base64", `{"region":"Hello, 世界"}`, 200, 0, "Region", "=?base64?SGVsbG8sIOS4lueVjA==?="),
		regionCase("padded value base64", `{"region":" padded "}`, 200, 0, "Region", "=?base64?IHBhZGRlZCA=?="),
		regionCase("newline base64", `{"region":"line1\nline2"}`, 200, 0, "Region", "=?base64?bGluZTEKbGluZTI=?="),
		regionCase("non-ASCII raw", `{"region":"Hello, 世界"}`, 400, bad, "Region", "Hello, 世界"),
		regionCase("integer matches", `{"count":42}`, 200, 0, "Count", "42"),
		regionCase("integer negative", `{"count":-7}`, 200, 0, "Count", "-7"),
		regionCase("integer header 42.0", `{"count":42}`, 200, 0, "Count", "42.0"),
		regionCase("integer body 42.0", `{"count":42.0}`, 200, 0, "Count", "42"),
		regionCase("integer exponent", `{"count":42}`, 200, 0, "Count", "4.2e1"),
		regionCase("integer mismatched", `{"count":42}`, 400, bad, "Count", "43"),
		regionCase("integer hexadecimal", `{"count":42}`, 400, bad, "Count", "0x2A"),
		regionCase("integer underscore", `{"count":42000}`, 400, bad, "Count", "42_000"),
		regionCase("integer plus sign", `{"count":42}`, 400, bad, "Count", "+42"),
		regionCase("integer not a number", `{"count":42}`, 400, bad, "Count", "forty-two"),
		regionCase("integer missing header", `{"count":42}`, 400, bad),
		regionCase("boolean true", `{"dry":true}`, 200, 0, "Dry", "true"),
		regionCase("boolean false", `{"dry":false}`, 200, 0, "Dry", "false"),
		regionCase("boolean wrong case", `{"dry":true}`, 400, bad, "Dry", "True"),
		regionCase("boolean as number", `{"dry":true}`, 400, bad, "Dry", "1"),
		regionCase("boolean mismatched", `{"dry":false}`, 400, bad, "Dry", "true"),
		regionCase("nested matches", `{"place":{"zone":"z1"}}`, 200, 0, "Zone", "z1"),
		regionCase("nested missing header", `{"place":{"zone":"z1"}}`, 400, bad),
		regionCase("nested parent absent", `{"query":"q"}`, 200, 0),
		regionCase("all together", `{"region":"r","count":1,"dry":true,"place":{"zone":"z"},"query":"q"}`, 200, 0, "Region", "r", "Count", "1", "Dry", "true", "Zone", "z"),
		regionCase("one of several wrong", `{"region":"r","count":1,"dry":true}`, 400, bad, "Region", "r", "Count", "2", "Dry", "true"),
		regionCase("duplicate argument", `{"region":"us-west1","region":"eu-west1"}`, 400, protocol.CodeInvalidParams, "Region", "us-west1"),
		// Names are exact: "Region" is another argument, which the tool's
		// schema may allow or refuse; the header mirrors "region".
		regionCase("argument in other case", `{"region":"us-west1","Region":"eu-west1"}`, 200, 0, "Region", "us-west1"),
		regionCase("argument in other case, header for it", `{"region":"us-west1","Region":"eu-west1"}`, 400, bad, "Region", "eu-west1"),
		{name: "duplicate arguments member", body: rpc("201", protocol.MethodToolsCall, `"name":"region","arguments":{"region":"a"},"arguments":{"region":"b"}`), edit: set(HeaderParamPrefix+"Region", "a"), status: 400, code: protocol.CodeInvalidParams, id: "201"},
	})
}

// TestNotificationDelivery checks that a notification reaches the handler,
// except notifications/cancelled, which the transport keeps.
func TestNotificationDelivery(t *testing.T) {
	for _, tc := range []struct {
		method    string
		delivered bool
	}{
		{"notifications/initialized", true},
		{"notifications/roots/list_changed", true},
		{protocol.NotificationCancelled, false},
	} {
		t.Run(tc.method, func(t *testing.T) {
			stub := &stubHandler{notes: make(chan *jsonrpc.Message, 1), handle: func(context.Context, *jsonrpc.Message, transport.Notifier) *jsonrpc.Response {
				t.Error("Handle called for a notification")
				return nil
			}}
			rec := httptest.NewRecorder()
			NewHandler(stub, nil).ServeHTTP(rec, newPost(`{"jsonrpc":"2.0","method":"`+tc.method+`","params":{"requestId":1}}`))
			if rec.Code != http.StatusAccepted || rec.Body.Len() != 0 {
				t.Fatalf("got %d %q, want 202 and no body", rec.Code, rec.Body)
			}
			select {
			case m := <-stub.notes:
				if !tc.delivered {
					t.Errorf("%s was delivered", m.Method)
				} else if m.Method != tc.method {
					t.Errorf("delivered %s", m.Method)
				}
			default:
				if tc.delivered {
					t.Errorf("%s was not delivered", tc.method)
				}
			}
		})
	}
}

func TestAcceptNegotiation(t *testing.T) {
	list := rpc("1", protocol.MethodToolsList, "")
	for _, tc := range []struct {
		accept []string // nil: no Accept header
		want   string
	}{
		{nil, "application/json"},
		{[]string{"application/json"}, "application/json"},
		{[]string{"text/event-stream"}, "text/event-stream"},
		{[]string{"*/*"}, "application/json"},
		{[]string{"text/*"}, "text/event-stream"},
		{[]string{"application/*"}, "application/json"},
		{[]string{"application/json, text/event-stream"}, "application/json"},
		{[]string{"text/event-stream, application/json"}, "text/event-stream"},
		{[]string{"application/json;q=0, text/event-stream"}, "text/event-stream"},
		{[]string{"application/json;q=0.5, text/event-stream;q=0.9"}, "text/event-stream"},
		{[]string{"text/event-stream;q=0.5, application/json"}, "application/json"},
		{[]string{"text/event-stream", "application/json"}, "text/event-stream"},
		{[]string{"image/png, text/event-stream"}, "text/event-stream"},
		{[]string{"*/*;q=0.1, application/json;q=0"}, "text/event-stream"},
		{[]string{"*/*, text/*;q=0"}, "application/json"},
		{[]string{"*/*;q=0.9, text/*;q=0.1"}, "application/json"},
		{[]string{"*/*;q=0.5, text/*;q=0.9"}, "text/event-stream"},
		{[]string{"*/*;q=0.5, application/*;q=0.2, text/event-stream;q=0.3"}, "text/event-stream"},
	} {
		t.Run(strings.Join(tc.accept, "|"), func(t *testing.T) {
			r := newPost(list)
			r.Header.Del("Accept")
			for _, a := range tc.accept {
				r.Header.Add("Accept", a)
			}
			rec := httptest.NewRecorder()
			NewHandler(newTestServer(), nil).ServeHTTP(rec, r)
			if got := rec.Header().Get("Content-Type"); got != tc.want || rec.Code != http.StatusOK {
				t.Fatalf("got %d %q, want 200 %q", rec.Code, got, tc.want)
			}
			m := checkResult(t, rec)
			if string(*m.ID) != "1" {
				t.Errorf("id = %s", *m.ID)
			}
		})
	}
}
