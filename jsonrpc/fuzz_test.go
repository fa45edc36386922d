package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{"ok":[1,2,{"x":null}]}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error","data":"x"}}`,
	`{"jsonrpc":"2.0","error":{"code":-32600,"message":"too long"}}`,
	`{"jsonrpc":"2.0","id":-1,"method":"sum","params":[1,2]}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","ID":1,"Method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","id":2}`,
	` {"\u006aSONRPC":"2.0"} `,
	`{"a\\":{"}":"]"}}`,
	`{}`,
	`{`,
	``,
}

// FuzzDecode checks that Decode never panics, that its errors are JSON-RPC
// errors with the two codes it documents, and that an accepted message,
// encoded again, decodes to the same kind, method and id.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err == nil && (!json.Valid(data) || !utf8.Valid(data)) {
			t.Fatalf("Decode(%q) accepted what is not JSON text", data)
		}
		if err != nil {
			var je *Error
			if !errors.As(err, &je) || (je.Code != CodeParseError && je.Code != CodeInvalidRequest) {
				t.Fatalf("Decode(%q) error %v is not a parse or invalid-request *Error", data, err)
			}
			// A parse error is for what is not JSON text: invalid JSON,
			// invalid UTF-8 (which encoding/json.Valid lets through), or
			// white space other than JSON's around it. Valid JSON text
			// that jsonvalid.Check refuses repeats a member name: an
			// invalid request.
			text := len(bytes.Trim(data, " \t\r\n")) > 0 && json.Valid(data) && utf8.Valid(data)
			if (je.Code == CodeParseError) == text {
				t.Fatalf("Decode(%q) = %v for JSON text %v", data, err, text)
			}
			if text && jsonvalid.Check(data) != nil && !strings.Contains(je.Message, "duplicate member") {
				t.Fatalf("Decode(%q) = %v, jsonvalid.Check says %v", data, err, jsonvalid.Check(data))
			}
			if m != nil && m.ID.IsValid() {
				var back ID
				if json.Unmarshal(m.ID.Raw(), &back) != nil || back != m.ID {
					t.Fatalf("Decode(%q) returned unreadable id %s", data, m.ID.Raw())
				}
			}
			return
		}
		var enc []byte
		switch {
		case m.IsRequest(), m.IsNotification():
			enc = AppendRequest(nil, m.ID, m.Method, m.Params)
		case m.Error != nil:
			if m.ID.IsValid() {
				enc = AppendError(nil, m.ID, m.Error)
			} else {
				enc = AppendErrorNoID(nil, m.Error)
			}
		default:
			enc = AppendResult(nil, m.ID, m.Result)
		}
		if !json.Valid(enc) {
			t.Fatalf("re-encoding of %q is not valid JSON: %s", data, enc)
		}
		m2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoding of %q does not decode: %s: %v", data, enc, err)
		}
		if m2.Method != m.Method || m2.ID != m.ID || kindOf(m2) != kindOf(m) {
			t.Fatalf("round trip of %q: method %q id %s, want %q %s", data, m2.Method, m2.ID.Raw(), m.Method, m.ID.Raw())
		}
		if !bytes.Equal(m2.Params, m.Params) || !bytes.Equal(m2.Result, m.Result) {
			t.Fatalf("round trip of %q changed params or result: %s", data, enc)
		}
		if (m.Error == nil) != (m2.Error == nil) || (m.Error != nil && (m.Error.Code != m2.Error.Code || m.Error.Message != m2.Error.Message)) {
			t.Fatalf("round trip of %q changed the error: %s", data, enc)
		}
		// What Decode reads agrees with what Member reads.
		trimmed := bytes.TrimSpace(data)
		if got := Member(trimmed, "method"); m.Method != "" {
			var method string
			if json.Unmarshal(got, &method) != nil || method != m.Method {
				t.Fatalf("Decode(%q) method %q, Member reads %s", data, m.Method, got)
			}
		}
		if m.ID.IsValid() {
			if got := Member(trimmed, "id"); string(got) != string(m.ID.Raw()) {
				t.Fatalf("Decode(%q) id %s, Member reads %s", data, m.ID.Raw(), got)
			}
		}
	})
}

// FuzzMembers checks that Members never panics and, on a valid JSON object,
// reports the same top-level keys and values as encoding/json's map decoding
// (for a duplicate key, encoding/json keeps the last value).
func FuzzMembers(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a":1,"a":2," b ":[{"c":"\\"}],"\u00e9":"\ud83d\ude00"}`))
	f.Add([]byte("{\n\t\"k\" : [ ] ,\r\n \"v\" : { } }"))
	f.Fuzz(func(t *testing.T, data []byte) {
		count := 0
		last := map[string][]byte{}
		err := Members(data, func(k string, v []byte) bool {
			count++
			last[k] = v
			return true
		})
		_ = Member(data, "_meta")
		// Stopping early must not panic either.
		_ = Members(data, func(string, []byte) bool { return false })
		if !json.Valid(data) {
			return
		}
		var want map[string]json.RawMessage
		if json.Unmarshal(data, &want) != nil {
			if err == nil {
				t.Fatalf("Members(%q) accepted a valid non-object", data)
			}
			return
		}
		if want == nil {
			// The JSON null literal decodes to a nil map.
			if err == nil {
				t.Fatalf("Members(%q) accepted null", data)
			}
			return
		}
		if err != nil {
			t.Fatalf("Members(%q) = %v on a valid object", data, err)
		}
		if !utf8.Valid(data) {
			// encoding/json replaces invalid UTF-8 in keys with U+FFFD;
			// Members hands back the key bytes as they are.
			return
		}
		if len(last) != len(want) {
			t.Fatalf("Members(%q) saw keys %d, encoding/json %d", data, len(last), len(want))
		}
		for k, v := range want {
			got, ok := last[k]
			if !ok {
				t.Fatalf("Members(%q) missed key %q", data, k)
			}
			if !bytes.Equal(got, v) {
				t.Fatalf("Members(%q)[%q] = %s, encoding/json %s", data, k, got, v)
			}
		}
		if count < len(want) {
			t.Fatalf("Members(%q) called fn %d times for %d keys", data, count, len(want))
		}
	})
}
