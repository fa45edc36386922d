package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestIDUnmarshal(t *testing.T) {
	tests := []struct {
		in       string
		ok       bool
		raw      string // Raw() after decoding
		str      string // String()
		isString bool
	}{
		{in: `"abc"`, ok: true, raw: `"abc"`, str: "abc", isString: true},
		{in: `""`, ok: true, raw: `""`, str: "", isString: true},
		{in: `"a\"b\\c"`, ok: true, raw: `"a\"b\\c"`, str: `a"b\c`, isString: true},
		{in: `"\u00e9\n\ud83d\ude00"`, ok: true, raw: `"\u00e9\n\ud83d\ude00"`, str: "é\n😀", isString: true},
		{in: `42`, ok: true, raw: `42`, str: "42"},
		{in: `0`, ok: true, raw: `0`, str: "0"},
		{in: `-17`, ok: true, raw: `-17`, str: "-17"},
		{in: `123456789012345678901234567890`, ok: true, raw: `123456789012345678901234567890`, str: "123456789012345678901234567890"},
		{in: `-9223372036854775809`, ok: true, raw: `-9223372036854775809`, str: "-9223372036854775809"},
		{in: `null`, ok: true, raw: `null`, str: ""},
		{in: `1.0`},
		{in: `1e2`},
		{in: `-1.5E-3`},
		{in: `true`},
		{in: `false`},
		{in: `{}`},
		{in: `[1]`},
		{in: `nul`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var id ID
			err := json.Unmarshal([]byte(tt.in), &id)
			if !tt.ok {
				if err == nil {
					t.Fatalf("Unmarshal(%s) accepted as %s", tt.in, id.Raw())
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if got := string(id.Raw()); got != tt.raw {
				t.Errorf("Raw() = %s, want %s", got, tt.raw)
			}
			if got := id.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if id.IsString() != tt.isString {
				t.Errorf("IsString() = %v", id.IsString())
			}
			if id.IsValid() != (tt.in != "null") {
				t.Errorf("IsValid() = %v", id.IsValid())
			}
			// Marshalling gives back the same bytes.
			b, err := json.Marshal(id)
			if err != nil || string(b) != tt.raw {
				t.Errorf("Marshal = %s, %v; want %s", b, err, tt.raw)
			}
		})
	}
}

func TestIDRoundTripInStruct(t *testing.T) {
	type params struct {
		RequestID ID  `json:"requestId"`
		Token     *ID `json:"progressToken,omitempty"`
	}
	for _, in := range []string{
		`{"requestId":"x\u0041y"}`,
		`{"requestId":18446744073709551616,"progressToken":"t"}`,
		`{"requestId":-1,"progressToken":7}`,
		`{"requestId":null}`,
	} {
		var p params
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, _ := json.Marshal(p)
		if string(out) != in {
			t.Errorf("round trip: got %s, want %s", out, in)
		}
	}
}

func TestIDConstructors(t *testing.T) {
	tests := []struct {
		id       ID
		raw, str string
	}{
		{IntID(0), `0`, "0"},
		{IntID(-9223372036854775808), `-9223372036854775808`, "-9223372036854775808"},
		{IntID(9223372036854775807), `9223372036854775807`, "9223372036854775807"},
		{StringID(""), `""`, ""},
		{StringID("q\"uote"), `"q\"uote"`, `q"uote`},
		{StringID("tab\t"), `"tab\t"`, "tab\t"},
		{StringID("<&>"), `"\u003c\u0026\u003e"`, "<&>"},
		{ID{}, `null`, ""},
	}
	for _, tt := range tests {
		if got := string(tt.id.Raw()); got != tt.raw {
			t.Errorf("Raw() = %s, want %s", got, tt.raw)
		}
		if got := tt.id.String(); got != tt.str {
			t.Errorf("String() of %s = %q, want %q", tt.raw, got, tt.str)
		}
		// A constructed ID equals the one decoded from its text, so it finds
		// the same map entry.
		if tt.id.IsValid() {
			var back ID
			if err := json.Unmarshal(tt.id.Raw(), &back); err != nil || back != tt.id {
				t.Errorf("decoding %s gave %s, %v", tt.raw, back.Raw(), err)
			}
		}
	}
	if IntID(1) == StringID("1") {
		t.Error("IntID(1) == StringID(\"1\")")
	}
}
