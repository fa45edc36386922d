package jsonvalid

import (
	"encoding/json"
	"strings"
	"testing"
)

var cases = []string{
	``, ` `, `{}`, `[]`, ` {} `, `{`, `}`, `[`, `]`, `{]`, `[}`, `{"a":1}`, `{"a":1,}`, `{"a"}`,
	`{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1,"b":[1,2,{"c":null}]}`, `[1,]`, `[,1]`, `[1 2]`,
	`"x"`, `"`, `"\"`, `"\\"`, `"\/\b\f\n\r\t"`, `"\u00e9"`, `"\u00g9"`, `"\u00e"`, `"\x"`,
	"\"a\tb\"", "\"\x7f\"", "\"\xff\xfe\"", "\"\u2028\"",
	`0`, `-0`, `01`, `-01`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `-`, `+1`,
	`-1.5e10`, `1.5e1.0`, `0x10`, `1 2`, `true`, `tru`, `truex`, `false`, `null`, `nul`, `nulll`,
	`[true,false,null]`, `{"a":true}x`, " \t\r\n1\n", "\v1", `[[[[]]]]`, `[[[[]]]`,
	`{"a":{"b":{"c":{}}}}`, `{"":""}`, `["\u0000"]`,
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	for _, n := range []int{63, 64, 65, 200, 9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`} {
			close := "]"
			if open != "[" {
				close = "}"
			}
			s := strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
			if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
				t.Errorf("depth %d %q: Valid = %v, encoding/json says %v", n, open, got, want)
			}
		}
	}
	// Mixed containers across a 64-level word boundary.
	var b strings.Builder
	for i := range 130 {
		if i%3 == 0 {
			b.WriteString(`{"k":`)
		} else {
			b.WriteString("[")
		}
	}
	b.WriteString("0")
	for i := 129; i >= 0; i-- {
		if i%3 == 0 {
			b.WriteString("}")
		} else {
			b.WriteString("]")
		}
	}
	if !Valid([]byte(b.String())) {
		t.Error("mixed nesting rejected")
	}
}

func TestValidDoesNotAllocate(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"a":[1,2.5e3,true,null]}}}`)
	if n := testing.AllocsPerRun(100, func() { Valid(data) }); n != 0 {
		t.Errorf("Valid allocates %v times", n)
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
	})
}

var sample = []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}`)

func BenchmarkValid(b *testing.B) {
	b.SetBytes(int64(len(sample)))
	for b.Loop() {
		Valid(sample)
	}
}

func BenchmarkEncodingJSONValid(b *testing.B) {
	b.SetBytes(int64(len(sample)))
	for b.Loop() {
		json.Valid(sample)
	}
}
