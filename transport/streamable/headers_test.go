package streamable

import (
	"errors"
	"testing"
)

func TestDecodeHeaderValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  error
	}{
		{"us-west1", "us-west1", nil},
		{"", "", nil},
		{"with space\tand tab", "with space\tand tab", nil},
		{"=?base64?SGVsbG8=?=", "Hello", nil},
		{"=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界", nil},
		{"=?base64?IHBhZGRlZCA=?=", " padded ", nil},
		{"=?base64?bGluZTEKbGluZTI=?=", "line1\nline2", nil},
		{"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?=", nil},
		{"=?base64??=", "", nil},
		{"=?base64?SGVsbG8?=", "", errBadBase64},
		{"=?base64?SGVs!!!bG8=?=", "", errBadBase64},
		{"=?base64?SGVsbG8=\n?=", "", errInvalidChars},
		{"=?base64?SGVsbG9=?=", "", errBadBase64}, // non-canonical trailing bits
		{"=?base64?w7_Dvg==?=", "", errBadBase64}, // URL alphabet
		{"=?base64?SGVs bG8=?=", "", errBadBase64},
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", nil},
		{"SGVsbG8=?=", "SGVsbG8=?=", nil},
		{"=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=", nil},
		{"=?base64?=", "=?base64?=", nil},
		{"=?base64?", "=?base64?", nil},
		{"caf\u00e9", "", errInvalidChars},
		{"a\x00b", "", errInvalidChars},
		{"a\rb", "", errInvalidChars},
		{"a\x7fb", "", errInvalidChars},
	} {
		got, err := decodeHeaderValue(tc.in)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParamMatches(t *testing.T) {
	for _, tc := range []struct {
		typ, header, value string
		want               bool
	}{
		{"string", "abc", `"abc"`, true},
		{"string", "abc", `"abd"`, false},
		{"string", "a\"b", `"a\"b"`, true},
		{"string", "é", `"\u00e9"`, true},
		{"integer", "42", `42`, true},
		{"integer", "42.0", `42`, true},
		{"integer", "42", `42.0`, true},
		{"integer", "4.2e1", `42`, true},
		{"integer", "-0", `0`, true},
		{"integer", "12345678901234567890", `12345678901234567890`, true},
		{"integer", "12345678901234567891", `12345678901234567890`, false},
		{"integer", "43", `42`, false},
		{"integer", "0x2A", `42`, false},
		{"integer", "4_2", `42`, false},
		{"integer", "+42", `42`, false},
		{"integer", "042", `42`, false},
		{"integer", "Inf", `42`, false},
		{"integer", "", `42`, false},
		{"integer", `"42"`, `42`, false},
		{"boolean", "true", `true`, true},
		{"boolean", "false", `false`, true},
		{"boolean", "TRUE", `true`, false},
		{"boolean", "false", `true`, false},
		{"string", "x", `{"a":1}`, false},
	} {
		if got := paramMatches(tc.typ, tc.header, []byte(tc.value)); got != tc.want {
			t.Errorf("paramMatches(%s, %q, %s) = %v, want %v", tc.typ, tc.header, tc.value, got, tc.want)
		}
	}
}

func TestMember(t *testing.T) {
	for _, tc := range []struct {
		obj, key  string
		want      string // "" means absent
		ambiguous bool
	}{
		{`{"name":"a"}`, "name", `"a"`, false},
		{`{"other":1}`, "name", ``, false},
		{`{}`, "name", ``, false},
		{`{"name":"a","Name":"b"}`, "name", `"a"`, false},
		{`{"NAME":"b"}`, "name", ``, false},
		{`{"nested":{"name":"x"},"name":"a"}`, "name", `"a"`, false},
		// What Decode checked repeats no name; one met before the member
		// is still reported.
		{`{"nested":{"x":1,"x":2},"name":"a"}`, "name", ``, true},
		{`{"x":1,"x":2,"name":"a"}`, "name", ``, true},
		{`{"x":1,"\u0078":2,"name":"a"}`, "name", ``, true},
		{`[1,2]`, "name", ``, false},
	} {
		v, amb := member([]byte(tc.obj), tc.key)
		if string(v) != tc.want || amb != tc.ambiguous {
			t.Errorf("member(%s, %q) = %s, %v; want %s, %v", tc.obj, tc.key, v, amb, tc.want, tc.ambiguous)
		}
	}
}
