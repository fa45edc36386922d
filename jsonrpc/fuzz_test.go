package jsonrpc

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
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
	`{"jsonrpc":"2.0","method":"m","params":{"\u0061":1, "b" : [ "\"" ] ,"c":{"d":null}}}`,
	`{}`,
	`{`,
	``,
}

// FuzzDecode checks that Decode never panics, that its errors are JSON-RPC
// errors with the codes it documents, and that an accepted message,
// encoded again, decodes to the same kind, method and id.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		// JSON text, but for repeated names, which jsontext can be told to
		// allow: what Decode must not answer with a parse error.
		text := jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true))
		if err == nil && !jsontext.Value(data).IsValid() {
			t.Fatalf("Decode(%q) accepted what jsontext refuses", data)
		}
		if err != nil {
			var je *Error
			if !errors.As(err, &je) || (je.Code != CodeParseError && je.Code != CodeInvalidRequest && je.Code != CodeInvalidParams) {
				t.Fatalf("Decode(%q) error %v is not a parse, invalid-request or invalid-params *Error", data, err)
			}
			if (je.Code == CodeParseError) == text {
				t.Fatalf("Decode(%q) = %v for JSON text %v", data, err, text)
			}
			if text && !jsontext.Value(data).IsValid() && !strings.Contains(je.Message, "duplicate member") {
				t.Fatalf("Decode(%q) = %v for a repeated name", data, err)
			}
			if je.Code == CodeInvalidParams && !strings.HasPrefix(je.Message, "invalid params: duplicate member") {
				t.Fatalf("Decode(%q) = %v", data, err)
			}
			if m != nil && m.ID.IsValid() {
				var back ID
				if back.UnmarshalJSON(m.ID.Raw()) != nil || back != m.ID {
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
		if !jsontext.Value(enc).IsValid() {
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
		// The members Decode kept are those EachMember reads in Params.
		if jsontext.Value(m.Params).Kind() == '{' {
			var kept, read []string
			if err := m.EachParam(func(k []byte, v jsontext.Value) error {
				kept = append(kept, string(k), string(v))
				return nil
			}); err != nil {
				t.Fatalf("Decode(%q): EachParam: %v", data, err)
			}
			if err := EachMember(m.Params, func(k []byte, v jsontext.Value) error {
				read = append(read, string(k), string(v))
				return nil
			}); err != nil || !slices.Equal(kept, read) {
				t.Fatalf("Decode(%q): EachParam %q, EachMember %q (%v)", data, kept, read, err)
			}
		}
		// What Decode reads agrees with what Unmarshal reads.
		var typed struct {
			Method *string        `json:"method"`
			ID     jsontext.Value `json:"id"`
			Params jsontext.Value `json:"params"`
		}
		if err := Unmarshal(data, &typed); err != nil {
			t.Fatalf("Decode(%q) accepted, Unmarshal says %v", data, err)
		}
		if m.Method != "" && (typed.Method == nil || *typed.Method != m.Method) {
			t.Fatalf("Decode(%q) method %q, Unmarshal reads %v", data, m.Method, typed.Method)
		}
		if m.ID.IsValid() && string(typed.ID) != string(m.ID.Raw()) {
			t.Fatalf("Decode(%q) id %s, Unmarshal reads %s", data, m.ID.Raw(), typed.ID)
		}
		if !bytes.Equal(typed.Params, m.Params) {
			t.Fatalf("Decode(%q) params %s, Unmarshal reads %s", data, m.Params, typed.Params)
		}
	})
}

// FuzzEachMember checks that EachMember never panics, refuses what
// jsontext refuses and any value but an object, and on an object reports
// the same members, in order, as jsontext's tokens.
func FuzzEachMember(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a":1,"a":2," b ":[{"c":"\\"}],"\u00e9":"\ud83d\ude00"}`))
	f.Add([]byte("{\n\t\"k\" : [ ] ,\r\n \"v\" : { } }"))
	f.Fuzz(func(t *testing.T, data []byte) {
		type member struct{ name, value string }
		var got []member
		err := EachMember(data, func(k []byte, v jsontext.Value) error {
			got = append(got, member{string(k), string(v)})
			return nil
		})
		// Stopping early must not panic either.
		stop := errors.New("stop")
		if err := EachMember(data, func([]byte, jsontext.Value) error { return stop }); err != stop && err == nil && len(got) > 0 {
			t.Fatalf("EachMember(%q) did not return fn's error", data)
		}
		valid := jsontext.Value(data).IsValid()
		if !valid || jsontext.Value(data).Kind() != '{' {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("EachMember(%q) = %v, want a *SyntaxError", data, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("EachMember(%q) = %v on a valid object", data, err)
		}
		var want []member
		d := jsontext.NewDecoder(bytes.NewReader(data))
		if _, err := d.ReadToken(); err != nil {
			t.Fatal(err)
		}
		for d.PeekKind() != '}' {
			name, err := d.ReadToken()
			if err != nil {
				t.Fatal(err)
			}
			k := name.String()
			v, err := d.ReadValue()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, member{k, string(v)})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("EachMember(%q) = %q, jsontext %q", data, got, want)
		}
	})
}
