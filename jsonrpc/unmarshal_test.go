package jsonrpc

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type callParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Meta      *struct {
		Token json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// rawKeeper decodes itself with its own method.
type rawKeeper struct{ raw string }

func (r *rawKeeper) UnmarshalJSON(b []byte) error {
	r.raw = string(b)
	return nil
}

// unmarshalTargets returns fresh pointers to values of several kinds that
// a JSON object (or, with array set, an array) fits.
func unmarshalTargets(array bool) []any {
	if array {
		return []any{new(any), new(json.RawMessage), new(jsontext.Value), new(rawKeeper), new([]callParams)}
	}
	return []any{new(callParams), new(any), new(map[string]any), new(map[string]json.RawMessage), new(json.RawMessage), new(jsontext.Value), new(rawKeeper)}
}

// TestUnmarshalRefuses: what is not JSON text, or repeats a name, is a
// *SyntaxError saying where, whatever the Go type (of the shape the
// document has: another shape is a type error before the rest is read).
func TestUnmarshalRefuses(t *testing.T) {
	for _, c := range []struct {
		in     string
		dup    bool
		member string
		offset int
	}{
		{`{"name":"a","name":"b"}`, true, "name", 12},
		{`{"name":"a","n\u0061me":"b"}`, true, "name", 12},
		{`{"arguments":{"x":{"max":1,"y":5},"x":{"max":1}}}`, true, "x", 34},
		{`{"_meta":{"progressToken":1,"progressToken":2}}`, true, "progressToken", 28},
		{`[{"name":"a"},{"other":{"k":[{"z":1,"z":2}]}}]`, true, "z", 36},
		{"{\"name\":\"\xff\"}", false, "", 9},
		{`{"name":"a"`, false, "", 11},
		{"\xef\xbb\xbf{}", false, "", 0},
		{`{"name":"a"} {}`, false, "", 13},
		{`{"name":"\ud800"}`, false, "", 9},
	} {
		for _, v := range unmarshalTargets(strings.HasPrefix(c.in, "[")) {
			err := Unmarshal([]byte(c.in), v)
			var se *SyntaxError
			if !errors.As(err, &se) || se.Duplicate != c.dup || se.Member != c.member || se.Offset != c.offset {
				t.Errorf("Unmarshal(%s, %T) = %v (%+v), want duplicate %v %q at %d", c.in, v, err, se, c.dup, c.member, c.offset)
			}
		}
	}
	if err := Unmarshal([]byte(`{"a":1,"a":2}`), new(any)); err == nil || err.Error() != `jsonrpc: duplicate member "a" at offset 7` {
		t.Errorf("message: %v", err)
	}
	if err := Unmarshal([]byte(`{"a":{"b":1,"b":2}}`), new(any)); err == nil || err.(*SyntaxError).Pointer != "/a/b" {
		t.Errorf("pointer: %#v", err)
	}
}

func TestUnmarshalExactNames(t *testing.T) {
	var p callParams
	in := `{"Name":"x","NAME":"y","arguments":{"A":1,"a":2},"Arguments":{"b":3},"_META":{"progressToken":1},"_meta":{"ProgressToken":2}}`
	if err := Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "" || !reflect.DeepEqual(p.Arguments, map[string]any{"A": 1.0, "a": 2.0}) || p.Meta == nil || p.Meta.Token != nil {
		t.Errorf("got %+v, meta %+v", p, p.Meta)
	}
	// Embedded structs, `,string` fields and structs behind interfaces
	// held as pointers: exact names too.
	type Common struct {
		ID int `json:"id,string"`
	}
	type Named struct {
		Name string `json:"name"`
	}
	type withEmbedded struct {
		Common
		*Named
		Text string `json:"text"`
	}
	var w withEmbedded
	if err := Unmarshal([]byte(`{"ID":"1","id":"2","NAME":"x","name":"y","TEXT":"t"}`), &w); err != nil || w.ID != 2 || w.Named == nil || w.Name != "y" || w.Text != "" {
		t.Errorf("embedded: %v %+v", err, w)
	}
	var held any = &callParams{}
	if err := Unmarshal([]byte(`{"Name":"x"}`), &held); err != nil || held.(*callParams).Name != "" {
		t.Errorf("held pointer: %v %+v", err, held)
	}
	var viaJSON callParams
	if err := json.Unmarshal([]byte(`{"NAME":"y"}`), &viaJSON); err != nil || viaJSON.Name != "y" {
		t.Errorf("encoding/json no longer folds case: %+v", viaJSON)
	}
}

func TestUnmarshalSemantics(t *testing.T) {
	var p callParams
	if err := Unmarshal([]byte(` {"name":"echo","arguments":{"text":"hi","n":[1,null]},"_meta":{"progressToken":"t"},"extra":[1]} `), &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "echo" || !reflect.DeepEqual(p.Arguments, map[string]any{"text": "hi", "n": []any{1.0, nil}}) || string(p.Meta.Token) != `"t"` {
		t.Errorf("got %+v %+v", p, p.Meta)
	}
	var r rawKeeper
	if err := Unmarshal([]byte(`{"k" : [1]}`), &r); err != nil || r.raw != `{"k" : [1]}` {
		t.Errorf("Unmarshaler: %q %v", r.raw, err)
	}
	var se *jsonv2.SemanticError
	if err := Unmarshal([]byte(`{"name":1,"arguments":{"a":1}}`), &p); !errors.As(err, &se) || se.JSONPointer != "/name" {
		t.Errorf("type error: %v %+v", err, p)
	}
	// null is the zero value, for any Go type.
	p = callParams{Name: "x"}
	if err := Unmarshal([]byte(`{"name":null}`), &p); err != nil || p.Name != "" {
		t.Errorf("null: %v %+v", err, p)
	}
	var ie *json.InvalidUnmarshalError
	for _, v := range []any{nil, callParams{}, (*callParams)(nil), 3} {
		if err := Unmarshal([]byte(`{}`), v); !errors.As(err, &ie) {
			t.Errorf("Unmarshal into %#v: %v", v, err)
		}
	}
}

func TestUnmarshalConcurrent(t *testing.T) {
	type fresh struct {
		A []int `json:"a"`
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				var v fresh
				if err := Unmarshal([]byte(`{"a":[1,2]}`), &v); err != nil || len(v.A) != 2 {
					t.Errorf("%v %v", v, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkUnmarshal(b *testing.B) {
	data := []byte(`{"name":"echo","arguments":{"text":"hello, world","count":3},"_meta":{"progressToken":"abc"}}`)
	for _, bc := range []struct {
		name string
		fn   func([]byte, any) error
	}{{"jsonrpc", Unmarshal}, {"encoding_json", json.Unmarshal}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var p callParams
				if err := bc.fn(data, &p); err != nil || !strings.HasPrefix(p.Name, "echo") {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestUnmarshalNumber: an encoding/json Number takes a JSON number and
// keeps its text, as encoding/json reads it; nothing else.
func TestUnmarshalNumber(t *testing.T) {
	var v struct {
		N json.Number   `json:"n"`
		L []json.Number `json:"l"`
	}
	if err := Unmarshal([]byte(`{"n":9007199254740993,"l":[1.50,-0e1,null]}`), &v); err != nil || v.N != "9007199254740993" || !reflect.DeepEqual(v.L, []json.Number{"1.50", "-0e1", ""}) {
		t.Errorf("%v %+v", err, v)
	}
	// Behind an interface, a pointer, a map, an array.
	type inner struct {
		N json.Number `json:"n"`
	}
	var held any = &inner{}
	var viaMap map[string][1]*inner
	if err := Unmarshal([]byte(`{"n":1e2}`), &held); err != nil || held.(*inner).N != "1e2" {
		t.Errorf("behind an interface: %v %+v", err, held)
	}
	if err := Unmarshal([]byte(`{"k":[{"n":-3}]}`), &viaMap); err != nil || viaMap["k"][0].N != "-3" {
		t.Errorf("behind a map: %v %+v", err, viaMap)
	}
	for _, in := range []string{`{"n":"1"}`, `{"n":true}`, `{"n":[1]}`, `{"n":{}}`} {
		var se *jsonv2.SemanticError
		if err := Unmarshal([]byte(in), &v); !errors.As(err, &se) {
			t.Errorf("Unmarshal(%s) = %v, want a type error", in, err)
		}
	}
}
