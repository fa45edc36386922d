package jsondec

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

// differential decodes with Compile[T] and with encoding/json into values
// prepared by init (zero values when nil) and compares the outcomes.
type differential[T any] struct {
	name string
	dec  func([]byte, *T) error
	init func(*T)
}

func diff[T any](name string, init func(*T)) checker {
	return differential[T]{name: name, dec: Compile[T](), init: init}
}

type checker interface {
	check(t *testing.T, data []byte, compare bool)
}

func (c differential[T]) check(t *testing.T, data []byte, compare bool) {
	t.Helper()
	var got, want T
	if c.init != nil {
		c.init(&got)
		c.init(&want)
	}
	gotErr := c.dec(data, &got)
	wantErr := json.Unmarshal(data, &want)
	// What jsonvalid.Check refuses (encoding/json accepts repeated names
	// and invalid UTF-8) is a syntax error, the same one.
	if cerr := jsonvalid.Check(data); cerr != nil {
		var syn *SyntaxError
		var ve *jsonvalid.Error
		if !errors.As(gotErr, &syn) || !errors.As(gotErr, &ve) {
			t.Fatalf("%s: %q: error %v, want a syntax error like %v", c.name, data, gotErr, cerr)
		}
		if want := cerr.(*jsonvalid.Error); ve.Offset != want.Offset || ve.Duplicate != want.Duplicate || ve.Member != want.Member {
			t.Fatalf("%s: %q: error %v, jsonvalid.Check %v", c.name, data, gotErr, cerr)
		}
		return
	}
	if !compare {
		return
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: %q: error %v, encoding/json %v", c.name, data, gotErr, wantErr)
	}
	var wantType, gotType *json.UnmarshalTypeError
	if wantErr != nil {
		var syn *SyntaxError
		var jsyn *json.SyntaxError
		if errors.As(wantErr, &jsyn) != errors.As(gotErr, &syn) {
			t.Fatalf("%s: %q: error %v, encoding/json %v", c.name, data, gotErr, wantErr)
		}
		if !errors.As(wantErr, &wantType) || !errors.As(gotErr, &gotType) {
			return // syntax errors and method errors: values undefined
		}
		if gotErr.Error() != wantErr.Error() {
			t.Fatalf("%s: %q: error %q, encoding/json %q", c.name, data, gotErr, wantErr)
		}
	}
	// Type errors leave the rest decoded, in both.
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %q:\n got %#v\nwant %#v", c.name, data, got, want)
	}
}

var checkers = []checker{
	diff[all]("all", nil),
	diff[*all]("*all", nil),
	diff[echo]("echo", nil),
	diff[inner]("inner", nil),
	diff[[]inner]("[]inner", nil),
	diff[[2]inner]("[2]inner", nil),
	diff[any]("any", nil),
	diff[[]any]("[]any", nil),
	diff[map[string]any]("map[string]any", nil),
	diff[map[string]*inner]("map[string]*inner", nil),
	diff[map[int]string]("map[int]string", nil),
	diff[map[textKey]upper]("map[textKey]upper", nil),
	diff[[]int]("[]int", nil),
	diff[[]*int]("[]*int", nil),
	diff[string]("string", nil),
	diff[float64]("float64", nil),
	diff[int8]("int8", nil),
	diff[uint]("uint", nil),
	diff[bool]("bool", nil),
	diff[[]byte]("[]byte", nil),
	diff[json.RawMessage]("RawMessage", nil),
	diff[json.Number]("Number", nil),
	diff[upper]("upper", nil),
	diff[rawRec]("rawRec", nil),
	// Values already set: merged into, as encoding/json does.
	diff[all]("all prefilled", func(v *all) {
		n, s := 7, "x"
		ps := &s
		v.P, v.PP = &n, &ps
		v.A = &inner{A: 1, C: []string{"p"}}
		v.Sl = make([]int, 2, 5)
		v.Ins = []inner{{A: 1}, {B: "b"}}[:1]
		v.M = map[string]int{"keep": 1}
		v.In = inner{A: 5, B: "five"}
		v.Next = &all{S: "next", I: 2}
		var st *strings.Builder = &strings.Builder{}
		v.St = st
	}),
	diff[any]("any holding pointer", func(v *any) {
		x := &inner{A: 3}
		*v = &x
	}),
	diff[embeds]("embeds", nil),
	diff[[]embeds]("[]embeds", nil),
	diff[embeds]("embeds prefilled", func(v *embeds) {
		v.PBase = &PBase{Q: "keep"}
		v.unexpPtr = &unexpPtr{UX: 1}
	}),
	diff[quotedAll]("quotedAll", nil),
	diff[quotedAll]("quotedAll prefilled", func(v *quotedAll) {
		n, s, u := 5, "s", upper("U")
		v.P, v.PS, v.PT = &n, &s, &u
	}),
	diff[odd]("odd", nil),
	diff[odd]("odd prefilled", func(v *odd) {
		u := upper("u")
		v.UP = &u
		v.NP = &inner{A: 1}
	}),
}

// keysComparable reports whether encoding/json's case-insensitive member
// matching cannot differ from exact matching for data: every object key
// is ASCII without upper-case letters, and every field name of the target
// types is lower case. Malformed input is always comparable: both must
// reject it.
func keysComparable(data []byte) bool {
	if !json.Valid(data) {
		return true
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return false
	}
	var ok func(v any) bool
	ok = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				for i := 0; i < len(k); i++ {
					if c := k[i]; c >= 0x80 || 'A' <= c && c <= 'Z' {
						return false
					}
				}
				if !ok(e) {
					return false
				}
			}
		case []any:
			for _, e := range v {
				if !ok(e) {
					return false
				}
			}
		}
		return true
	}
	return ok(v)
}

var fuzzSeeds = []string{
	`{"text":"hello world"}`,
	`{"text":"h\u00e9llo \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t"}`,
	`{"text":"\ud800"}`, `{"text":"\udc00\ud800x"}`, `{"text":"\ud800\u0041"}`, `{"text":"\ud83d\ud83d\ude00"}`,
	"{\"text\":\"\xff\xfe \xe2\x82 \xed\xa0\x80 ok\"}",
	`{"TEXT":"x","Text":"y","text":"z"}`,
	`{"s":"a","ms":"b","i":-12,"i8":127,"i16":-32768,"i32":2147483647,"u":1,"u8":255,"u16":65535,"u64":18446744073709551615,"f":1.5e300,"f32":3.4e38,"b":true}`,
	`{"i8":128}`, `{"i8":-129}`, `{"u8":-0}`, `{"i":1.0}`, `{"i":1e2}`, `{"u64":18446744073709551616}`, `{"f":1e400}`, `{"f32":1e39}`, `{"i":-0}`,
	`{"p":1,"pp":"x","pa":{"k":[1,2]}}`, `{"p":null,"pp":null,"pa":null}`,
	`{"a":{"x":[1,"2",true,null,{"y":{}}]},"sl":[1,2,3],"ss":[["a"],[],null],"ar":["x","y","z"],"ab":[1,2]}`,
	`{"ar":["x"]}`, `{"sl":[]}`, `{"sl":null}`, `{"ab":"AAA="}`,
	`{"m":{"a":1,"b":2},"ma":{"x":null},"ms2":{"k":"v","n":null},"mi":{"-1":"m","127":"x"},"mu":{"1":true},"mn":{"q":1},"mt":{"key":1},"mf":{"1":1}}`,
	`{"mi":{"128":"x"}}`, `{"mi":{"x":"y"}}`, `{"mu":{"-1":true}}`, `{"mt":{"waytoolongkey":1}}`,
	`{"bs":"aGVsbG8=","mb":"","r":{"a": [1, 2]},"n":12.5e-3}`, `{"bs":"!!"}`, `{"bs":[1,2,300]}`, `{"n":"12"}`, `{"n":"x"}`, `{"n":""}`,
	`{"t":"shout","pt":"x","ts":"abc","uj":{"k":"v"},"puj":[1,2],"te":7}`, `{"te":[1]}`, `{"in":{"d":{"d":{"te":[]}}}}`,
	`{"t":1}`, `{"t":null}`, `{"t":["a"]}`, `{"t":"no!"}`, `{"ts":null}`, `{"uj":null}`, `{"puj":null}`, `{"uj":"` + strings.Repeat("x", 50) + `"}`,
	`{"st":null,"er":null}`, `{"st":"x"}`, `{"er":{}}`,
	`{"in":{"a":1,"b":"x","c":["y"],"d":{"a":2}},"pin":{"a":3},"ins":[{"a":1},{"b":"c"}],"min":{"k":{"a":1},"n":null}}`,
	`{"in":{"a":"x"}}`, `{"ins":[{"a":1},{"a":"bad"}]}`, `{"next":{"next":{"i":"x"}}}`,
	`{"in":{"a":1},"in":{"b":"x"}}`, `{"ins":[{"a":1}],"ins":[{"b":"y"}]}`, `{"m":{"a":1},"m":{"b":2}}`, `{"a":1,"a":"x"}`,
	`{"zz":1,"zz":2}`, `{"zz":{"q":1,"q":2}}`, `{"uj":{"q":1,"\u0071":2}}`, `{"ma":{"k":1,"k":2}}`, `{"a":{"k":[{"x":1,"x":1}]}}`,
	`{"in":{"a":1,"a":2}}`, `{"text":1,"te\u0078t":2}`, `{"in":{"a":{"x":1,"y":5},"a":{"x":1}}}`, `[{"a":1},{"a":1}]`,
	`{"skip":1,"-":2,"omit":"o","hidden":3,"Skip":4}`,
	`{"id":1,"note":"n","other":2,"k":3,"l":4,"a1":5,"b1":6,"q":"x","qin":{"a":1},"ux":2,"tg":{"t":3},"extra":"e"}`,
	`{"i":"12","i8":"300","u":"-1","f":"1e40","b":"true","s":"\"x\"","p":"1","ps":"\"y\"","n":"1e2","t":"\"q\"","pt":"\"r\"","r":"12","ms":"\"m\"","sl":[1]}`,
	`{"i":12}`, `{"i":"x"}`, `{"i":""}`, `{"i":"nul"}`, `{"i":"true"}`, `{"s":"12"}`, `{"s":"x"}`, `{"b":"1"}`, `{"p":"null"}`, `{"p":null}`,
	`{"n":"12x"}`, `{"n":"\"x\""}`, `{"t":"x"}`, `{"t":"\"a"}`, `{"i":[1]}`, `{"i":1e400}`, `{"pt":"null"}`, `{"r":"null"}`,
	`{"np":{"a":1},"up":"x","c":null,"fn":null,"x":null,"u":null,"a":1}`, `{"up":null}`, `{"c":1}`, `{"fn":{}}`, `{"x":[1]}`, `{"u":"p"}`,
	`{"next":null}`, `{}`, `[]`, `null`, `true`, `false`, `0`, `-1.5e+10`, `"str"`, `[1,"a",null]`, `[[[]]]`, `{"a":[{}]}`,
	`[{"a":1},{"a":2},{"a":3}]`, `{"k":{"a":1},"l":null}`, `{"1":"a","-2":"b"}`, `{"key":"v"}`,
	` {"text" : "x" } `, "\t\n\r {\"text\":\"x\"}\n",
	// Malformed.
	``, ` `, `{`, `{"text"`, `{"text":`, `{"text":"x"`, `{"text":"x",}`, `{"text" "x"}`, `{,}`, `{"a":1 "b":2}`,
	`[1,]`, `[,1]`, `[1 2]`, `{"text":"x"}x`, `{"text":"x"}}`, `{} {}`, `nul`, `nulL`, `tru`, `fals`, `truex`,
	`01`, `-`, `-01`, `1.`, `1.e2`, `1e`, `1e+`, `.5`, `+1`, `0x10`, `NaN`, `Infinity`, `1E400`,
	"\"a\x01b\"", `"\x"`, `"\u12"`, `"\u12G4"`, `"\'"`, `"abc`, `"\`, "\xef\xbb\xbf{}", `{"a":{"b":[1,{"c":}]}}`,
	strings.Repeat(`[`, 50) + strings.Repeat(`]`, 50), `{"a":` + strings.Repeat(`{"a":`, 30) + `1` + strings.Repeat(`}`, 31),
}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compare := keysComparable(data)
		for _, c := range checkers {
			c.check(t, data, compare)
		}
	})
}

// randomDoc writes a random JSON value whose object keys are mostly member
// names of the test types, so that it reaches deep into them, with random
// white space, escapes and, when corrupt is set, one damaged byte.
func randomDoc(r *rand.Rand, depth int) string {
	var b strings.Builder
	var value func(d int)
	top := true
	ws := func() {
		if r.IntN(6) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[r.IntN(4)])
		}
	}
	str := func() {
		b.WriteByte('"')
		for range r.IntN(6) {
			switch r.IntN(12) {
			case 0:
				b.WriteString([]string{`\n`, `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\u0000`}[r.IntN(8)])
			case 1:
				b.WriteString([]string{"é", "\xff", "日本", "\xed\xa0\x80", "!"}[r.IntN(5)])
			default:
				b.WriteByte("abcxyz019 =-"[r.IntN(12)])
			}
		}
		b.WriteByte('"')
	}
	value = func(d int) {
		ws()
		n := 9
		if d <= 0 {
			n = 7
		}
		k := r.IntN(n)
		if top && r.IntN(4) != 0 {
			k = 8 // mostly objects at the top, like tool arguments
		}
		top = false
		switch k {
		case 0:
			b.WriteString("null")
		case 1:
			b.WriteString([]string{"true", "false"}[r.IntN(2)])
		case 2, 3:
			b.WriteString([]string{"0", "1", "-1", "127", "128", "-129", "255", "256", "65536", "1.5", "-0", "1e2", "2147483648",
				"18446744073709551615", "18446744073709551616", "-9223372036854775809", "1e400", "3.5e38", "0.000001"}[r.IntN(19)])
		case 4, 5:
			if r.IntN(4) == 0 {
				quotedJSON := []string{`"aGVsbG8="`, `"12"`, `"1.5e3"`, `"-"`, `"AAA="`, `"!!"`, `"true"`, `"null"`, `"\"q\""`,
					`"01"`, `""`, `"-1"`, `"1e2"`, `"nul"`, `"\"a"`, `" 1"`, `"1 "`, `"300"`, `"fals"`, `"[1]"`}
				b.WriteString(quotedJSON[r.IntN(len(quotedJSON))])
			} else {
				str()
			}
		case 6:
			if r.IntN(3) == 0 {
				b.WriteString(`"` + []string{"1", "-3", "200", "x", "key"}[r.IntN(5)] + `"`)
			} else {
				str()
			}
		case 7:
			b.WriteByte('[')
			for i := range r.IntN(4) {
				if i > 0 {
					b.WriteByte(',')
				}
				value(d - 1)
			}
			ws()
			b.WriteByte(']')
		case 8:
			b.WriteByte('{')
			for i := range r.IntN(5) {
				if i > 0 {
					b.WriteByte(',')
				}
				ws()
				if r.IntN(8) == 0 {
					str()
				} else {
					b.WriteString(`"` + memberNames[r.IntN(len(memberNames))] + `"`)
				}
				ws()
				b.WriteByte(':')
				value(d - 1)
			}
			ws()
			b.WriteByte('}')
		}
		ws()
	}
	value(depth)
	return b.String()
}

var memberNames = []string{"s", "ms", "i", "i8", "i16", "i32", "u", "u8", "u16", "u64", "f", "f32", "b", "p", "pp", "a", "pa",
	"sl", "ss", "ar", "ab", "m", "ma", "ms2", "mi", "mu", "mn", "mt", "mf", "bs", "mb", "r", "n", "t", "pt", "ts", "uj", "puj",
	"te", "st", "er", "in", "pin", "ins", "min", "next", "-", "omit", "hidden", "text", "c", "d", "1", "-1", "128", "key",
	"id", "note", "other", "k", "l", "a1", "b1", "q", "qin", "ux", "tg", "extra", "np", "up", "fn", "x", "ps", "sl"}

// TestDifferentialRandom compares with encoding/json on random documents
// shaped like the test types, intact and with one byte damaged.
func TestDifferentialRandom(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		doc := []byte(randomDoc(r, 1+r.IntN(5)))
		if r.IntN(5) == 0 && len(doc) > 0 {
			const junk = "{}[],:\"\\ 0a-"
			doc[r.IntN(len(doc))] = junk[r.IntN(len(junk))]
		}
		compare := keysComparable(doc)
		for _, c := range checkers {
			c.check(t, doc, compare)
		}
	}
}
