package schema

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name, schema, want string
	}{
		{"invalid json", `{"type":`, "invalid JSON"},
		{"trailing data", `{} {}`, "invalid JSON"},
		{"not a schema", `[1]`, "must be an object or a boolean"},
		{"unsupported dialect", `{"$schema":"http://json-schema.org/draft-04/schema#"}`, "unsupported dialect"},
		{"dialect not string", `{"$schema":5}`, "unsupported dialect"},
		{"external https ref", `{"$ref":"https://example.com/s.json"}`, "external"},
		{"external http ref", `{"properties":{"a":{"$ref":"http://example.com/s.json#/x"}}}`, "unresolved"},
		{"external relative ref", `{"$ref":"other.json"}`, "external"},
		{"external relative to id", `{"$id":"https://example.com/root.json","$ref":"other.json"}`, "external"},
		{"missing pointer", `{"$ref":"#/$defs/missing"}`, "no value at JSON pointer"},
		{"missing anchor", `{"$ref":"#nope"}`, "anchor"},
		{"ref not a schema", `{"required":["a"],"$ref":"#/required/0"}`, "must be an object or a boolean"},
		{"ref cycle", `{"$ref":"#"}`, "cycle"},
		{"ref cycle via defs", `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, "cycle"},
		{"bad pattern", `{"pattern":"(?<=x)"}`, "invalid regular expression"},
		{"bad patternProperties", `{"patternProperties":{"[":{}}}`, "invalid regular expression"},
		{"bad type", `{"type":"float"}`, "unknown type"},
		{"bad type kind", `{"type":1}`, "type must be"},
		{"negative minLength", `{"minLength":-1}`, "non-negative integer"},
		{"fractional maxItems", `{"maxItems":1.5}`, "non-negative integer"},
		{"minimum string", `{"minimum":"1"}`, "must be a number"},
		{"multipleOf zero", `{"multipleOf":0}`, "greater than 0"},
		{"required not strings", `{"required":[1]}`, "array of strings"},
		{"empty allOf", `{"allOf":[]}`, "non-empty array"},
		{"properties not object", `{"properties":[]}`, "must be an object"},
		{"bad subschema", `{"properties":{"a":1}}`, `"#/properties/a"`},
		{"enum not array", `{"enum":1}`, "enum must be an array"},
		{"uniqueItems not bool", `{"uniqueItems":1}`, "boolean"},
		{"ref not string", `{"$ref":1}`, "must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(json.RawMessage(tc.schema))
			if err == nil {
				t.Fatalf("Compile(%s) succeeded, want error containing %q", tc.schema, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile(%s) = %v, want error containing %q", tc.schema, err, tc.want)
			}
		})
	}
}

// TestExternalRefNotFetched points a $ref at a live local HTTP server and
// checks that compiling never contacts it.
func TestExternalRefNotFetched(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	for _, ref := range []string{srv.URL + "/s.json", srv.URL + "/s.json#/$defs/x", "https://example.com/s.json"} {
		doc, _ := json.Marshal(map[string]any{"$ref": ref})
		_, err := Compile(doc)
		if err == nil || !strings.Contains(err.Error(), "external") || !strings.Contains(err.Error(), "unresolved") {
			t.Errorf("Compile(%s) = %v, want external/unresolved error", doc, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("server received %d requests", n)
	}
}

// TestNoNetworkImports checks that the package's non-test sources import no
// networking client packages at all.
func TestNoNetworkImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "net" || strings.HasPrefix(path, "net/http") || path == "net/rpc" || path == "net/smtp" || path == "os/exec" {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}

func TestRawPreserved(t *testing.T) {
	doc := `{ "x-unknown": {"keep": [1, 2]}, "type" : "object",  "b":1, "a":2 }`
	s, err := Compile(json.RawMessage(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Raw()); got != doc {
		t.Fatalf("Raw() = %s, want %s", got, doc)
	}
	raw := s.Raw()
	raw[0] = 'X'
	if string(s.Raw()) != doc {
		t.Fatal("Raw() exposes internal storage")
	}
}

func TestIsObjectSchema(t *testing.T) {
	cases := map[string]bool{
		`{"type":"object"}`:                    true,
		`{"type":["object"]}`:                  true,
		`{"type":"object","properties":{}}`:    true,
		`{"type":["object","null"]}`:           false,
		`{"type":"string"}`:                    false,
		`{"properties":{}}`:                    false,
		`true`:                                 false,
		`not json`:                             false,
		`{"$ref":"#/$defs/x","type":"object"}`: true,
		// Read as Compile reads a schema a peer sent: exact names, no
		// repeated member, UTF-8.
		`{"TYPE":"object"}`:                        false,
		`{"Type":"object"}`:                        false,
		`{"type":"string","type":"object"}`:        false,
		`{"type":"object","type":"object"}`:        false,
		"{\"type\":\"object\",\"title\":\"\xff\"}": false,
	}
	for doc, want := range cases {
		if got := IsObjectSchema(json.RawMessage(doc)); got != want {
			t.Errorf("IsObjectSchema(%s) = %v, want %v", doc, got, want)
		}
	}
}

func TestDeepRecursion(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"$defs":{"list":{"type":["object","null"],"properties":{"next":{"$ref":"#/$defs/list"}}}},"$ref":"#/$defs/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	inst := `null`
	for range 500 {
		inst = `{"next":` + inst + `}`
	}
	if err := s.ValidateJSON([]byte(inst)); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(inst, "null", "1", 1)
	if err := s.ValidateJSON([]byte(bad)); err == nil {
		t.Fatal("deep invalid instance accepted")
	} else if !strings.HasPrefix(err.Error(), strings.Repeat("/next", 500)+": ") {
		t.Fatalf("unexpected error path: %.80s", err.Error())
	}
}

func TestTrailingData(t *testing.T) {
	s, err := Compile(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{} }`, `1 2`, `"a"x`} {
		if err := s.ValidateJSON([]byte(in)); err == nil {
			t.Errorf("ValidateJSON(%s) accepted trailing data", in)
		}
	}
	if err := s.ValidateJSON([]byte(" {} \n")); err != nil {
		t.Errorf("surrounding whitespace rejected: %v", err)
	}
	if _, err := Compile(json.RawMessage(`{} ]`)); err == nil {
		t.Error("Compile accepted trailing data")
	}
}

// TestEvaluationLimit checks that an exponentially branching schema is cut
// off instead of running practically forever.
func TestEvaluationLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"$defs":{`)
	const n = 40
	for i := range n {
		fmt.Fprintf(&b, `"a%d":{"anyOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"a%d":false},"$ref":"#/$defs/a0"}`, n)
	s, err := Compile(json.RawMessage(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(nil)
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("got %v, want evaluation limit error", err)
	}
}

func TestValidateNoAllocs(t *testing.T) {
	s, err := Compile(json.RawMessage(mcpFixture))
	if err != nil {
		t.Fatal(err)
	}
	inst := map[string]any{"name": "a", "contactMethod": "phone", "phone": "1", "address": map[string]any{"city": "c"}}
	if n := testing.AllocsPerRun(100, func() {
		if err := s.Validate(inst); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Validate allocated %v times per call on success", n)
	}
}

// TestCompileRefusesAmbiguousDocuments: a schema document (which a peer
// may send, as to mcpkit check) is read under the same policy as an
// instance: a repeated member name or invalid UTF-8 is refused, not
// resolved one way here and another way by the peer.
func TestCompileRefusesAmbiguousDocuments(t *testing.T) {
	for _, doc := range []string{
		`{"type":"string","type":"object"}`,
		`{"properties":{"a":{"type":"string"},"a":{}}}`,
		`{"minimum":1,"mi\u006eimum":2}`,
		"{\"title\":\"\xff\"}",
	} {
		if _, err := Compile(json.RawMessage(doc)); err == nil {
			t.Errorf("Compile(%q) accepted", doc)
		}
	}
}
