package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type golden struct {
	Common
	Title     string            `json:"title" description:"Title, shown to users" jsonschema:"minLength=1,maxLength=80"`
	Kind      string            `json:"kind,omitempty" jsonschema:"enum=note|task,default=note"`
	Priority  int               `json:"priority" jsonschema:"minimum=1,maximum=5,default=3,optional"`
	Ratio     float64           `json:"ratio,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1,multipleOf=0.05"`
	Count     uint8             `json:"count"`
	Done      bool              `json:"done"`
	Tags      []string          `json:"tags,omitempty" jsonschema:"minItems=1,maxItems=5,uniqueItems,pattern=^[a-z]+$" pattern:"^[a-z]{1,10}$"`
	Labels    map[string]string `json:"labels,omitempty"`
	Owner     *Person           `json:"owner" jsonschema:"required,title=Owner"`
	Due       time.Time         `json:"due,omitzero" jsonschema:"format=date-time"`
	Extra     any               `json:"extra,omitempty"`
	Raw       json.RawMessage   `json:"raw,omitempty"`
	Blob      []byte            `json:"blob,omitempty"`
	Levels    [2]int            `json:"levels"`
	Parent    *Node             `json:"parent,omitempty"`
	Code      string            `json:"code" pattern:"^[A-Z]{2,3}(,[A-Z]{2,3})*$"`
	Custom    Color             `json:"color"`
	Ignored   string            `json:"-"`
	unexposed int
}

type Common struct {
	ID      string `json:"id" jsonschema:"format=uuid"`
	Version int    `json:"version,omitempty"`
}

type Person struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty" jsonschema:"format=email"`
}

type Node struct {
	Value    string  `json:"value"`
	Children []*Node `json:"children,omitempty"`
}

type Color string

func (Color) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":"string","enum":["red","green"]}`)
}

const goldenSchema = `{"type":"object","properties":{` +
	`"id":{"type":"string","format":"uuid"},` +
	`"version":{"type":"integer"},` +
	`"title":{"type":"string","description":"Title, shown to users","minLength":1,"maxLength":80},` +
	`"kind":{"type":"string","enum":["note","task"],"default":"note"},` +
	`"priority":{"type":"integer","minimum":1,"maximum":5,"default":3},` +
	`"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1,"multipleOf":0.05},` +
	`"count":{"type":"integer","minimum":0},` +
	`"done":{"type":"boolean"},` +
	`"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]{1,10}$"},"minItems":1,"maxItems":5,"uniqueItems":true},` +
	`"labels":{"type":"object","additionalProperties":{"type":"string"}},` +
	`"owner":{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string","format":"email"}},"required":["name"],"additionalProperties":false,"title":"Owner"},` +
	`"due":{"type":"string","format":"date-time"},` +
	`"extra":{},` +
	`"raw":{},` +
	`"blob":{"type":"string","contentEncoding":"base64"},` +
	`"levels":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2},` +
	`"parent":{"$ref":"#/$defs/Node"},` +
	`"code":{"type":"string","pattern":"^[A-Z]{2,3}(,[A-Z]{2,3})*$"},` +
	`"color":{"type":"string","enum":["red","green"]}` +
	`},"required":["id","title","count","done","owner","levels","code","color"],"additionalProperties":false,` +
	`"$defs":{"Node":{"type":"object","properties":{"value":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["value"],"additionalProperties":false}}}`

func TestForGolden(t *testing.T) {
	got, err := For[golden]()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != goldenSchema {
		t.Fatalf("schema mismatch\n got: %s\nwant: %s", got, goldenSchema)
	}
	// Pointer roots are transparent and output is deterministic.
	again, err := For[*golden]()
	if err != nil || string(again) != string(got) {
		t.Fatalf("For[*golden] = %s, %v", again, err)
	}
	// The inferred schema compiles and accepts an encoded value.
	s, err := Compile(got)
	if err != nil {
		t.Fatal(err)
	}
	v := golden{Common: Common{ID: "x"}, Title: "t", Priority: 3, Owner: &Person{Name: "n"}, Code: "AB",
		Custom: "red", Tags: []string{"a"}, Parent: &Node{Value: "p", Children: []*Node{{Value: "c"}}}}
	data, _ := json.Marshal(v)
	if err := s.ValidateJSON(data); err != nil {
		t.Fatalf("encoded value rejected: %v\n%s", err, data)
	}
	v.Title = ""
	v.Custom = "blue"
	data, _ = json.Marshal(v)
	if err := s.ValidateJSON(data); err == nil {
		t.Fatal("invalid value accepted")
	}
}

type rootRec struct {
	Name string       `json:"name"`
	Next *rootRec     `json:"next,omitempty"`
	Kids []rootRec    `json:"kids,omitempty"`
	Pair *pairA       `json:"pair,omitempty"`
	M    map[int]uint `json:"m,omitempty"`
}

type pairA struct {
	B *pairB `json:"b,omitempty"`
}

type pairB struct {
	A *pairA `json:"a,omitempty"`
}

type embedBase struct {
	ID    int `json:"id"`
	Label string
}

type embedOther struct {
	Label string // conflicts with embedBase.Label at the same depth: dropped
	Note  string
}

type embedTagged struct {
	Remark string `json:"Note"` // tagged, so it wins over embedOther.Note
}

type embedPtr struct {
	Extra string `json:"extra"`
}

type embedder struct {
	embedBase
	embedOther
	embedTagged
	*embedPtr
	ID    string    `json:"ident"`
	Inner embedBase `json:"inner"`
}

func TestForShapes(t *testing.T) {
	cases := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[string](), `{"type":"string"}`},
		{reflect.TypeFor[int64](), `{"type":"integer"}`},
		{reflect.TypeFor[uint](), `{"type":"integer","minimum":0}`},
		{reflect.TypeFor[float32](), `{"type":"number"}`},
		{reflect.TypeFor[[]bool](), `{"type":"array","items":{"type":"boolean"}}`},
		{reflect.TypeFor[[]byte](), `{"type":"string","contentEncoding":"base64"}`},
		{reflect.TypeFor[map[string]any](), `{"type":"object","additionalProperties":{}}`},
		{reflect.TypeFor[any](), `{}`},
		{reflect.TypeFor[json.RawMessage](), `{}`},
		{reflect.TypeFor[time.Time](), `{"type":"string","format":"date-time"}`},
		{reflect.TypeFor[**int](), `{"type":"integer"}`},
		{reflect.TypeFor[struct{}](), `{"type":"object","properties":{},"additionalProperties":false}`},
		{reflect.TypeFor[rootRec](), `{"type":"object","properties":{"name":{"type":"string"},"next":{"$ref":"#"},"kids":{"type":"array","items":{"$ref":"#"}},"pair":{"$ref":"#/$defs/pairA"},"m":{"type":"object","propertyNames":{"pattern":"^-?[0-9]+$"},"additionalProperties":{"type":"integer","minimum":0}}},"required":["name"],"additionalProperties":false,"$defs":{"pairA":{"type":"object","properties":{"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/pairA"}},"additionalProperties":false}},"additionalProperties":false}}}`},
		{reflect.TypeFor[embedder](), `{"type":"object","properties":{"id":{"type":"integer"},"Note":{"type":"string"},"extra":{"type":"string"},"ident":{"type":"string"},"inner":{"type":"object","properties":{"id":{"type":"integer"},"Label":{"type":"string"}},"required":["id","Label"],"additionalProperties":false}},"required":["id","Note","ident","inner"],"additionalProperties":false}`},
	}
	for _, tc := range cases {
		got, err := ForType(tc.typ)
		if err != nil {
			t.Errorf("%v: %v", tc.typ, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%v:\n got: %s\nwant: %s", tc.typ, got, tc.want)
		}
		if _, err := Compile(got); err != nil {
			t.Errorf("%v: inferred schema does not compile: %v", tc.typ, err)
		}
	}
}

func TestForErrors(t *testing.T) {
	type badEnum struct {
		N int `json:"n" jsonschema:"enum=1|two"`
	}
	type badKey struct {
		S string `jsonschema:"minimun=1"`
	}
	type badMin struct {
		S string `jsonschema:"minimum=1"`
	}
	type badLen struct {
		N int `jsonschema:"minLength=1"`
	}
	type badItems struct {
		N int `jsonschema:"minItems=1"`
	}
	type badNumber struct {
		F float64 `jsonschema:"maximum=abc"`
	}
	type badPattern struct {
		S string `pattern:"(unclosed"`
	}
	type badDefault struct {
		B bool `jsonschema:"default=maybe"`
	}
	type badBoth struct {
		B bool `jsonschema:"required,optional"`
	}
	type badFlag struct {
		S string `jsonschema:"format"`
	}
	type badChan struct {
		C chan int `json:"c"`
	}
	type badFunc struct {
		F func() `json:"f"`
	}
	type badMapKey struct {
		M map[[2]int]string
	}
	cases := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[badEnum](), "badEnum.N"},
		{reflect.TypeFor[badKey](), `unknown jsonschema tag key "minimun"`},
		{reflect.TypeFor[badMin](), "requires a numeric field"},
		{reflect.TypeFor[badLen](), "requires a string field"},
		{reflect.TypeFor[badItems](), "requires a slice or array field"},
		{reflect.TypeFor[badNumber](), "badNumber.F"},
		{reflect.TypeFor[badPattern](), "invalid pattern"},
		{reflect.TypeFor[badDefault](), "not a boolean"},
		{reflect.TypeFor[badBoth](), "both required and optional"},
		{reflect.TypeFor[badFlag](), "needs a value"},
		{reflect.TypeFor[badChan](), "unsupported type chan int"},
		{reflect.TypeFor[badFunc](), "badFunc.F"},
		{reflect.TypeFor[badMapKey](), "unsupported map key type"},
		{reflect.TypeFor[complex128](), "unsupported type complex128"},
		{reflect.TypeFor[[]chan int](), "unsupported type"},
	}
	for _, tc := range cases {
		_, err := ForType(tc.typ)
		if err == nil {
			t.Errorf("%v: no error, want %q", tc.typ, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %q, want it to contain %q", tc.typ, err, tc.want)
		}
	}
	if _, err := ForType(nil); err == nil {
		t.Error("ForType(nil) succeeded")
	}
}

type badProvider struct{}

func (*badProvider) JSONSchema() json.RawMessage { return json.RawMessage(`{"type":`) }

func TestProviderErrors(t *testing.T) {
	if _, err := For[badProvider](); err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Fatalf("got %v, want invalid JSON error", err)
	}
}

// TestForMatchesEncodingJSON checks that inferred property names agree with
// the keys encoding/json produces for the same struct.
func TestForMatchesEncodingJSON(t *testing.T) {
	doc, err := For[embedder]()
	if err != nil {
		t.Fatal(err)
	}
	var sch struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(doc, &sch); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(embedder{embedPtr: &embedPtr{}})
	var enc map[string]any
	if err := json.Unmarshal(data, &enc); err != nil {
		t.Fatal(err)
	}
	if len(enc) != len(sch.Properties) {
		t.Fatalf("encoding/json keys %v, schema properties %s", enc, doc)
	}
	for k := range enc {
		if _, ok := sch.Properties[k]; !ok {
			t.Errorf("key %q missing from schema", k)
		}
	}
	s, err := Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateJSON(data); err != nil {
		t.Errorf("encoded value rejected: %v", err)
	}
}
