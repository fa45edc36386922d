package transport

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseHeaderParams(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // "Name:path:type" joined by spaces, or "error"
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, ""},
		{"string", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, "Region:region:string"},
		{"nested and sorted", `{"type":"object","properties":{"z":{"type":"boolean","x-mcp-header":"Z"},"o":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`, "N:o/n:integer Z:z:boolean"},
		{"number type", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, "error"},
		{"no type", `{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`, "error"},
		{"empty name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "error"},
		{"not a token", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`, "error"},
		{"control char", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\r\n"}}}`, "error"},
		{"duplicate ignoring case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, "error"},
		{"under items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, "error"},
		{"under anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "error"},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}`, "error"},
		{"at the root", `{"type":"object","x-mcp-header":"A"}`, "error"},
		{"const value is not a schema", `{"type":"object","properties":{"a":{"const":{"x-mcp-header":"A"}}}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := ParseHeaderParams(json.RawMessage(tt.schema))
			if tt.want == "error" {
				if err == nil {
					t.Fatalf("accepted: %+v", ps)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.Name+":"+strings.Join(p.Path, "/")+":"+p.Type)
			}
			if strings.Join(got, " ") != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIsToken(t *testing.T) {
	for _, ok := range []string{"Region", "x-y_z.1", "A!#$%&'*+-.^_`|~"} {
		if !IsToken(ok) {
			t.Errorf("%q rejected", ok)
		}
	}
	for _, bad := range []string{"", "a b", "a:b", "é", "a\tb", "(x)"} {
		if IsToken(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
