package jsondec

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

// decodeCase decodes in with Compile[T] and compares with want, or with
// the error message wantErr when it is set.
type decodeCase[T any] struct {
	in      string
	want    T
	wantErr string
}

func runCases[T any](t *testing.T, cases []decodeCase[T]) {
	t.Helper()
	dec := Compile[T]()
	for _, c := range cases {
		var got T
		err := dec([]byte(c.in), &got)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%T %s: error %v, want %q", got, c.in, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("%T %s: %v", got, c.in, err)
		case !reflect.DeepEqual(got, c.want):
			t.Errorf("%T %s:\n got %#v\nwant %#v", got, c.in, got, c.want)
		}
	}
}

type named struct {
	Name   string // untagged: the Go name
	Title  string `json:"title"`
	Bad    int    `json:"a\"b"` // not a valid name: the Go name is used
	Omit   int    `json:",omitempty"`
	Skip   int    `json:"-"`
	Dash   int    `json:"-,"`
	Z      int    `json:"One"` // tagged "One" wins over the untagged One
	One    int
	Other  int `json:"Other2"`
	hidden int
}

func TestFieldNames(t *testing.T) {
	runCases(t, []decodeCase[named]{
		{in: `{"Name":"n","title":"t","Bad":1,"Omit":2,"Skip":3,"-":4}`, want: named{Name: "n", Title: "t", Bad: 1, Omit: 2, Dash: 4}},
		// Exact matching only.
		{in: `{"name":"n","NAME":"n","Title":"t","TITLE":"t","bad":1,"omit":2,"hidden":6,"other2":7}`, want: named{}},
		{in: `{"One":4,"one":5,"Other2":6,"Other":7}`, want: named{Z: 4, Other: 6}},
	})
	// Fields of the same name (built with reflect, as vet rejects such
	// tags in source): one tagged field wins, otherwise none is decoded.
	intType := reflect.TypeFor[int]()
	for _, c := range []struct {
		fields []reflect.StructField
		in     string
		want   []int
	}{
		{[]reflect.StructField{{Name: "A", Type: intType, Tag: `json:"k"`}, {Name: "B", Type: intType, Tag: `json:"k"`}, {Name: "C", Type: intType}},
			`{"k":1,"A":2,"B":3,"C":4}`, []int{0, 0, 4}},
		{[]reflect.StructField{{Name: "A", Type: intType}, {Name: "B", Type: intType, Tag: `json:"A"`}},
			`{"A":1,"B":2}`, []int{0, 1}},
		{[]reflect.StructField{{Name: "A", Type: intType, Tag: `json:"B"`}, {Name: "B", Type: intType}, {Name: "C", Type: intType, Tag: `json:"B"`}},
			`{"A":1,"B":2,"C":3}`, []int{0, 0, 0}},
	} {
		typ := reflect.StructOf(c.fields)
		d := compile(typ)
		got, want := reflect.New(typ), reflect.New(typ)
		if err := decode(d, got.Type(), []byte(c.in), got.UnsafePointer()); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c.in), want.Interface()); err != nil {
			t.Fatal(err)
		}
		for i, w := range c.want {
			if g := got.Elem().Field(i).Int(); g != int64(w) || want.Elem().Field(i).Int() != int64(w) {
				t.Errorf("%v %s: field %d = %d (encoding/json %d), want %d", typ, c.in, i, g, want.Elem().Field(i).Int(), w)
			}
		}
	}
}

// TestExactCase is the one intended difference from encoding/json.
func TestExactCase(t *testing.T) {
	dec := Compile[echo]()
	for _, in := range []string{`{"TEXT":"x"}`, `{"Text":"x"}`, `{"tExt":"x"}`, `{"te\u0058t":"x"}`, "{\"\u212aey\":1}"} {
		var got echo
		if err := dec([]byte(in), &got); err != nil || got.Text != "" {
			t.Errorf("%s: %+v, %v", in, got, err)
		}
	}
	var got echo
	if err := dec([]byte(`{"TEXT":"x","te\u0078t":"y"}`), &got); err != nil || got.Text != "y" {
		t.Errorf("escaped key: %+v, %v", got, err)
	}
	var viaJSON echo
	if err := json.Unmarshal([]byte(`{"TEXT":"x"}`), &viaJSON); err != nil || viaJSON.Text != "x" {
		t.Errorf("encoding/json no longer folds case: %+v", viaJSON)
	}
}

// TestDuplicates: a member name repeated in any object of the input is
// refused, whatever the object is decoded into, or skipped.
func TestDuplicates(t *testing.T) {
	type many struct {
		F [70]int `json:"-"`
		A int     `json:"a"`
		B int     `json:"b"`
	}
	fields := make([]reflect.StructField, 70)
	for i := range fields {
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[int](), Tag: reflect.StructTag(fmt.Sprintf(`json:"f%d"`, i))}
	}
	wide := reflect.StructOf(fields)
	for _, c := range []struct {
		in     string
		member string
		offset int
	}{
		{`{"text":"a","text":"b"}`, "text", 12},
		{`{"text":"a","te\u0078t":"b"}`, "text", 12},
		{`{"te\u0078t":"a","text":"b"}`, "text", 17},
		{`{"zz":1,"text":"a","zz":2}`, "zz", 19},
		{`{"zz":{"q":1,"q":2}}`, "q", 13},
		{`{"zz":[{"q":1},{"q":1,"r":2,"\u0071":3}]}`, "q", 28},
		{`{"text":"x","uj":{"k":[{"a":1,"a":1}]}}`, "a", 30},
		{"{\"\\u00e9\":1,\"\xc3\xa9\":2}", "é", 12},
		{`{"":1,"":2}`, "", 6},
	} {
		for _, d := range []func([]byte) error{
			func(b []byte) error { var v echo; return Compile[echo]()(b, &v) },
			func(b []byte) error { var v all; return Compile[all]()(b, &v) },
			func(b []byte) error { var v any; return Compile[any]()(b, &v) },
			func(b []byte) error {
				var v map[string]json.RawMessage
				return Compile[map[string]json.RawMessage]()(b, &v)
			},
			func(b []byte) error { var v map[string]any; return Compile[map[string]any]()(b, &v) },
			func(b []byte) error { var v many; return Compile[many]()(b, &v) },
			func(b []byte) error {
				return decode(compile(wide), reflect.PointerTo(wide), b, reflect.New(wide).UnsafePointer())
			},
			func(b []byte) error { var v embedded; return Compile[embedded]()(b, &v) }, // encoding/json decodes it
		} {
			err := d([]byte(c.in))
			var syn *SyntaxError
			var ve *jsonvalid.Error
			if !errors.As(err, &syn) || !errors.As(err, &ve) || !ve.Duplicate || ve.Member != c.member || ve.Offset != c.offset {
				t.Errorf("%s: %v (%+v), want duplicate %q at %d", c.in, err, ve, c.member, c.offset)
			}
		}
	}
	// Fields past the 64th, and other names, in a struct with many fields.
	for _, in := range []string{`{"f69":1,"f69":2}`, `{"f1":1,"f69":2,"f1":3}`, `{"x":1,"f3":1,"x":2}`, `{"f70":1,"f69":1,"f70":1}`} {
		v := reflect.New(wide)
		if err := decode(compile(wide), v.Type(), []byte(in), v.UnsafePointer()); err == nil || !strings.Contains(err.Error(), "duplicate member") {
			t.Errorf("%s: %v", in, err)
		}
	}
	ok := `{"f0":0,"f1":1,"f63":63,"f64":64,"f69":69,"x":{"f0":0},"y":[{"f0":1},{"f0":2}]}`
	v := reflect.New(wide)
	if err := decode(compile(wide), v.Type(), []byte(ok), v.UnsafePointer()); err != nil || v.Elem().Field(69).Int() != 69 || v.Elem().Field(64).Int() != 64 {
		t.Errorf("%s: %v", ok, err)
	}
	// The merge that used to let a repeated member past a schema check.
	var a all
	if err := Compile[all]()([]byte(`{"in":{"a":1,"b":"x"},"in":{"a":1}}`), &a); err == nil || !strings.Contains(err.Error(), `duplicate member "in"`) {
		t.Errorf("merge: %v", err)
	}
}

// TestNamesAfterError: decoding that stops inside objects leaves no names
// behind for the next decode.
func TestNamesAfterError(t *testing.T) {
	dec := Compile[map[string]any]()
	deep := strings.Repeat(`{"a":{"b":1,"c":[{"d":1,"e":2}],"f":`, 12) + `{"z":1,"z":2}` + strings.Repeat(`}}`, 12)
	for range 50 {
		var v map[string]any
		if err := dec([]byte(deep), &v); err == nil || !strings.Contains(err.Error(), `duplicate member "z"`) {
			t.Fatalf("deep: %v", err)
		}
		if err := dec([]byte(`{"a":1,"b":{"c":1,"d":1},"x":2,"z":3}`), &v); err != nil {
			t.Fatalf("after an error: %v", err)
		}
	}
}

func TestScalars(t *testing.T) {
	runCases(t, []decodeCase[all]{
		{in: `{"s":"x","ms":"y","i":-5,"i8":-128,"i16":32767,"i32":-2147483648,"u":7,"u8":255,"u16":0,"u64":18446744073709551615,"f":-1.25e-3,"f32":0.5,"b":true}`,
			want: all{S: "x", MS: "y", I: -5, I8: -128, I16: 32767, I32: -2147483648, U: 7, U8: 255, U64: math.MaxUint64, F: -1.25e-3, F32: 0.5, B: true}},
		{in: `{"i":-0,"f":-0,"f32":1e-50}`, want: all{}},
		{in: `{"n":-1.5e+3,"i":1}`, want: all{N: "-1.5e+3", I: 1}},
		{in: `{"n":"42"}`, want: all{N: "42"}},
		// null leaves values that are not pointers, maps, slices or interfaces.
		{in: `{"s":null,"i":null,"b":null,"f":null,"ar":null,"in":null}`, want: all{}},
		{in: `{"i8":128}`, wantErr: "json: cannot unmarshal number 128 into Go struct field all.i8 of type int8"},
		{in: `{"i8":-129}`, wantErr: "number -129 into Go struct field all.i8 of type int8"},
		{in: `{"u8":-1}`, wantErr: "number -1 into Go struct field all.u8 of type uint8"},
		{in: `{"u":-0}`, wantErr: "number -0 into Go struct field all.u of type uint"},
		{in: `{"i":1.0}`, wantErr: "number 1.0 into Go struct field all.i of type int"},
		{in: `{"i":1e3}`, wantErr: "number 1e3 into Go struct field all.i of type int"},
		{in: `{"i":9223372036854775808}`, wantErr: "number 9223372036854775808 into Go struct field all.i of type int"},
		{in: `{"f":1e400}`, wantErr: "number 1e400 into Go struct field all.f of type float64"},
		{in: `{"f32":1e39}`, wantErr: "number 1e39 into Go struct field all.f32 of type float32"},
		{in: `{"s":1}`, wantErr: "json: cannot unmarshal number into Go struct field all.s of type string"},
		{in: `{"i":"1"}`, wantErr: "json: cannot unmarshal string into Go struct field all.i of type int"},
		{in: `{"b":"true"}`, wantErr: "cannot unmarshal string into Go struct field all.b of type bool"},
		{in: `{"s":true}`, wantErr: "cannot unmarshal bool into Go struct field all.s of type string"},
		{in: `{"s":[]}`, wantErr: "cannot unmarshal array into Go struct field all.s of type string"},
		{in: `{"s":{}}`, wantErr: "cannot unmarshal object into Go struct field all.s of type string"},
		{in: `{"n":"x"}`, wantErr: `json: invalid number literal, trying to unmarshal "\"x\"" into Number`},
		{in: `{"in":{"a":"x"}}`, wantErr: "cannot unmarshal string into Go struct field inner.in.a of type int"},
		{in: `{"ins":[{"a":1},{"d":{"a":true}}]}`, wantErr: "cannot unmarshal bool into Go struct field inner.ins.d.a of type int"},
		{in: `{"min":{"k":{"c":[1]}}}`, wantErr: "cannot unmarshal number into Go struct field inner.min.c of type string"},
		{in: `{"next":{"next":{"sl":["x"]}}}`, wantErr: "cannot unmarshal string into Go struct field all.next.next.sl of type int"},
	})
	// Top-level values.
	runCases(t, []decodeCase[int]{{in: ` 42 `, want: 42}, {in: `null`, want: 0}, {in: `"1"`, wantErr: "cannot unmarshal string into Go value of type int"}})
	runCases(t, []decodeCase[float32]{{in: `3.25`, want: 3.25}})
	runCases(t, []decodeCase[bool]{{in: `false`, want: false}, {in: `true`, want: true}, {in: `0`, wantErr: "number into Go value of type bool"}})
}

func TestStrings(t *testing.T) {
	runCases(t, []decodeCase[string]{
		{in: `"plain"`, want: "plain"},
		{in: `""`, want: ""},
		{in: `"\"\\\/\b\f\n\r\t"`, want: "\"\\/\b\f\n\r\t"},
		{in: `"\u0041\u00e9\u65e5\u0000"`, want: "Aé日\x00"},
		{in: `"\ud83d\ude00"`, want: "😀"},
		{in: `"\uD83D\uDE00"`, want: "😀"},
		{in: `"\ud800"`, want: "\ufffd"},
		{in: `"\ude00\ud83d"`, want: "\ufffd\ufffd"},
		{in: `"\ud83d\ud83d\ude00"`, want: "\ufffd😀"},
		{in: `"\ud83dx"`, want: "\ufffdx"},
		{in: `"\ud83d\u0041"`, want: "\ufffdA"},
		{in: `"\ud83d\n"`, want: "\ufffd\n"},
		{in: "\"h\xc3\xa9 \xef\xbf\xbd \xf0\x9f\x98\x80\"", want: "hé \ufffd 😀"},
		// Invalid UTF-8 is refused.
		{in: "\"\xff\xfe\"", wantErr: "syntax error at offset 1: invalid UTF-8 in string"},
		{in: "\"a\xe2\x82\"", wantErr: "syntax error at offset 2: invalid UTF-8 in string"},
		{in: "\"\xed\xa0\x80\"", wantErr: "invalid UTF-8 in string"},
		{in: "\"\xf4\x90\x80\x80\"", wantErr: "invalid UTF-8 in string"},
		{in: "\"\xc0\xaf\"", wantErr: "invalid UTF-8 in string"},
		{in: "\"ok\\n\xe9\"", wantErr: "syntax error at offset 5: invalid UTF-8 in string"},
		{in: "\"\x7f\"", want: "\x7f"},
		{in: "\"a\x01\"", wantErr: `invalid character '\x01' in string literal`},
		{in: "\"a\nb\"", wantErr: `invalid character '\n' in string literal`},
		{in: `"\x"`, wantErr: `invalid character 'x' in string escape code`},
		{in: `"\'"`, wantErr: `invalid character '\'' in string escape code`},
		{in: `"\u12G4"`, wantErr: `invalid character 'G' in \u hexadecimal character escape`},
		{in: `"\u12"`, wantErr: `invalid character '"' in \u hexadecimal character escape`},
		{in: `"abc`, wantErr: "unexpected end of JSON input"},
		{in: `"\`, wantErr: "unexpected end of JSON input"},
		{in: `"\u00`, wantErr: "unexpected end of JSON input"},
	})
	runCases(t, []decodeCase[any]{{in: `"\ud800x"`, want: "\ufffdx"}})
	runCases(t, []decodeCase[map[string]int]{{in: `{"\u00e9\ud800":1,"a\/b":2}`, want: map[string]int{"é\ufffd": 1, "a/b": 2}}})
}

func TestPointersAndNull(t *testing.T) {
	one, x := 1, "x"
	px := &x
	runCases(t, []decodeCase[all]{
		{in: `{"p":1,"pp":"x"}`, want: all{P: &one, PP: &px}},
		{in: `{"p":null,"pp":null}`, want: all{}},
		{in: `{"pa":null}`, want: all{}},
		{in: `{"pa":{"k":null}}`, want: all{PA: ptr[any](map[string]any{"k": nil})}},
		{in: `{"sl":null,"m":null,"a":null,"bs":null,"pin":null}`, want: all{}},
	})
	runCases(t, []decodeCase[*inner]{{in: `null`, want: nil}, {in: `{"a":1}`, want: &inner{A: 1}}})
	runCases(t, []decodeCase[**int]{{in: `2`, want: ptr(ptr(2))}, {in: `null`, want: nil}})
	// A pointer already set is decoded into; null sets it to nil.
	dec := Compile[all]()
	v := all{P: ptr(5), PIn: &inner{A: 1, B: "keep"}}
	p := v.P
	if err := dec([]byte(`{"p":6,"pin":{"a":2}}`), &v); err != nil || v.P != p || *p != 6 || !reflect.DeepEqual(*v.PIn, inner{A: 2, B: "keep"}) {
		t.Errorf("decode into set pointers: %v %+v", err, v)
	}
	if err := dec([]byte(`{"p":null}`), &v); err != nil || v.P != nil {
		t.Errorf("null into set pointer: %v %+v", err, v)
	}
}

func ptr[T any](v T) *T { return &v }

func TestSlicesArraysMaps(t *testing.T) {
	runCases(t, []decodeCase[all]{
		{in: `{"sl":[1,2,3],"ss":[["a"],[],null]}`, want: all{Sl: []int{1, 2, 3}, SS: [][]string{{"a"}, {}, nil}}},
		{in: `{"sl":[]}`, want: all{Sl: []int{}}},
		{in: `{"ar":["a","b","c"],"ab":[1,2]}`, want: all{Ar: [2]string{"a", "b"}, AB: [3]byte{1, 2, 0}}},
		{in: `{"ar":["c"]}`, want: all{Ar: [2]string{"c", ""}}},
		{in: `{"ab":"AQID"}`, wantErr: "cannot unmarshal string into Go struct field all.ab of type [3]uint8"},
		{in: `{"m":{"a":1,"b":2,"c":3}}`, want: all{M: map[string]int{"a": 1, "b": 2, "c": 3}}},
		{in: `{"ms2":{"a":"x","b":null}}`, want: all{MS2: map[string]string{"a": "x", "b": ""}}},
		{in: `{"mi":{"-128":"a","127":"b"},"mu":{"65535":true},"mn":{"k":1}}`,
			want: all{MI: map[int8]string{-128: "a", 127: "b"}, MU: map[uint16]bool{65535: true}, MN: map[myString]int{"k": 1}}},
		{in: `{"mi":{"128":"a"}}`, wantErr: "cannot unmarshal number 128 into Go struct field all.mi of type int8"},
		{in: `{"mi":{"1.5":"a"}}`, wantErr: "cannot unmarshal number 1.5 into Go struct field all.mi of type int8"},
		{in: `{"mu":{"-1":true}}`, wantErr: "cannot unmarshal number -1 into Go struct field all.mu of type uint16"},
		{in: `{"mt":{"k":1,"\u0041":2}}`, want: all{MT: map[textKey]int{{"<k>"}: 1, {"<A>"}: 2}}},
		{in: `{"mt":{"toolongkey":1}}`, wantErr: `textKey: "toolongkey" too long`},
		{in: `{"mf":{"1":1}}`, wantErr: "cannot unmarshal object into Go struct field all.mf of type map[float64]int"},
		{in: `{"mf":null}`, want: all{}},
		{in: `{"ins":[{"a":1},{"b":"x"}]}`, want: all{Ins: []inner{{A: 1}, {B: "x"}}}},
		{in: `{"min":{"k":{"a":1},"n":null}}`, want: all{MIn: map[string]*inner{"k": {A: 1}, "n": nil}}},
	})
	runCases(t, []decodeCase[[]int]{{in: `[1, 2 ,3 ]`, want: []int{1, 2, 3}}, {in: `[]`, want: []int{}}, {in: `null`, want: nil}})
	runCases(t, []decodeCase[map[int]string]{{in: `{"-1":"a","9223372036854775807":"b"}`, want: map[int]string{-1: "a", math.MaxInt64: "b"}}})
	// Slices are decoded into in place, as encoding/json does.
	dec := Compile[[]inner]()
	s := make([]inner, 1, 4)
	s[0] = inner{A: 1}
	s = append(s, inner{B: "stale"})[:1]
	if err := dec([]byte(`[{"b":"x"},{"a":2}]`), &s); err != nil || !reflect.DeepEqual(s, []inner{{A: 1, B: "x"}, {A: 2, B: "stale"}}) {
		t.Errorf("decode into slice: %v %+v", err, s)
	}
}

func TestInterfaces(t *testing.T) {
	runCases(t, []decodeCase[any]{
		{in: `{"a":[1,"x",true,false,null,{"b":{}},[]],"c":-2.5e-1}`,
			want: map[string]any{"a": []any{1.0, "x", true, false, nil, map[string]any{"b": map[string]any{}}, []any{}}, "c": -0.25}},
		{in: `null`, want: nil},
		{in: `[1e400]`, wantErr: "json: cannot unmarshal number 1e400 into Go value of type float64"},
	})
	runCases(t, []decodeCase[all]{
		{in: `{"st":null,"er":null}`, want: all{}},
		{in: `{"st":"x"}`, wantErr: "cannot unmarshal string into Go struct field all.st of type fmt.Stringer"},
		{in: `{"er":{}}`, wantErr: "cannot unmarshal object into Go struct field all.er of type error"},
		{in: `{"er":1}`, wantErr: "cannot unmarshal number into Go struct field all.er of type error"},
		{in: `{"a":[2]}`, want: all{A: []any{2.0}}},
	})
	// An interface holding a pointer is decoded through it.
	dec := Compile[any]()
	in := &inner{B: "keep"}
	var v any = in
	if err := dec([]byte(`{"a":1}`), &v); err != nil || v != any(in) || !reflect.DeepEqual(*in, inner{A: 1, B: "keep"}) {
		t.Errorf("decode through interface: %v %#v", err, v)
	}
	if err := dec([]byte(`null`), &v); err != nil || v != nil {
		t.Errorf("null into interface holding a pointer: %v %#v", err, v)
	}
	pp := &in
	v = pp
	if err := dec([]byte(`null`), &v); err != nil || v != any(pp) || *pp != nil {
		t.Errorf("null into interface holding a pointer to a pointer: %v %#v", err, v)
	}
	v = &v
	if err := dec([]byte(`[1]`), &v); err != nil || !reflect.DeepEqual(v, []any{1.0}) {
		t.Errorf("interface holding its own address: %v %#v", err, v)
	}
}

func TestMethods(t *testing.T) {
	runCases(t, []decodeCase[all]{
		{in: `{"t":"shout","pt":"x","ts":"abc","uj": {"k" : [1]} ,"puj":null,"te":"x"}`,
			want: all{T: "SHOUT", PT: ptr(upper("X")), TS: textSlice{3}, UJ: rawRec{`{"k" : [1]}`}, TE: typeErrRec{3}}},
		{in: `{"t":"a\u0062"}`, want: all{T: "AB"}},
		{in: `{"uj":null,"puj":"x"}`, want: all{UJ: rawRec{"null"}, PUJ: &rawRec{`"x"`}}},
		{in: `{"t":null,"pt":null,"ts":[1]}`, wantErr: "cannot unmarshal array into Go struct field all.ts of type jsondec.textSlice"},
		{in: `{"ts":null}`, want: all{}},
		{in: `{"t":1}`, wantErr: "json: cannot unmarshal number into Go struct field all.t of type jsondec.upper"},
		{in: `{"pt":true}`, wantErr: "json: cannot unmarshal bool into Go struct field all.pt of type *jsondec.upper"},
		{in: `{"t":{}}`, wantErr: "json: cannot unmarshal object into Go struct field all.t of type jsondec.upper"},
		{in: `{"t":"no!"}`, wantErr: "upper: no exclamation marks"},
		{in: `{"uj":"` + strings.Repeat("x", 50) + `"}`, wantErr: "rawRec: too long"},
		// A method's UnmarshalTypeError gets the field path.
		{in: `{"in":{"d":{}},"next":{"te":[1]}}`, wantErr: "json: cannot unmarshal array into Go struct field all.next.te.inside of type jsondec.typeErrRec"},
		// A method's error wins over an earlier type error, a syntax error
		// over both.
		{in: `{"i":"x","t":"!"}`, wantErr: "upper: no exclamation marks"},
		{in: `{"i":"x","t":"!"`, wantErr: "unexpected end of JSON input"},
	})
	runCases(t, []decodeCase[upper]{{in: `1`, wantErr: "json: cannot unmarshal number into Go value of type *jsondec.upper"}, {in: `"a"`, want: "A"}})
	runCases(t, []decodeCase[json.RawMessage]{{in: ` [1, 2] `, want: json.RawMessage(`[1, 2]`)}, {in: `null`, want: json.RawMessage(`null`)}})
	runCases(t, []decodeCase[[]byte]{
		{in: `"aGVsbG8="`, want: []byte("hello")},
		{in: `""`, want: []byte{}},
		{in: `"aGVs\nbG8="`, want: []byte("hello")},
		{in: `[104,105]`, want: []byte("hi")},
		{in: `"!!"`, wantErr: "illegal base64 data at input byte 0"},
	})
	runCases(t, []decodeCase[myBytes]{{in: `"aGk="`, want: myBytes("hi")}})

	// RawMessage is a copy of the input.
	dec := Compile[struct {
		R json.RawMessage `json:"r"`
	}]()
	data := []byte(`{"r":{"a":1}}`)
	var v struct {
		R json.RawMessage `json:"r"`
	}
	if err := dec(data, &v); err != nil {
		t.Fatal(err)
	}
	copy(data, strings.Repeat("x", len(data)))
	if string(v.R) != `{"a":1}` {
		t.Errorf("RawMessage shares the input: %s", v.R)
	}
}

type embedded struct {
	inner
	Extra string `json:"extra"`
}

type withChan struct {
	C chan int `json:"c"`
}

type withComplex struct {
	C complex128 `json:"c"`
}

// ignoredQuoted has a `,string` option that encoding/json ignores: the
// decoder handles it.
type ignoredQuoted struct {
	S []int `json:"s,string"`
}

// TestFormerFallbacks: the types encoding/json used to decode are
// decoded here too, with exact member names.
func TestFormerFallbacks(t *testing.T) {
	// Embedded fields: promoted, matched exactly.
	var e embedded
	if err := Compile[embedded]()([]byte(`{"A":1,"EXTRA":"x","a":2,"b":"y","extra":"z"}`), &e); err != nil || e.A != 2 || e.B != "y" || e.Extra != "z" {
		t.Errorf("embedded: %v %+v", err, e)
	}
	var viaJSON embedded
	if err := json.Unmarshal([]byte(`{"A":1,"EXTRA":"x"}`), &viaJSON); err != nil || viaJSON.A != 1 || viaJSON.Extra != "x" {
		t.Errorf("encoding/json no longer folds case: %+v", viaJSON)
	}
	var em embeds
	err := Compile[embeds]()([]byte(`{"id":1,"note":"n","other":2,"k":3,"a1":4,"q":"q","qin":{"a":6},"ux":7,"tg":{"t":8},"ID":9,"Q":"x"}`), &em)
	want := embeds{Base: Base{ID: 1, Note: "n"}, ViaA: ViaA{Common: Common{K: 3}, A1: 4}, Other: 2,
		PBase: &PBase{Q: "q", In: inner{A: 6}}, Tagged: Tagged{T: 8}}
	if err == nil || err.Error() != "json: cannot set embedded pointer to unexported struct: jsondec.unexpPtr" || !reflect.DeepEqual(em, want) {
		t.Errorf("embeds: %v\n got %+v\nwant %+v", err, em, want)
	}
	// Type errors name the embedded fields on the way.
	for in, want := range map[string]string{
		`{"qin":{"a":"x"}}`: "json: cannot unmarshal string into Go struct field inner.PBase.qin.a of type int",
		`{"k":"x"}`:         "json: cannot unmarshal string into Go struct field embeds.ViaA.Common.k of type int",
	} {
		var em embeds
		if err := Compile[embeds]()([]byte(in), &em); err == nil || err.Error() != want {
			t.Errorf("embeds type error: %v, want %s", err, want)
		}
		if err := json.Unmarshal([]byte(in), &em); err == nil || err.Error() != want {
			t.Errorf("encoding/json says %v, not %s", err, want)
		}
	}
	// `,string`.
	var q quotedAll
	if err := Compile[quotedAll]()([]byte(`{"i":"-12","u":"7","f":"1.5","b":"true","s":"\"x\"","p":"3","n":"1e3","t":"\"up\"","TT":"1"}`), &q); err != nil ||
		q.I != -12 || q.U != 7 || q.F != 1.5 || !q.B || q.S != "x" || *q.P != 3 || q.N != "1e3" || q.T != "UP" {
		t.Errorf("quoted: %v %+v", err, q)
	}
	var iq ignoredQuoted
	if err := Compile[ignoredQuoted]()([]byte(`{"s":[1]}`), &iq); err != nil || !reflect.DeepEqual(iq.S, []int{1}) {
		t.Errorf("ignored ,string: %v %+v", err, iq)
	}
	// Named pointers, channels, functions, complex numbers.
	var o odd
	if err := Compile[odd]()([]byte(`{"np":{"a":1},"c":null,"fn":null,"x":null,"u":null}`), &o); err != nil || o.NP == nil || o.NP.A != 1 {
		t.Errorf("odd: %v %+v", err, o)
	}
	if err := Compile[odd]()([]byte(`{"x":1}`), &o); err == nil || err.Error() != "json: cannot unmarshal number into Go struct field odd.x of type complex64" {
		t.Errorf("complex: %v", err)
	}
	var wc []withChan
	if err := Compile[[]withChan]()([]byte(`[{"c":null},{"c":[1]}]`), &wc); err == nil || len(wc) != 2 || !strings.Contains(err.Error(), "of type chan int") {
		t.Errorf("chan: %v", err)
	}
}

// TestEmbeddingRules compares with encoding/json on structs whose
// promoted fields conflict, built with reflect (vet refuses their tags).
func TestEmbeddingRules(t *testing.T) {
	field := func(name string, typ reflect.Type, tag string) reflect.StructField {
		return reflect.StructField{Name: name, Type: typ, Tag: reflect.StructTag(tag), Anonymous: tag == "" && name == typ.Name()}
	}
	intType := reflect.TypeFor[int]()
	types := []reflect.Type{
		// Same depth, both tagged: "id" cancels out.
		reflect.StructOf([]reflect.StructField{field("Base", reflect.TypeFor[Base](), ""), field("BaseAlt", reflect.TypeFor[BaseAlt](), "")}),
		// Common embedded twice at one depth: "k" and "l" cancel out.
		reflect.StructOf([]reflect.StructField{field("ViaA", reflect.TypeFor[ViaA](), ""), field("ViaB", reflect.TypeFor[ViaB](), "")}),
		// A shallower field wins; an embedded struct with a tag is a field.
		reflect.StructOf([]reflect.StructField{field("ViaA", reflect.TypeFor[ViaA](), ""), field("L", intType, `json:"l"`),
			field("Base", reflect.TypeFor[Base](), `json:"base"`), field("K", intType, ""), field("Note", intType, `json:"note"`)}),
		// Common at depth 1 and 2: the shallow one only.
		reflect.StructOf([]reflect.StructField{field("Common", reflect.TypeFor[Common](), ""), field("ViaA", reflect.TypeFor[ViaA](), "")}),
		// An untagged field beside a tagged one at the same depth.
		reflect.StructOf([]reflect.StructField{field("Base", reflect.TypeFor[Base](), ""), field("Id", intType, ""), field("X", intType, `json:"id"`)}),
	}
	inputs := []string{
		`{"id":1,"note":"n","other":2,"k":3,"l":4,"a1":5,"b1":6,"base":{"id":7}}`,
		`{"id":"s","note":1}`, `{"k":"x"}`, `{"l":"x","base":{"note":1}}`, `{"base":null}`,
	}
	for i, typ := range types {
		d := compile(typ)
		more := []string(nil)
		if i == 2 || i == 4 {
			// Keys that are these types' exact names: encoding/json does
			// not fold them.
			more = []string{`{"K":8,"k":1}`, `{"Id":9,"id":2}`, `{"Id":"x"}`}
		}
		for _, in := range append(more, inputs...) {
			got, want := reflect.New(typ), reflect.New(typ)
			gotErr := decode(d, got.Type(), []byte(in), got.UnsafePointer())
			wantErr := json.Unmarshal([]byte(in), want.Interface())
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Errorf("%v %s:\n got %+v, %v\nwant %+v, %v", typ, in, got.Elem(), gotErr, want.Elem(), wantErr)
			}
		}
	}
}

type embInt int

func TestSyntaxErrors(t *testing.T) {
	dec := Compile[all]()
	decAny := Compile[any]()
	for _, in := range []string{
		``, ` `, `{`, `}`, `{"s"`, `{"s":`, `{"s":"x"`, `{"s":"x",}`, `{"s" "x"}`, `{"s":"x" "i":1}`, `{,}`, `{"s":"x",,"i":1}`,
		`{1:2}`, `{"zz":[1,}`, `{"zz":{"a" 1}}`, `{"zz":[1 2]}`, `{"zz":{"a":1,}}`, `{"zz":[}`, `{"zz":{]}`, `{"zz":tru}`,
		`[1,]`, `[,1]`, `[1 2]`, `[`, `]`, `{"s":"x"}x`, `{"s":"x"}}`, `{} {}`, `{}[]`,
		`nul`, `nulL`, `tru`, `fals`, `truex`, `nullnull`, `01`, `-`, `-01`, `-a`, `1.`, `1.e2`, `1e`, `1e+`, `.5`, `+1`, `0x10`,
		`NaN`, `Infinity`, `-Infinity`, `'a'`, "\xef\xbb\xbf{}", "\x00", `{"a":1}` + "\x00", "{\"i\":1\x0b}",
		`{"ins":[{"a":1},{"a":}]}`, `{"m":{"a":1,"b"}}`, `{"mi":{"1":"a",}}`, `{"a":{"b":[1,{"c":}]}}`, `{"uj":{"a":}}`, `{"t":"x`,
	} {
		for _, d := range []func([]byte) error{
			func(b []byte) error { var v all; return dec(b, &v) },
			func(b []byte) error { var v any; return decAny(b, &v) },
		} {
			err := d([]byte(in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("%q: error %v, want a syntax error", in, err)
			}
			if json.Unmarshal([]byte(in), new(any)) == nil {
				t.Errorf("%q: accepted by encoding/json", in)
			}
		}
	}
	var v echo
	err := Compile[echo]()([]byte(`{"text":"x" "y"}`), &v)
	if err == nil || err.Error() != `json: syntax error at offset 12: invalid character '"' after object key:value pair` {
		t.Errorf("message: %v", err)
	}
}

type deep struct {
	D *deep `json:"d"`
}

func TestDepth(t *testing.T) {
	nest := func(n int, open, mid, close string) []byte {
		return []byte(strings.Repeat(open, n) + mid + strings.Repeat(close, n))
	}
	decAny := Compile[any]()
	decEcho := Compile[echo]()
	decDeep := Compile[deep]()
	for _, n := range []int{maxDepth, maxDepth + 1} {
		tooDeep := n > maxDepth
		check := func(what string, err error) {
			t.Helper()
			if tooDeep != (err != nil) || tooDeep && !strings.Contains(err.Error(), "exceeded max depth") {
				t.Errorf("%s, depth %d: %v", what, n, err)
			}
		}
		var a any
		check("any arrays", decAny(nest(n, "[", "", "]"), &a))
		check("any objects", decAny(nest(n, `{"a":`, "1", "}"), &a))
		var e echo
		check("skipped", decEcho(nest(n, `{"a":`, "1", "}"), &e)) // below the top-level object
		var d deep
		check("recursive type", decDeep(nest(n, `{"d":`, "null", "}"), &d))
		check("method", Compile[json.RawMessage]()(nest(n, "[", "", "]"), new(json.RawMessage)))
	}
}

func TestInvalidTarget(t *testing.T) {
	var ie *json.InvalidUnmarshalError
	if err := Compile[echo]()([]byte(`{}`), nil); !errors.As(err, &ie) {
		t.Errorf("nil target: %v", err)
	}
}

func TestAllocs(t *testing.T) {
	dec := Compile[echo]()
	data := []byte(`{"text":"hello world"}`)
	var v echo
	if n := testing.AllocsPerRun(100, func() {
		if err := dec(data, &v); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("%v allocations, want 1", n)
	}
	skipped := []byte(`{"unknown":[1,{"x":[true,null,"s"]}],"text":"hello"}`)
	if n := testing.AllocsPerRun(100, func() {
		if err := dec(skipped, &v); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("with a skipped member: %v allocations, want 1", n)
	}
}

func TestConcurrent(t *testing.T) {
	dec := Compile[all]()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 200 {
				var v all
				if err := dec([]byte(`{"s":"x","in":{"c":["a","b"]},"m":{"k":1},"next":{"i":2}}`), &v); err != nil || v.Next.I != 2 {
					t.Errorf("goroutine %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestEmbeddedPointerFieldBeyondOuter: a field promoted through an
// embedded pointer may lie further into its struct than the outer struct
// is long; its address is taken in the embedded struct only (run with
// -race, whose pointer checks catch arithmetic past an allocation).
func TestEmbeddedPointerFieldBeyondOuter(t *testing.T) {
	type Inner struct {
		Pad [16]int64 `json:"pad"`
		Y   int       `json:"y"`
	}
	type Outer struct {
		*Inner
	}
	var v Outer
	if err := Compile[Outer]()([]byte(`{"y":7}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.Inner == nil || v.Y != 7 {
		t.Fatalf("decoded %+v", v.Inner)
	}
}
