package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

// checkPlain fails t when the plain check accepts an instance the full
// validator refuses: the plain check may only ever say "valid" for what
// the full validator accepts.
func checkPlain(t testing.TB, s *Schema, instance []byte) {
	t.Helper()
	if s.plain == nil || !s.plain.validJSON(instance) {
		return
	}
	inst, err := parseValue(instance)
	if err != nil {
		t.Fatalf("plain check accepts %q, which is not JSON under the policy: %v", instance, err)
	}
	if err := s.Validate(inst); err != nil {
		t.Fatalf("plain check accepts %q, which the full validator refuses: %v", instance, err)
	}
}

// TestPlainSchemas: which schemas are plain, and that the plain check
// says "valid" for valid instances (so that it is taken) and leaves every
// doubt to the full validator.
func TestPlainSchemas(t *testing.T) {
	for _, tc := range []struct {
		schema string
		plain  bool
	}{
		{`{"type":"object","properties":{"text":{"type":"string","description":"d"}},"required":["text"]}`, true},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}},"o":{"type":"object","properties":{"x":{"type":["number","null"]}},"additionalProperties":false}}}`, true},
		{`true`, true},
		{`{}`, true},
		{`false`, false},
		{`{"type":"object","properties":{"a":{"enum":["x","y"]}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`, false},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`, false},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, false},
		{`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`, false},
		{`{"anyOf":[{"type":"string"}]}`, false},
		{`{"type":"string","format":"date-time"}`, true},
	} {
		s, err := Compile(json.RawMessage(tc.schema))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.plain != nil; got != tc.plain {
			t.Errorf("%s: plain = %v, want %v", tc.schema, got, tc.plain)
		}
	}
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string"},"l":{"type":"array","items":{"type":"boolean"}}},"required":["n","s"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		instance string
		plainOK  bool // the plain check answers "valid"
		valid    bool
	}{
		{`{"n":1,"s":"x"}`, true, true},
		{`{"n":-0,"s":"x","l":[true,false]}`, true, true},
		{` {"s":"\u0078","n":12345678901234567890} `, true, true},
		{`{"n":2.0,"s":"x"}`, false, true}, // for the full validator to judge
		{`{"n":1e2,"s":"x"}`, false, true},
		{`{"n":1.5,"s":"x"}`, false, false},
		{`{"n":1}`, false, false},
		{`{"n":1,"s":"x","extra":1}`, false, false},
		{`{"n":1,"s":2}`, false, false},
		{`{"n":1,"s":"x","l":[1]}`, false, false},
		{`{"n":1,"s":"x","n":2}`, false, false}, // a repeated name
		{`{"n":1,"s":"x"} {}`, false, false},
		{`{"n":1,"s":"\xff"}`, false, false},
		{`[]`, false, false},
	} {
		if got := s.plain.validJSON([]byte(tc.instance)); got != tc.plainOK {
			t.Errorf("plain check of %s = %v, want %v", tc.instance, got, tc.plainOK)
		}
		if err := s.ValidateJSON([]byte(tc.instance)); (err == nil) != tc.valid {
			t.Errorf("ValidateJSON(%s) = %v, want valid=%v", tc.instance, err, tc.valid)
		}
	}
}

// TestPlainKnowsEveryKeyword fails when the compiled schema gains a field
// plainOf was not reviewed for: a keyword it ignored would make the plain
// check accept what the full validator refuses.
func TestPlainKnowsEveryKeyword(t *testing.T) {
	reviewed := map[string]bool{
		"loc": true, "isBool": true, "boolVal": true, "res": true, "ref": true, "dynRef": true, "dynName": true,
		"types": true, "enum": true, "hasEnum": true, "constVal": true, "hasConst": true,
		"props": true, "propIndex": true, "patternProps": true, "additional": true, "required": true, "propNames": true,
		"minProps": true, "maxProps": true, "depRequired": true, "depSchemas": true, "unevalProps": true, "objectChecks": true,
		"prefixItems": true, "items": true, "contains": true, "minContains": true, "maxContains": true,
		"minItems": true, "maxItems": true, "uniqueItems": true, "unevalItems": true, "arrayChecks": true, "hasUnevalAny": true,
		"minimum": true, "maximum": true, "exclMin": true, "exclMax": true, "multipleOf": true,
		"minLength": true, "maxLength": true, "pattern": true, "format": true, "formatCheck": true,
		"allOf": true, "anyOf": true, "oneOf": true, "not": true, "ifS": true, "thenS": true, "elseS": true,
	}
	st := reflect.TypeFor[schema]()
	for i := range st.NumField() {
		if name := st.Field(i).Name; !reviewed[name] {
			t.Errorf("schema field %s is new: review plainOf for it, then add it here", name)
		}
	}
}

// BenchmarkValidateJSONPlain is a tool's usual input schema and call.
func BenchmarkValidateJSONPlain(b *testing.B) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to echo back"}},"required":["text"]}`))
	if err != nil {
		b.Fatal(err)
	}
	data := []byte(`{"text":"hello, world"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.ValidateJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}
