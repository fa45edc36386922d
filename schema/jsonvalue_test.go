package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.5e3,-0,"x\u00e9",true,false,null],"b":{"c":{}}}`, `"\ud800"`, "\"\xff\"", ` 12 `, `{"a":1,"a":2}`, `[`, `{"a" 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseValue(data)
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var want any
		werr := d.Decode(&want)
		if werr == nil && len(bytes.TrimLeft(data[d.InputOffset():], " \t\r\n")) > 0 {
			werr = errInvalidJSON
		}
		var dup *DuplicateMemberError
		if errors.As(err, &dup) {
			// Valid JSON to encoding/json, which keeps the last; refused here.
			if werr != nil {
				t.Fatalf("parseValue(%q) = %v, encoding/json %v", data, err, werr)
			}
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("parseValue(%q) error %v, encoding/json %v", data, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("parseValue(%q) = %#v, encoding/json %#v", data, got, want)
		}
	})
}

func TestDuplicateMembers(t *testing.T) {
	tests := []struct{ in, path, name string }{
		{`{"a":1,"a":2}`, "", "a"},
		{`{"a":{"x":1,"y":5},"a":{"x":1}}`, "", "a"},
		{`{"a":{"x":1,"x":2}}`, "/a", "x"},
		{`[0,{"b":[{},{"c~/":1,"c~/":2}]}]`, "/1/b/1", "c~/"},
		{`{"\u0061":1,"a":2}`, "", "a"},
	}
	for _, tt := range tests {
		_, err := parseValue([]byte(tt.in))
		var dup *DuplicateMemberError
		if !errors.As(err, &dup) || dup.Path != tt.path || dup.Name != tt.name {
			t.Errorf("parseValue(%s) = %v, want a duplicate %q at %q", tt.in, err, tt.name, tt.path)
		}
	}
	if _, err := parseValue([]byte(`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`)); err != nil {
		t.Errorf("same names in different objects: %v", err)
	}
}
