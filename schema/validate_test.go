package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

const mcpFixture = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

type vcase struct {
	name     string
	schema   string
	instance string
	valid    bool
}

var validationCases = []vcase{
	// boolean schemas
	{"true schema", `true`, `{"a":1}`, true},
	{"false schema", `false`, `1`, false},
	{"empty schema", `{}`, `null`, true},

	// type
	{"type string ok", `{"type":"string"}`, `"x"`, true},
	{"type string bad", `{"type":"string"}`, `1`, false},
	{"type integer 1.0", `{"type":"integer"}`, `1.0`, true},
	{"type integer 1.5", `{"type":"integer"}`, `1.5`, false},
	{"type number int", `{"type":"number"}`, `3`, true},
	{"type array form", `{"type":["string","null"]}`, `null`, true},
	{"type array form bad", `{"type":["string","null"]}`, `true`, false},
	{"type object", `{"type":"object"}`, `[]`, false},
	{"type array", `{"type":"array"}`, `[]`, true},
	{"type boolean", `{"type":"boolean"}`, `false`, true},
	{"type null", `{"type":"null"}`, `0`, false},

	// enum and const
	{"enum ok", `{"enum":["a",1,null]}`, `1.0`, true},
	{"enum bad", `{"enum":["a",1,null]}`, `"b"`, false},
	{"enum object order", `{"enum":[{"a":1,"b":2}]}`, `{"b":2,"a":1}`, true},
	{"const number", `{"const":2}`, `2.0`, true},
	{"const bad", `{"const":2}`, `"2"`, false},
	{"const null", `{"const":null}`, `null`, true},
	{"const null bad", `{"const":null}`, `false`, false},
	{"const array", `{"const":[1,{"x":"y"}]}`, `[1,{"x":"y"}]`, true},
	{"const array bad", `{"const":[1,2]}`, `[2,1]`, false},

	// objects
	{"properties ok", `{"properties":{"a":{"type":"string"}}}`, `{"a":"x","b":1}`, true},
	{"properties bad", `{"properties":{"a":{"type":"string"}}}`, `{"a":1}`, false},
	{"properties ignore non-object", `{"properties":{"a":{"type":"string"}}}`, `[1]`, true},
	{"patternProperties ok", `{"patternProperties":{"^x-":{"type":"integer"}}}`, `{"x-a":1,"y":"s"}`, true},
	{"patternProperties bad", `{"patternProperties":{"^x-":{"type":"integer"}}}`, `{"x-a":"s"}`, false},
	{"additionalProperties false", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"b":2}`, false},
	{"additionalProperties schema", `{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, `{"a":1,"b":"x"}`, true},
	{"additionalProperties schema bad", `{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, `{"a":1,"b":2}`, false},
	{"additionalProperties with pattern", `{"patternProperties":{"^p":{}},"additionalProperties":false}`, `{"pa":1}`, true},
	{"required ok", `{"required":["a"]}`, `{"a":null}`, true},
	{"required bad", `{"required":["a","b"]}`, `{"a":null}`, false},
	{"propertyNames ok", `{"propertyNames":{"maxLength":3}}`, `{"abc":1}`, true},
	{"propertyNames bad", `{"propertyNames":{"maxLength":3}}`, `{"abcd":1}`, false},
	{"minProperties", `{"minProperties":2}`, `{"a":1}`, false},
	{"maxProperties", `{"maxProperties":1}`, `{"a":1,"b":2}`, false},
	{"maxProperties ok", `{"maxProperties":1}`, `{"a":1}`, true},
	{"dependentRequired ok", `{"dependentRequired":{"a":["b"]}}`, `{"a":1,"b":2}`, true},
	{"dependentRequired absent", `{"dependentRequired":{"a":["b"]}}`, `{"c":1}`, true},
	{"dependentRequired bad", `{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, false},
	{"dependentSchemas ok", `{"dependentSchemas":{"a":{"required":["b"]}}}`, `{"a":1,"b":1}`, true},
	{"dependentSchemas bad", `{"dependentSchemas":{"a":{"required":["b"]}}}`, `{"a":1}`, false},

	// arrays
	{"items ok", `{"items":{"type":"integer"}}`, `[1,2,3]`, true},
	{"items bad", `{"items":{"type":"integer"}}`, `[1,"x"]`, false},
	{"prefixItems ok", `{"prefixItems":[{"type":"string"},{"type":"integer"}]}`, `["a",1,true]`, true},
	{"prefixItems bad", `{"prefixItems":[{"type":"string"},{"type":"integer"}]}`, `[1]`, false},
	{"prefixItems items false", `{"prefixItems":[{}],"items":false}`, `[1,2]`, false},
	{"prefixItems items false ok", `{"prefixItems":[{}],"items":false}`, `[1]`, true},
	{"contains ok", `{"contains":{"const":3}}`, `[1,3]`, true},
	{"contains bad", `{"contains":{"const":3}}`, `[1,2]`, false},
	{"contains empty", `{"contains":{"const":3}}`, `[]`, false},
	{"minContains", `{"contains":{"const":3},"minContains":2}`, `[3,1,3]`, true},
	{"minContains bad", `{"contains":{"const":3},"minContains":2}`, `[3,1]`, false},
	{"minContains zero", `{"contains":{"const":3},"minContains":0}`, `[1]`, true},
	{"maxContains bad", `{"contains":{"const":3},"maxContains":1}`, `[3,3]`, false},
	{"maxContains ok", `{"contains":{"const":3},"maxContains":1}`, `[3,1]`, true},
	{"minItems", `{"minItems":2}`, `[1]`, false},
	{"maxItems", `{"maxItems":1}`, `[1,2]`, false},
	{"uniqueItems ok", `{"uniqueItems":true}`, `[1,"1",{"a":1},{"a":2}]`, true},
	{"uniqueItems bad numbers", `{"uniqueItems":true}`, `[1,1.0]`, false},
	{"uniqueItems bad objects", `{"uniqueItems":true}`, `[{"a":1,"b":2},{"b":2,"a":1}]`, false},
	{"uniqueItems false", `{"uniqueItems":false}`, `[1,1]`, true},
	{"uniqueItems large", `{"uniqueItems":true}`, `[` + seq(40) + `,{"a":[1]},{"a":[1.0]}]`, false},
	{"uniqueItems large ok", `{"uniqueItems":true}`, `[` + seq(40) + `]`, true},

	// numbers
	{"minimum ok", `{"minimum":0}`, `0`, true},
	{"minimum bad", `{"minimum":0}`, `-1`, false},
	{"maximum bad", `{"maximum":10}`, `10.5`, false},
	{"exclusiveMinimum bad", `{"exclusiveMinimum":0}`, `0`, false},
	{"exclusiveMinimum ok", `{"exclusiveMinimum":0}`, `0.1`, true},
	{"exclusiveMaximum bad", `{"exclusiveMaximum":5}`, `5`, false},
	{"multipleOf int", `{"multipleOf":3}`, `9`, true},
	{"multipleOf bad", `{"multipleOf":3}`, `10`, false},
	{"multipleOf decimal", `{"multipleOf":0.01}`, `19.99`, true},
	{"multipleOf decimal 0.1", `{"multipleOf":0.1}`, `0.3`, true},
	{"multipleOf decimal bad", `{"multipleOf":0.01}`, `0.075`, false},
	{"multipleOf overflow", `{"multipleOf":0.123456789}`, `1e308`, false},
	{"number keywords ignore strings", `{"minimum":5}`, `"1"`, true},

	// strings
	{"minLength code points", `{"minLength":2}`, `"é"`, false},
	{"maxLength code points", `{"maxLength":2}`, `"éé"`, true},
	{"maxLength emoji", `{"maxLength":1}`, `"💩"`, true},
	{"maxLength bad", `{"maxLength":2}`, `"abc"`, false},
	{"pattern ok", `{"pattern":"^a+$"}`, `"aaa"`, true},
	{"pattern unanchored", `{"pattern":"b"}`, `"abc"`, true},
	{"pattern bad", `{"pattern":"^a+$"}`, `"ab"`, false},
	{"format is annotation", `{"format":"email"}`, `"nope"`, true},

	// applicators
	{"allOf ok", `{"allOf":[{"type":"integer"},{"minimum":1}]}`, `2`, true},
	{"allOf bad", `{"allOf":[{"type":"integer"},{"minimum":1}]}`, `0`, false},
	{"anyOf ok", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `1`, true},
	{"anyOf bad", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `1.5`, false},
	{"oneOf ok", `{"oneOf":[{"type":"integer"},{"minimum":2}]}`, `1`, true},
	{"oneOf both", `{"oneOf":[{"type":"integer"},{"minimum":2}]}`, `3`, false},
	{"oneOf none", `{"oneOf":[{"type":"integer"},{"minimum":2}]}`, `1.5`, false},
	{"not ok", `{"not":{"type":"string"}}`, `1`, true},
	{"not bad", `{"not":{"type":"string"}}`, `"x"`, false},
	{"if then", `{"if":{"minimum":10},"then":{"multipleOf":2},"else":{"maximum":3}}`, `12`, true},
	{"if then bad", `{"if":{"minimum":10},"then":{"multipleOf":2},"else":{"maximum":3}}`, `11`, false},
	{"if else", `{"if":{"minimum":10},"then":{"multipleOf":2},"else":{"maximum":3}}`, `2`, true},
	{"if else bad", `{"if":{"minimum":10},"then":{"multipleOf":2},"else":{"maximum":3}}`, `5`, false},
	{"then without if", `{"then":false}`, `1`, true},

	// unevaluatedProperties
	{"uneval props direct", `{"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1}`, true},
	{"uneval props extra", `{"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1,"b":2}`, false},
	{"uneval props allOf", `{"allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, `{"a":1}`, true},
	{"uneval props allOf extra", `{"allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, `{"a":1,"b":1}`, false},
	{"uneval props anyOf", `{"anyOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{}},"required":["b"]}],"unevaluatedProperties":false}`, `{"a":"x","b":1}`, true},
	{"uneval props failed branch", `{"anyOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{}},"required":["b"]}],"unevaluatedProperties":false}`, `{"a":1,"b":1}`, false},
	{"uneval props oneOf", `{"oneOf":[{"properties":{"a":{}},"required":["a"]},{"properties":{"b":{}},"required":["b"]}],"unevaluatedProperties":false}`, `{"b":1}`, true},
	{"uneval props if then", `{"if":{"properties":{"k":{"const":1}}},"then":{"properties":{"t":{}}},"else":{"properties":{"e":{}}},"unevaluatedProperties":false}`, `{"k":1,"t":1}`, true},
	{"uneval props if then bad", `{"if":{"properties":{"k":{"const":1}}},"then":{"properties":{"t":{}}},"else":{"properties":{"e":{}}},"unevaluatedProperties":false}`, `{"k":1,"e":1}`, false},
	{"uneval props else", `{"if":{"properties":{"k":{"const":1}},"required":["k"]},"then":{"properties":{"t":{}}},"else":{"properties":{"e":{}}},"unevaluatedProperties":false}`, `{"e":1}`, true},
	{"uneval props ref", `{"$defs":{"d":{"properties":{"a":{}}}},"$ref":"#/$defs/d","properties":{"b":{}},"unevaluatedProperties":false}`, `{"a":1,"b":1}`, true},
	{"uneval props ref extra", `{"$defs":{"d":{"properties":{"a":{}}}},"$ref":"#/$defs/d","unevaluatedProperties":false}`, `{"a":1,"c":1}`, false},
	{"uneval props patternProperties", `{"patternProperties":{"^x":{}},"unevaluatedProperties":false}`, `{"xa":1}`, true},
	{"uneval props additionalProperties", `{"additionalProperties":true,"unevaluatedProperties":false}`, `{"xa":1}`, true},
	{"uneval props dependentSchemas", `{"dependentSchemas":{"a":{"properties":{"b":{}}}},"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1,"b":1}`, true},
	{"uneval props schema", `{"properties":{"a":{}},"unevaluatedProperties":{"type":"string"}}`, `{"a":1,"b":"x"}`, true},
	{"uneval props schema bad", `{"properties":{"a":{}},"unevaluatedProperties":{"type":"string"}}`, `{"a":1,"b":2}`, false},
	{"uneval props cousins", `{"allOf":[{"properties":{"a":{}}},{"unevaluatedProperties":false}]}`, `{"a":1}`, false},
	{"uneval props nested", `{"allOf":[{"properties":{"a":{}},"unevaluatedProperties":false}],"properties":{"b":{}},"unevaluatedProperties":false}`, `{"a":1}`, true},
	{"uneval props not", `{"not":{"not":{"properties":{"a":{}}}},"unevaluatedProperties":false}`, `{"a":1}`, false},

	// unevaluatedItems
	{"uneval items prefix", `{"prefixItems":[{}],"unevaluatedItems":false}`, `[1]`, true},
	{"uneval items prefix bad", `{"prefixItems":[{}],"unevaluatedItems":false}`, `[1,2]`, false},
	{"uneval items allOf", `{"allOf":[{"prefixItems":[{},{}]}],"unevaluatedItems":false}`, `[1,2]`, true},
	{"uneval items items", `{"items":{"type":"integer"},"unevaluatedItems":false}`, `[1,2]`, true},
	{"uneval items contains", `{"contains":{"const":1},"unevaluatedItems":{"const":2}}`, `[1,2,1]`, true},
	{"uneval items contains bad", `{"contains":{"const":1},"unevaluatedItems":{"const":2}}`, `[1,3]`, false},
	{"uneval items anyOf", `{"anyOf":[{"prefixItems":[{"const":1}]},{"prefixItems":[{},{"const":2}]}],"unevaluatedItems":false}`, `[1,2]`, true},
	{"uneval items anyOf bad", `{"anyOf":[{"prefixItems":[{"const":1}]},{"prefixItems":[{},{"const":2}]}],"unevaluatedItems":false}`, `[1,3]`, false},

	// references
	{"ref defs", `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`, `1`, false},
	{"ref definitions", `{"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}}}`, `{"a":"x"}`, true},
	{"ref pointer into properties", `{"properties":{"a":{"items":{"type":"integer"}},"b":{"$ref":"#/properties/a/items"}}}`, `{"b":"x"}`, false},
	{"ref escaped", `{"$defs":{"a/b":{"type":"integer"},"c~d":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a~1b"},"y":{"$ref":"#/$defs/c~0d"}}}`, `{"x":1,"y":"s"}`, true},
	{"ref escaped bad", `{"$defs":{"a/b":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/a~1b"}}}`, `{"x":"s"}`, false},
	{"ref percent", `{"$defs":{"a b":{"type":"integer"},"p%q":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a%20b"},"y":{"$ref":"#/$defs/p%25q"}}}`, `{"x":1,"y":1}`, false},
	{"ref anchor", `{"$defs":{"s":{"$anchor":"str","type":"string"}},"$ref":"#str"}`, `"x"`, true},
	{"ref anchor bad", `{"$defs":{"s":{"$anchor":"str","type":"string"}},"$ref":"#str"}`, `1`, false},
	{"ref root recursive", `{"properties":{"child":{"$ref":"#"},"v":{"type":"integer"}},"additionalProperties":false}`, `{"v":1,"child":{"v":2,"child":{"v":3}}}`, true},
	{"ref root recursive bad", `{"properties":{"child":{"$ref":"#"},"v":{"type":"integer"}},"additionalProperties":false}`, `{"v":1,"child":{"child":{"v":"x"}}}`, false},
	{"ref recursive defs", `{"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kids"]}},"$ref":"#/$defs/node"}`, `{"kids":[{"kids":[]},{"kids":[{"kids":[]}]}]}`, true},
	{"ref recursive defs bad", `{"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kids"]}},"$ref":"#/$defs/node"}`, `{"kids":[{"kids":[{}]}]}`, false},
	{"ref with sibling keywords", `{"$defs":{"i":{"type":"integer"}},"$ref":"#/$defs/i","minimum":5}`, `3`, false},
	{"ref into unknown keyword", `{"x-lib":{"s":{"type":"string"}},"$ref":"#/x-lib/s"}`, `1`, false},
	{"ref id scoping", `{"$id":"https://example.com/root.json","$defs":{"a":{"$id":"a.json","type":"integer"}},"$ref":"a.json"}`, `"x"`, false},
	{"ref id absolute", `{"$id":"https://example.com/root.json","$defs":{"a":{"$id":"https://example.com/a.json","$defs":{"b":{"type":"string"}}}},"$ref":"https://example.com/a.json#/$defs/b"}`, `"x"`, true},
	{"ref id relative pointer", `{"$id":"https://example.com/root.json","$defs":{"s":{"type":"string"}},"$ref":"root.json#/$defs/s"}`, `1`, false},
	{"dynamicRef static", `{"$dynamicAnchor":"node","properties":{"c":{"$dynamicRef":"#node"}},"type":"object"}`, `{"c":{"c":1}}`, false},

	// draft-07
	{"draft7 items array", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, `["a"]`, true},
	{"draft7 additionalItems", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`, false},
	{"draft7 additionalItems schema", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{}],"additionalItems":{"type":"integer"}}`, `["a",1,"b"]`, false},
	{"draft7 ref overrides siblings", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"i":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/i","minimum":5}}}`, `{"a":3}`, true},
	{"draft7 ref ignores sibling id", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"allOf":[{"$id":"https://other.example/","$ref":"#/definitions/s"}]}`, `1`, false},
	{"draft7 dependencies", `{"$schema":"http://json-schema.org/draft-07/schema","dependencies":{"a":["b"],"c":{"required":["d"]}}}`, `{"c":1}`, false},
	{"draft7 dependencies ok", `{"$schema":"http://json-schema.org/draft-07/schema","dependencies":{"a":["b"],"c":{"required":["d"]}}}`, `{"a":1,"b":1}`, true},
	{"2020-12 with hash", `{"$schema":"https://json-schema.org/draft/2020-12/schema#","type":"string"}`, `1`, false},

	// MCP fixture
	{"mcp valid", mcpFixture, `{"name":"a","contactMethod":"phone","phone":"1"}`, true},
	{"mcp email valid", mcpFixture, `{"name":"a","contactMethod":"email","email":"a@b"}`, true},
	{"mcp no contact", mcpFixture, `{"name":"a"}`, false},
	{"mcp phone method without phone", mcpFixture, `{"name":"a","contactMethod":"phone","email":"a@b"}`, false},
	{"mcp extra property", mcpFixture, `{"name":"a","contactMethod":"phone","phone":"1","x":1}`, false},
	{"mcp address ok", mcpFixture, `{"phone":"1","address":{"street":"s","city":"c"}}`, false},
	{"mcp address ok email", mcpFixture, `{"email":"e","address":{"street":"s","city":"c"}}`, true},
	{"mcp address not object", mcpFixture, `{"email":"e","address":"Main St"}`, false},
	{"mcp address bad city", mcpFixture, `{"email":"e","address":{"street":"s","city":5}}`, false},
	{"mcp bad enum", mcpFixture, `{"email":"e","contactMethod":"fax"}`, false},
}

// seq returns the JSON numbers 0..n-1 separated by commas.
func seq(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonText(i))
	}
	return b.String()
}

func TestValidate(t *testing.T) {
	for _, tc := range validationCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			// json.Number instances
			checkPlain(t, s, []byte(tc.instance))
			err = s.ValidateJSON([]byte(tc.instance))
			if (err == nil) != tc.valid {
				t.Errorf("ValidateJSON(%s) = %v, want valid=%v", tc.instance, err, tc.valid)
			}
			if err != nil {
				var ves ValidationErrors
				if !errors.As(err, &ves) || len(ves) == 0 {
					t.Errorf("error %v is not a non-empty ValidationErrors", err)
				}
			}
			// float64 instances
			var inst any
			if err := json.Unmarshal([]byte(tc.instance), &inst); err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(inst); (err == nil) != tc.valid {
				t.Errorf("Validate(float64 %s) = %v, want valid=%v", tc.instance, err, tc.valid)
			}
		})
	}
}

func TestValidateErrors(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"age":{"type":"integer","minimum":0},"address":{"type":"object","properties":{"city":{"type":"string"}}},"tags":{"items":{"type":"string"}}},"required":["name"]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.ValidateJSON([]byte(`{"age":-1,"address":{"city":7},"tags":["a",2]}`))
	var ves ValidationErrors
	if !errors.As(err, &ves) {
		t.Fatalf("got %v, want ValidationErrors", err)
	}
	want := map[string]string{
		"":              "required",
		"/age":          "minimum",
		"/address/city": "type",
		"/tags/1":       "type",
	}
	if len(ves) != len(want) {
		t.Fatalf("got %d errors (%v), want %d", len(ves), err, len(want))
	}
	for _, e := range ves {
		if want[e.Path] != e.Keyword {
			t.Errorf("unexpected error %+v", *e)
		}
	}
	if !strings.Contains(err.Error(), "/age: must be >= 0") || !strings.Contains(err.Error(), "; ") {
		t.Errorf("message %q lacks expected text", err.Error())
	}
	if !strings.Contains(err.Error(), `(root): missing required property "name"`) {
		t.Errorf("message %q lacks root error", err.Error())
	}
}

func TestValidateErrorLimitAndSummary(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"items":{"type":"string"}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.ValidateJSON([]byte(`[` + seq(50) + `]`))
	var ves ValidationErrors
	if !errors.As(err, &ves) || len(ves) != maxErrors {
		t.Fatalf("got %d errors, want %d", len(ves), maxErrors)
	}

	s, err = Compile(json.RawMessage(`{"anyOf":[{"type":"string","minLength":3},{"type":"integer","minimum":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(float64(1))
	if !errors.As(err, &ves) || len(ves) != 1 || ves[0].Keyword != "anyOf" {
		t.Fatalf("anyOf: got %v, want a single anyOf error", err)
	}
	s, err = Compile(json.RawMessage(`{"oneOf":[{"type":"integer"},{"minimum":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(float64(1))
	if !errors.As(err, &ves) || len(ves) != 1 || ves[0].Keyword != "oneOf" {
		t.Fatalf("oneOf: got %v, want a single oneOf error", err)
	}
}

func TestValidateGoValues(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":10},"l":{"type":"array","items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{"n": 3, "l": []string{"a"}}); err != nil {
		t.Errorf("valid Go values rejected: %v", err)
	}
	if err := s.Validate(map[string]any{"n": int64(11)}); err == nil {
		t.Error("n=11 accepted")
	}
	if err := s.Validate(map[string]any{"n": json.Number("3.0")}); err != nil {
		t.Errorf("json.Number 3.0 rejected: %v", err)
	}
	if err := s.Validate(struct {
		N int `json:"n"`
	}{N: 20}); err == nil {
		t.Error("struct with n=20 accepted")
	}
	if err := s.Validate(map[string]any{"n": make(chan int)}); err == nil {
		t.Error("channel accepted")
	}
	if err := s.ValidateJSON([]byte(`{"n":`)); err == nil {
		t.Error("malformed JSON accepted")
	} else if errors.As(err, new(ValidationErrors)) {
		t.Error("malformed JSON reported as ValidationErrors")
	}
}

func TestFormatAssertion(t *testing.T) {
	cases := []struct {
		format, value string
		valid         bool
	}{
		{"date-time", "2024-02-29T12:30:00Z", true},
		{"date-time", "2024-02-29t12:30:00.123+05:30", true},
		{"date-time", "2023-02-29T12:30:00Z", false},
		{"date-time", "2024-01-01T12:30:00", false},
		{"date-time", "1998-12-31T23:59:60Z", true},
		{"date-time", "1998-12-31T22:59:60Z", false},
		{"date", "2024-12-31", true},
		{"date", "2024-13-01", false},
		{"time", "08:30:06.283185Z", true},
		{"time", "08:30:06", false},
		{"time", "24:00:00Z", false},
		{"email", "joe.bloggs@example.com", true},
		{"email", "joe..bloggs@example.com", false},
		{"email", "no-at-sign", false},
		{"email", "a@[127.0.0.1]", true},
		{"uri", "https://example.com/a?b#c", true},
		{"uri", "urn:isbn:0451450523", true},
		{"uri", "/relative/path", false},
		{"uri", "http://example.com/<tag>", false},
		{"uri", "http://[2001:db8::1]/path", true},
		{"uri", "http://example.com/a[1]", false},
		{"uuid", "2EB8AA08-AA98-11EA-B4AA-73B441D16380", true},
		{"uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d1638", false},
		{"ipv4", "192.168.0.1", true},
		{"ipv4", "256.0.0.1", false},
		{"ipv4", "01.2.3.4", false},
		{"ipv6", "::ffff:1.2.3.4", true},
		{"ipv6", "fe80::1%eth0", false},
		{"ipv6", "1.2.3.4", false},
		{"hostname", "www.example.com", true},
		{"hostname", "-bad.example", false},
		{"hostname", "example.com.", false},
		{"hostname", "ab--cd.example", false},
		{"hostname", strings.Repeat("a", 64) + ".com", false},
		{"unknown-format", "anything", true},
	}
	for _, tc := range cases {
		s, err := CompileWith(json.RawMessage(`{"format":"`+tc.format+`"}`), CompileOptions{AssertFormat: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(tc.value); (err == nil) != tc.valid {
			t.Errorf("format %s %q: got %v, want valid=%v", tc.format, tc.value, err, tc.valid)
		}
		if err := s.Validate(float64(1)); err != nil {
			t.Errorf("format %s applied to a number: %v", tc.format, err)
		}
	}
}

func TestConcurrentValidate(t *testing.T) {
	s, err := Compile(json.RawMessage(mcpFixture))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				inst := map[string]any{"email": "e"}
				if (i+j)%2 == 0 {
					inst["x"] = 1
				}
				err := s.Validate(inst)
				if (err == nil) != ((i+j)%2 != 0) {
					t.Errorf("unexpected result %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
