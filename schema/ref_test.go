package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// mapLoader serves documents from memory and counts the requests per URI.
type mapLoader struct {
	docs  map[string]string
	calls map[string]int
}

func (l *mapLoader) load(uri string) (json.RawMessage, error) {
	if l.calls == nil {
		l.calls = make(map[string]int)
	}
	l.calls[uri]++
	doc, ok := l.docs[uri]
	if !ok {
		return nil, errors.New("not found")
	}
	return json.RawMessage(doc), nil
}

func mustCompile(t *testing.T, doc string, opts CompileOptions) *Schema {
	t.Helper()
	s, err := CompileWith(json.RawMessage(doc), opts)
	if err != nil {
		t.Fatalf("CompileWith(%s): %v", doc, err)
	}
	return s
}

func checkValid(t *testing.T, s *Schema, instance string, want bool) {
	t.Helper()
	err := s.ValidateJSON([]byte(instance))
	if got := err == nil; got != want {
		t.Errorf("ValidateJSON(%s) = %v, want valid=%v", instance, err, want)
	}
}

func TestLoaderResolvesRemoteReferences(t *testing.T) {
	l := &mapLoader{docs: map[string]string{
		"https://example.com/defs.json": `{
			"$defs": {
				"port": {"type": "integer", "minimum": 1, "maximum": 65535},
				"host": {"$anchor": "host", "type": "string", "minLength": 1},
				"endpoint": {"type": "object", "properties": {"host": {"$ref": "#host"}, "port": {"$ref": "#/$defs/port"}}, "required": ["host"]}
			}
		}`,
		// Served from one URI, identified by another: both name it.
		"https://example.com/moved.json": `{"$id": "https://example.com/names/v2", "$anchor": "name", "type": "string", "pattern": "^[a-z]+$"}`,
	}}
	s := mustCompile(t, `{
		"type": "object",
		"properties": {
			"endpoint": {"$ref": "https://example.com/defs.json#/$defs/endpoint"},
			"port": {"$ref": "https://example.com/defs.json#/$defs/port"},
			"name": {"$ref": "https://example.com/moved.json"},
			"alias": {"$ref": "https://example.com/names/v2#name"},
			"label": {"$ref": "https://example.com/moved.json#name"}
		}
	}`, CompileOptions{Loader: l.load})
	checkValid(t, s, `{"endpoint": {"host": "a", "port": 80}, "port": 443, "name": "x", "alias": "y", "label": "z"}`, true)
	checkValid(t, s, `{"endpoint": {"host": "", "port": 80}}`, false)
	checkValid(t, s, `{"endpoint": {"port": 80}}`, false)
	checkValid(t, s, `{"port": 0}`, false)
	checkValid(t, s, `{"name": "X"}`, false)
	checkValid(t, s, `{"alias": "X"}`, false)
	checkValid(t, s, `{"label": "X"}`, false)
	for uri, n := range l.calls {
		if n != 1 {
			t.Errorf("Loader called %d times for %s, want once", n, uri)
		}
	}
	if len(l.calls) != 2 {
		t.Errorf("Loader calls = %v, want one per document", l.calls)
	}
}

func TestLoaderRelativeReferences(t *testing.T) {
	l := &mapLoader{docs: map[string]string{
		"https://example.com/schemas/item.json": `{"type": "object", "properties": {"tag": {"$ref": "tag.json"}}}`,
		"https://example.com/schemas/tag.json":  `{"type": "string", "maxLength": 3}`,
	}}
	s := mustCompile(t, `{"$id": "https://example.com/schemas/list.json", "type": "array", "items": {"$ref": "item.json"}}`,
		CompileOptions{Loader: l.load})
	checkValid(t, s, `[{"tag": "abc"}]`, true)
	checkValid(t, s, `[{"tag": "abcd"}]`, false)

	// A boolean document is a schema too.
	l.docs["https://example.com/schemas/never.json"] = `false`
	s = mustCompile(t, `{"$id": "https://example.com/schemas/x.json", "properties": {"gone": {"$ref": "never.json"}}}`,
		CompileOptions{Loader: l.load})
	checkValid(t, s, `{"kept": 1}`, true)
	checkValid(t, s, `{"gone": 1}`, false)
}

func TestLoaderErrors(t *testing.T) {
	l := &mapLoader{docs: map[string]string{
		"https://example.com/bad.json":     `{"type": `,
		"https://example.com/old.json":     `{"$schema": "http://json-schema.org/draft-04/schema#"}`,
		"https://example.com/invalid.json": `{"$defs": {"x": {"type": "float"}}}`,
		"https://example.com/empty.json":   `{}`,
	}}
	cases := []struct{ ref, want string }{
		{"https://example.com/missing.json", "loading https://example.com/missing.json: not found"},
		{"https://example.com/bad.json", "invalid JSON"},
		{"https://example.com/old.json", "unsupported dialect"},
		{"https://example.com/invalid.json", `"https://example.com/invalid.json#/$defs/x": unknown type`},
		{"https://example.com/empty.json#/$defs/nope", `no value at JSON pointer "https://example.com/empty.json#/$defs/nope"`},
		{"https://example.com/empty.json#nope", `anchor "nope" not found`},
		{"empty.json", "relative reference without a base URI"},
	}
	for _, tc := range cases {
		doc, _ := json.Marshal(map[string]any{"$ref": tc.ref})
		_, err := CompileWith(doc, CompileOptions{Loader: l.load})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CompileWith(%s) = %v, want error containing %q", doc, err, tc.want)
		}
	}
}

// A loaded document keeps its own dialect: draft-07 ignores the siblings of
// "$ref" even when the referring document is 2020-12, and the other way round.
func TestLoaderDocumentDialect(t *testing.T) {
	l := &mapLoader{docs: map[string]string{
		"https://example.com/d7.json": `{"$schema": "http://json-schema.org/draft-07/schema#",
			"definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s", "maxLength": 1}`,
	}}
	s := mustCompile(t, `{"$ref": "https://example.com/d7.json", "minLength": 1}`, CompileOptions{Loader: l.load})
	checkValid(t, s, `"long"`, true)
	checkValid(t, s, `""`, false)
	checkValid(t, s, `1`, false)
}

// extensibleTree is a tree schema whose children refer to the node through
// the dynamic scope, and a stricter schema that extends it.
var extensibleTree = map[string]string{
	"https://example.com/tree": `{
		"$id": "https://example.com/tree",
		"$dynamicAnchor": "node",
		"type": "object",
		"properties": {
			"data": true,
			"children": {"type": "array", "items": {"$dynamicRef": "#node"}}
		}
	}`,
}

func TestDynamicRefUsesDynamicScope(t *testing.T) {
	l := &mapLoader{docs: extensibleTree}
	strict := mustCompile(t, `{
		"$id": "https://example.com/strict-tree",
		"$dynamicAnchor": "node",
		"$ref": "tree",
		"unevaluatedProperties": false
	}`, CompileOptions{Loader: l.load})
	checkValid(t, strict, `{"children": [{"data": 1, "children": [{"data": 2}]}]}`, true)
	// The misspelling is two levels down: only the strict node schema,
	// reached through the dynamic scope, rejects it.
	checkValid(t, strict, `{"children": [{"children": [{"daat": 2}]}]}`, false)

	loose := mustCompile(t, `{"$ref": "https://example.com/tree"}`, CompileOptions{Loader: l.load})
	checkValid(t, loose, `{"children": [{"children": [{"daat": 2}]}]}`, true)
}

func TestDynamicRefStaticCases(t *testing.T) {
	cases := []struct {
		name, schema, instance string
		valid                  bool
	}{
		// The outer resource declares no dynamic anchor "items": the
		// reference resolves within its own resource.
		{"no anchor in scope",
			`{"$id":"https://example.com/list","type":"array","items":{"$dynamicRef":"#items"},"$defs":{"i":{"$dynamicAnchor":"items","type":"string"}}}`,
			`["a",1]`, false},
		// "$anchor" does not take part in dynamic resolution.
		{"plain anchor is static",
			`{"$id":"https://example.com/root","$anchor":"items","$ref":"list","$defs":{"list":{"$id":"list","type":"array","items":{"$dynamicRef":"#items"},"$defs":{"i":{"$dynamicAnchor":"items","type":"string"}}}}}`,
			`["a","b"]`, true},
		// The outermost resource declaring the dynamic anchor wins.
		{"outermost wins",
			`{"$id":"https://example.com/root","$ref":"list","$defs":{"foo":{"$dynamicAnchor":"items","type":"integer"},"list":{"$id":"list","type":"array","items":{"$dynamicRef":"#items"},"$defs":{"i":{"$dynamicAnchor":"items","type":"string"}}}}}`,
			`[1,2]`, true},
		{"outermost wins, invalid",
			`{"$id":"https://example.com/root","$ref":"list","$defs":{"foo":{"$dynamicAnchor":"items","type":"integer"},"list":{"$id":"list","type":"array","items":{"$dynamicRef":"#items"},"$defs":{"i":{"$dynamicAnchor":"items","type":"string"}}}}}`,
			`["a"]`, false},
		// A pointer fragment makes "$dynamicRef" behave like "$ref".
		{"pointer fragment",
			`{"$id":"https://example.com/root","$ref":"list","$defs":{"foo":{"$dynamicAnchor":"items","type":"integer"},"list":{"$id":"list","type":"array","items":{"$dynamicRef":"#/$defs/i"},"$defs":{"i":{"$dynamicAnchor":"items","type":"string"}}}}}`,
			`[1]`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkValid(t, mustCompile(t, tc.schema, CompileOptions{}), tc.instance, tc.valid)
		})
	}
}

func TestDynamicRefCycleRejected(t *testing.T) {
	for _, doc := range []string{
		`{"$dynamicAnchor":"a","$dynamicRef":"#a"}`,
		// The cycle exists only through the dynamic scope.
		`{"$id":"https://example.com/r","$dynamicAnchor":"a","$ref":"s","$defs":{"s":{"$id":"s","$ref":"#/$defs/t","$defs":{"t":{"allOf":[{"$dynamicRef":"#a"}]},"u":{"$dynamicAnchor":"a","type":"object"}}}}}`,
	} {
		if _, err := Compile(json.RawMessage(doc)); err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("Compile(%s) = %v, want a reference cycle error", doc, err)
		}
	}
	// Without the outer dynamic anchor there is no cycle.
	s := mustCompile(t, `{"$id":"https://example.com/r","$ref":"s","$defs":{"s":{"$id":"s","$ref":"#/$defs/t","$defs":{"t":{"allOf":[{"$dynamicRef":"#a"}]},"u":{"$dynamicAnchor":"a","type":"object"}}}}}`, CompileOptions{})
	checkValid(t, s, `{}`, true)
	checkValid(t, s, `[]`, false)
}

func TestPatternECMAScriptEscapes(t *testing.T) {
	cases := []struct {
		pattern, s string
		match      bool
	}{
		{`^\s$`, "\u00a0", true},
		{`^\s$`, "\u2028", true},
		{`^\s$`, "\ufeff", true},
		{`^\s$`, "\u3000", true},
		{`^\s$`, "\v", true},
		{`^\s$`, " ", true},
		{`^\s$`, "x", false},
		{`^\S$`, "\u2003", false},
		{`^\S$`, "\u00a0", false},
		{`^\S$`, "x", true},
		{`^[\s]+$`, " \u00a0\t", true},
		{`^[a\s]+$`, "a\u2029a", true},
		{`^[\sa]+$`, "b", false},
		{`^\cJ$`, "\n", true},
		{`^\cj$`, "\n", true},
		{`^[\cI]$`, "\t", true},
		{`^\cJ$`, "J", false},
		{`^\\s$`, `\s`, true},
		{`^\\s$`, " ", false},
		{`^\[\s\]$`, "[ ]", true},
		{`^\d+\w*$`, "12ab_", true},
	}
	for _, tc := range cases {
		doc, _ := json.Marshal(map[string]any{"pattern": tc.pattern})
		s := mustCompile(t, string(doc), CompileOptions{})
		inst, _ := json.Marshal(tc.s)
		if got := s.ValidateJSON(inst) == nil; got != tc.match {
			t.Errorf("pattern %q on %q: match = %v, want %v", tc.pattern, tc.s, got, tc.match)
		}
	}

	s := mustCompile(t, `{"patternProperties":{"^\\S+$":{"type":"integer"}},"additionalProperties":false}`, CompileOptions{})
	checkValid(t, s, `{"a":1}`, true)
	checkValid(t, s, `{"a\u00a0b":1}`, false)

	_, err := Compile(json.RawMessage(`{"pattern":"(?<=\\s)x"}`))
	if err == nil || !strings.Contains(err.Error(), `(?<=\\s)x`) {
		t.Errorf("look-behind pattern: err = %v, want an error naming the pattern as written", err)
	}
}
