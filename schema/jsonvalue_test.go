package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzParseValue: parseValue accepts exactly what jsontext accepts as one
// JSON value (no repeated names, valid UTF-8), refuses a repeated name in
// JSON text with a *DuplicateMemberError, and reads what it accepts as
// encoding/json does with UseNumber.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.5e3,-0,"x\u00e9",true,false,null],"b":{"c":{}}}`, `"\ud800"`, "\"\xff\"", ` 12 `, `{"a":1,"a":2}`, `[`, `{"a" 1}`, `[1,]`, `{"a":1,}`, `1 2`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseValue(data)
		valid := jsontext.Value(data).IsValid()
		if (err == nil) != valid {
			t.Fatalf("parseValue(%q) error %v, jsontext valid %v", data, err, valid)
		}
		var dup *DuplicateMemberError
		if !valid && jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true)) && !errors.As(err, &dup) {
			t.Fatalf("parseValue(%q) = %v, want a duplicate member error", data, err)
		}
		if err != nil {
			return
		}
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var want any
		if werr := d.Decode(&want); werr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("parseValue(%q) = %#v, encoding/json %#v (%v)", data, got, want, werr)
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
