package jsonrpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

type kind int

const (
	kindRequest kind = iota + 1
	kindNotification
	kindResponse
)

func kindOf(m *Message) kind {
	switch {
	case m.IsRequest():
		return kindRequest
	case m.IsNotification():
		return kindNotification
	case m.IsResponse():
		return kindResponse
	}
	return 0
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		code   int64  // 0: accepted
		kind   kind   // when accepted
		id     string // wanted ID raw text; "" for absent (also on error)
		method string
		params string
		result string
		errObj string // wanted error code:message when the message is an error response
	}{
		// Accepted messages.
		{name: "request string id", in: `{"jsonrpc":"2.0","id":"abc","method":"ping"}`, kind: kindRequest, id: `"abc"`, method: "ping"},
		{name: "request int id", in: `{"jsonrpc":"2.0","id":42,"method":"tools/list","params":{"cursor":"x"}}`, kind: kindRequest, id: `42`, method: "tools/list", params: `{"cursor":"x"}`},
		{name: "request zero id", in: `{"jsonrpc":"2.0","id":0,"method":"ping"}`, kind: kindRequest, id: `0`, method: "ping"},
		{name: "request negative id", in: `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, kind: kindRequest, id: `-7`, method: "ping"},
		{name: "request empty string id", in: `{"jsonrpc":"2.0","id":"","method":"ping"}`, kind: kindRequest, id: `""`, method: "ping"},
		{name: "request array params", in: `{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}`, kind: kindRequest, id: `1`, method: "sum", params: `[1,2]`},
		{name: "member order and space", in: " \r\n{ \"method\" : \"ping\" ,\n\"id\":\t1 , \"jsonrpc\":\"2.0\" }\n", kind: kindRequest, id: `1`, method: "ping"},
		{name: "unknown members ignored", in: `{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"a":[1]}}`, kind: kindRequest, id: `1`, method: "ping"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, kind: kindNotification, method: "notifications/cancelled", params: `{"requestId":1}`},
		{name: "notification without params", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kind: kindNotification, method: "notifications/initialized"},
		{name: "result response", in: `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`, kind: kindResponse, id: `7`, result: `{"ok":true}`},
		{name: "null result", in: `{"jsonrpc":"2.0","id":"r","result":null}`, kind: kindResponse, id: `"r"`, result: `null`},
		{name: "error response", in: `{"jsonrpc":"2.0","id":"e1","error":{"code":-32601,"message":"method not found","data":{"m":"x"}}}`, kind: kindResponse, id: `"e1"`, errObj: `-32601:method not found`},
		{name: "error response null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, kind: kindResponse, errObj: `-32700:parse error`},
		{name: "error response without id", in: `{"jsonrpc":"2.0","error":{"code":-32600,"message":"too long"}}`, kind: kindResponse, errObj: `-32600:too long`},

		// Parse errors.
		{name: "empty", in: ``, code: CodeParseError},
		{name: "only space", in: " \n\t", code: CodeParseError},
		{name: "invalid JSON", in: `{"jsonrpc":"2.0","id":1,"method":"ping"`, code: CodeParseError},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, code: CodeParseError},
		{name: "bare word", in: `ping`, code: CodeParseError},

		// Invalid requests.
		{name: "batch", in: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, code: CodeInvalidRequest},
		{name: "empty batch", in: ` []`, code: CodeInvalidRequest},
		{name: "not an object", in: `"ping"`, code: CodeInvalidRequest},
		{name: "number", in: `1`, code: CodeInvalidRequest},
		{name: "id null on request", in: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, code: CodeInvalidRequest},
		{name: "id float", in: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, code: CodeInvalidRequest},
		{name: "id exponent", in: `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, code: CodeInvalidRequest},
		{name: "id bool", in: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, code: CodeInvalidRequest},
		{name: "id object", in: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, code: CodeInvalidRequest},
		{name: "id array", in: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, code: CodeInvalidRequest},
		{name: "missing jsonrpc", in: `{"id":3,"method":"ping"}`, code: CodeInvalidRequest, id: `3`},
		{name: "wrong jsonrpc", in: `{"jsonrpc":"1.0","id":"v","method":"ping"}`, code: CodeInvalidRequest, id: `"v"`},
		{name: "null jsonrpc", in: `{"jsonrpc":null,"id":4,"method":"ping"}`, code: CodeInvalidRequest, id: `4`},
		{name: "numeric jsonrpc", in: `{"jsonrpc":2.0,"id":4,"method":"ping"}`, code: CodeInvalidRequest, id: `4`},
		{name: "empty method", in: `{"jsonrpc":"2.0","id":5,"method":""}`, code: CodeInvalidRequest, id: `5`},
		{name: "method not a string", in: `{"jsonrpc":"2.0","id":5,"method":1}`, code: CodeInvalidRequest, id: `5`},
		{name: "params a string", in: `{"jsonrpc":"2.0","id":6,"method":"ping","params":"x"}`, code: CodeInvalidRequest, id: `6`},
		{name: "params a number", in: `{"jsonrpc":"2.0","id":6,"method":"ping","params":3}`, code: CodeInvalidRequest, id: `6`},
		{name: "params null", in: `{"jsonrpc":"2.0","id":6,"method":"ping","params":null}`, code: CodeInvalidRequest, id: `6`},
		{name: "request with result", in: `{"jsonrpc":"2.0","id":8,"method":"ping","result":{}}`, code: CodeInvalidRequest, id: `8`},
		{name: "result and error", in: `{"jsonrpc":"2.0","id":9,"result":{},"error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest, id: `9`},
		{name: "result without id", in: `{"jsonrpc":"2.0","result":{}}`, code: CodeInvalidRequest},
		{name: "result with null id", in: `{"jsonrpc":"2.0","id":null,"result":{}}`, code: CodeInvalidRequest},
		{name: "error not an object", in: `{"jsonrpc":"2.0","id":10,"error":"boom"}`, code: CodeInvalidRequest, id: `10`},
		{name: "error null", in: `{"jsonrpc":"2.0","id":10,"error":null}`, code: CodeInvalidRequest, id: `10`},
		{name: "error with bad code", in: `{"jsonrpc":"2.0","id":10,"error":{"code":"x","message":"m"}}`, code: CodeInvalidRequest, id: `10`},
		{name: "no method result or error", in: `{"jsonrpc":"2.0","id":11}`, code: CodeInvalidRequest, id: `11`},
		{name: "empty object", in: `{}`, code: CodeInvalidRequest},
		{name: "member name in other case", in: `{"jsonrpc":"2.0","ID":1,"Method":"ping"}`, code: CodeInvalidRequest},
		{name: "case variant after real member", in: `{"jsonrpc":"2.0","id":1,"method":"ping","METHOD":"tools/call"}`, code: CodeInvalidRequest},
		{name: "escaped case variant", in: `{"jsonrpc":"2.0","id":1,"method":"ping","\u004Dethod":"x"}`, code: CodeInvalidRequest},
		// Repeated member names, at any depth, make an invalid request,
		// answered with the id when there is one.
		{name: "duplicate id", in: `{"jsonrpc":"2.0","id":1,"method":"ping","id":2}`, code: CodeInvalidRequest},
		{name: "duplicate method", in: `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, code: CodeInvalidRequest, id: `1`},
		{name: "duplicate escaped", in: `{"jsonrpc":"2.0","id":"r","method":"ping","\u006dethod":"tools/call"}`, code: CodeInvalidRequest, id: `"r"`},
		{name: "duplicate in params", in: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1,"x":2}}}`, code: CodeInvalidParams, id: `1`},
		{name: "duplicate deep", in: `{"jsonrpc":"2.0","id":2,"method":"m","params":[{"a":[{"b":{"c":1,"c":1}}]}]}`, code: CodeInvalidParams, id: `2`},
		{name: "duplicate with a bad id", in: `{"jsonrpc":"2.0","id":1.5,"method":"m","params":{"a":1,"a":1}}`, code: CodeInvalidParams},
		{name: "duplicate in a notification", in: `{"jsonrpc":"2.0","method":"m","params":{"a":1,"a":1}}`, code: CodeInvalidParams},
		{name: "duplicate in error data", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"k":1,"k":1}}}`, code: CodeInvalidRequest, id: `1`},
		{name: "duplicate in error", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","code":2}}`, code: CodeInvalidRequest, id: `1`},
		{name: "duplicate in a batch", in: `[{"jsonrpc":"2.0","id":1,"method":"m","id":2}]`, code: CodeInvalidRequest},
		{name: "duplicate params member", in: `{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":1},"params":{"a":2}}`, code: CodeInvalidRequest, id: `3`},
		{name: "duplicate params member, id after", in: `{"jsonrpc":"2.0","method":"m","params":{},"params":{},"id":4}`, code: CodeInvalidRequest, id: `4`},
		{name: "duplicate in params, id after", in: `{"jsonrpc":"2.0","method":"m","params":{"a":{"b":1,"b":2}},"id":5}`, code: CodeInvalidParams, id: `5`},
		{name: "duplicate member named params", in: `{"jsonrpc":"2.0","id":6,"method":"m","error":{"params":1,"params":2}}`, code: CodeInvalidRequest, id: `6`},
		{name: "escaped lone surrogate", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\ud800"}}`, code: CodeParseError},
		{name: "duplicate then malformed", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":1},}`, code: CodeParseError},
		{name: "duplicate then invalid UTF-8", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":1,\"a\":\"\xff\"}}", code: CodeParseError},
		{name: "same name in sibling objects", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"x":1},"b":{"x":1},"x":[{"x":1},{"x":2}]}}`, kind: kindRequest, id: `1`, method: "m", params: `{"a":{"x":1},"b":{"x":1},"x":[{"x":1},{"x":2}]}`},
		{name: "error member names exact", in: `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","MESSAGE":"x","Code":5}}`, kind: kindResponse, id: `1`, errObj: `-1:m`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			if tt.code != 0 {
				var je *Error
				if !errors.As(err, &je) {
					t.Fatalf("Decode(%s) error = %v, want *Error with code %d", tt.in, err, tt.code)
				}
				if je.Code != tt.code {
					t.Fatalf("Decode(%s) code = %d (%s), want %d", tt.in, je.Code, je.Message, tt.code)
				}
				var got string
				if m != nil {
					got = string(m.ID.raw)
				}
				if got != tt.id {
					t.Errorf("Decode(%s) returned id %q, want %q", tt.in, got, tt.id)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(%s) = %v", tt.in, err)
			}
			if k := kindOf(m); k != tt.kind {
				t.Errorf("kind = %d, want %d", k, tt.kind)
			}
			if m.ID.raw != tt.id {
				t.Errorf("id = %q, want %q", m.ID.raw, tt.id)
			}
			if m.Method != tt.method {
				t.Errorf("method = %q, want %q", m.Method, tt.method)
			}
			if string(m.Params) != tt.params {
				t.Errorf("params = %s, want %s", m.Params, tt.params)
			}
			if string(m.Result) != tt.result {
				t.Errorf("result = %s, want %s", m.Result, tt.result)
			}
			var gotErr string
			if m.Error != nil {
				gotErr = strings.Join([]string{jsonInt(m.Error.Code), m.Error.Message}, ":")
			}
			if gotErr != tt.errObj {
				t.Errorf("error = %q, want %q", gotErr, tt.errObj)
			}
		})
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestDecodeErrorMessage(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","id":2}`:              `invalid request: duplicate member "id"`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}`: `invalid params: duplicate member "a"`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"`:                      `parse error: invalid JSON`,
		`hello`: `parse error: invalid JSON`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}": `parse error: invalid UTF-8`,
	} {
		_, err := Decode([]byte(in))
		var je *Error
		if !errors.As(err, &je) || je.Message != want {
			t.Errorf("Decode(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestDecodeErrorData(t *testing.T) {
	m, err := Decode([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"field":"x"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(m.Error.Data), `{"field":"x"}`; got != want {
		t.Errorf("data = %s, want %s", got, want)
	}
}

func TestIsBatch(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`[]`, true},
		{" \t\r\n[{}]", true},
		{`{}`, false},
		{``, false},
		{`  `, false},
		{`"["`, false},
	}
	for _, tt := range tests {
		if got := IsBatch([]byte(tt.in)); got != tt.want {
			t.Errorf("IsBatch(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestAppend(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"request int id", AppendRequest(nil, IntID(1), "ping", nil), `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"request string id params", AppendRequest(nil, StringID("a"), "tools/call", json.RawMessage(`{"name":"echo"}`)), `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo"}}`},
		{"request absent id is a notification", AppendRequest(nil, ID{}, "x", nil), `{"jsonrpc":"2.0","method":"x"}`},
		{"request appends", AppendRequest([]byte("prefix "), IntID(2), "p", nil), `prefix {"jsonrpc":"2.0","id":2,"method":"p"}`},
		{"method needing escapes", AppendRequest(nil, IntID(3), "a\"b\\c\n", nil), `{"jsonrpc":"2.0","id":3,"method":"a\"b\\c\n"}`},
		{"method non-ASCII", AppendRequest(nil, IntID(3), "é", nil), `{"jsonrpc":"2.0","id":3,"method":"é"}`},
		{"notification", AppendNotification(nil, "notifications/progress", json.RawMessage(`{"progress":1}`)), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`},
		{"notification empty params", AppendNotification(nil, "n", json.RawMessage{}), `{"jsonrpc":"2.0","method":"n"}`},
		{"result", AppendResult(nil, IntID(-1), json.RawMessage(`{"a":1}`)), `{"jsonrpc":"2.0","id":-1,"result":{"a":1}}`},
		{"result string id", AppendResult(nil, StringID("x\"y"), json.RawMessage(`{}`)), `{"jsonrpc":"2.0","id":"x\"y","result":{}}`},
		{"result absent id", AppendResult(nil, ID{}, json.RawMessage(`{}`)), `{"jsonrpc":"2.0","id":null,"result":{}}`},
		{"error", AppendError(nil, IntID(5), NewError(CodeMethodNotFound, "method not found: x", nil)), `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"method not found: x"}}`},
		{"error null id", AppendError(nil, ID{}, NewError(CodeParseError, "parse error", nil)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
		{"error with data", AppendError(nil, StringID("s"), NewError(CodeInvalidParams, "bad", map[string]int{"n": 1})), `{"jsonrpc":"2.0","id":"s","error":{"code":-32602,"message":"bad","data":{"n":1}}}`},
		{"error with raw data", AppendError(nil, IntID(1), NewError(-1, "m", json.RawMessage(`[1,2]`))), `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":[1,2]}}`},
		{"error message escaped", AppendError(nil, IntID(1), NewError(-1, "a\tb\"", nil)), `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"a\tb\""}}`},
		{"error no id", AppendErrorNoID(nil, NewError(CodeInvalidRequest, "too long", nil)), `{"jsonrpc":"2.0","error":{"code":-32600,"message":"too long"}}`},
		{"response result", (&Response{ID: IntID(9), Result: json.RawMessage(`{"x":[]}`)}).Append(nil), `{"jsonrpc":"2.0","id":9,"result":{"x":[]}}`},
		{"response error wins", (&Response{ID: IntID(9), Result: json.RawMessage(`{}`), Error: NewError(-32603, "internal", nil)}).Append(nil), `{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"internal"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("got  %s\nwant %s", tt.got, tt.want)
			}
			b := tt.got
			if i := strings.IndexByte(string(b), '{'); i > 0 {
				b = b[i:]
			}
			if !json.Valid(b) {
				t.Errorf("%s is not valid JSON", b)
			}
		})
	}
}

func TestAppendDecodeRoundTrip(t *testing.T) {
	ids := []ID{IntID(0), IntID(1 << 62), IntID(-9), StringID(""), StringID("a\"b"), StringID("ü\u2028<>&"), StringID("line\nbreak")}
	for _, id := range ids {
		m, err := Decode(AppendRequest(nil, id, "m/é", json.RawMessage(`{"k":[1,{"x":"y"}]}`)))
		if err != nil {
			t.Fatalf("request with id %s: %v", id.Raw(), err)
		}
		if m.ID != id || m.Method != "m/é" || string(m.Params) != `{"k":[1,{"x":"y"}]}` {
			t.Errorf("request round trip: got id %s method %q params %s", m.ID.Raw(), m.Method, m.Params)
		}
		m, err = Decode(AppendError(nil, id, NewError(-32000, "x", nil)))
		if err != nil || m.ID != id || m.Error == nil || m.Error.Code != -32000 {
			t.Errorf("error round trip for id %s: %+v, %v", id.Raw(), m, err)
		}
	}
}

func TestErrorError(t *testing.T) {
	if got, want := NewError(-32601, "method not found", nil).Error(), "jsonrpc error -32601: method not found"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var target *Error
	var err error = NewError(CodeInvalidParams, "x", nil)
	if !errors.As(err, &target) || target.Code != CodeInvalidParams {
		t.Errorf("errors.As failed: %v", target)
	}
	if e := NewError(1, "x", func() {}); e.Data != nil {
		t.Errorf("unencodable data kept: %s", e.Data)
	}
}

var benchRequest = []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"hello, world"}}}`)

func BenchmarkDecodeRequest(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		m, err := Decode(benchRequest)
		if err != nil || !m.IsRequest() {
			b.Fatal(m, err)
		}
	}
}

// TestDecodeOnlyJSONText: JSON's own white space around a message, and
// UTF-8 inside it; anything else is a parse error.
func TestDecodeOnlyJSONText(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if _, err := Decode([]byte(" \t\r\n" + ok + "\n")); err != nil {
		t.Fatalf("JSON white space: %v", err)
	}
	for _, bad := range []string{
		"\v" + ok, "\f" + ok, "\u0085" + ok, "\u00a0" + ok, ok + "\u00a0",
		`{"jsonrpc":"2.0","id":1,"method":"p` + "\xff" + `"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"` + "\xc3\x28" + `"}}`,
	} {
		_, err := Decode([]byte(bad))
		var je *Error
		if !errors.As(err, &je) || je.Code != CodeParseError {
			t.Errorf("Decode(%q) = %v, want a parse error", bad, err)
		}
	}
}

// TestEachParam: the params of a decoded message are read from what
// Decode split; a message whose Params were replaced (or built by hand)
// is read from its Params, under the same policy.
func TestEachParam(t *testing.T) {
	collect := func(m *Message) (string, error) {
		var b strings.Builder
		err := m.EachParam(func(name []byte, value jsontext.Value) error {
			b.WriteString(string(name) + "=" + string(value) + ";")
			return nil
		})
		return b.String(), err
	}
	m, err := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params": { "a" : [1, {"b":2}] , "\u0063":"x" } }`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := collect(m); err != nil || got != `a=[1, {"b":2}];c="x";` {
		t.Errorf("decoded: %q %v", got, err)
	}
	if m.nspans != 2 {
		t.Errorf("Decode split %d members", m.nspans)
	}
	copied := *m
	copied.Params = []byte(`{"z":1}`)
	if got, err := collect(&copied); err != nil || got != `z=1;` {
		t.Errorf("replaced params: %q %v", got, err)
	}
	copied.Params = m.Params[:len(m.Params)-1] // same start, another length
	if _, err := collect(&copied); err == nil {
		t.Error("a truncated params object was read")
	}
	built := &Message{Method: "m", Params: []byte(`{"a":1,"a":2}`)}
	var se *SyntaxError
	if _, err := collect(built); !errors.As(err, &se) || !se.Duplicate {
		t.Errorf("built with a repeated name: %v", err)
	}
	// More members than Decode keeps the place of: read again.
	many, err := Decode([]byte(`{"jsonrpc":"2.0","method":"m","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := collect(many); err != nil || got != "a=1;b=2;c=3;d=4;e=5;f=6;g=7;" || many.nspans != 0 {
		t.Errorf("seven members: %q %v (%d kept)", got, err, many.nspans)
	}
	for _, in := range []string{`{"jsonrpc":"2.0","method":"m"}`, `{"jsonrpc":"2.0","method":"m","params":[1]}`, `{"jsonrpc":"2.0","method":"m","params":{}}`} {
		m, err := Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := collect(m)
		if strings.Contains(in, "[") != (err != nil) || got != "" {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
}
