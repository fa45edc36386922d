package jsonvalid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// reference decides what Check must answer, with encoding/json's tokenizer:
// valid JSON, UTF-8 throughout, and no object repeating a decoded name.
// The problem is "" when the input is acceptable, else "syntax", "utf8" or
// "duplicate".
func reference(data []byte) string {
	if !json.Valid(data) {
		return "syntax"
	}
	if !utf8.Valid(data) {
		return "utf8"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type level struct {
		obj    bool
		keyNow bool // the next token of an object is a key
		seen   map[string]bool
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return ""
		}
		if err != nil {
			panic(fmt.Sprintf("tokenizer on valid JSON %q: %v", data, err))
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.keyNow {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].keyNow = true
				}
				continue
			}
			k := tok.(string)
			if top.seen[k] {
				return "duplicate"
			}
			top.seen[k] = true
			top.keyNow = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{obj: true, keyNow: true, seen: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &level{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the enclosing object expects a key next.
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].keyNow = true
		}
	}
}

func checkProblem(data []byte) string {
	err := Check(data)
	if err == nil {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		panic(fmt.Sprintf("Check(%q) error %T", data, err))
	}
	switch {
	case e.Duplicate:
		return "duplicate"
	case e.Msg == "invalid UTF-8 in string":
		return "utf8"
	}
	return "syntax"
}

var checkCases = []string{
	`{"a":1,"a":2}`, `{"a":1,"b":2,"a":3}`, `{"a":1,"\u0061":2}`, `{"\u0061":1,"a":2}`, `{"\u0061":1,"\u0061":2}`,
	`{"a\/b":1,"a/b":2}`, `{"\ud83d\ude00":1,"😀":2}`, `{"\ud800":1,"\udc00":2}`, `{"\ud800":1,"\ufffd":2}`,
	`{"\ud800\ud800":1,"\ufffd\ufffd":2}`, `{"\ud800x":1,"\ufffdx":2}`, `{"\n":1,"\u000a":2}`, `{"":1,"":2}`,
	`{"a":{"a":1}}`, `{"a":{"b":1},"b":2}`, `[{"a":1},{"a":2}]`, `{"a":[{"a":1,"a":2}]}`, `{"a":{"b":{}},"c":{"b":1,"b":2}}`,
	`{"A":1,"a":2}`, `{"a":1,"a ":2}`, `{"ab":1,"a":2,"b":3}`, `{"x":{"y":1},"x":{"y":1}}`,
	"{\"\xff\":1}", "[\"a\xc3\"]", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xc0\xaf\"", "\"é日本😀\"",
	"\xef\xbb\xbf{}", "\f{}", "\v1", "{}\u00a0",
}

// consistent reports whether Check's problem got can be the first one
// found in input whose worst problem is want: a string with bad UTF-8 or
// a repeated name may come before a syntax error, and a repeated name
// before bad UTF-8.
func consistent(got, want string) bool {
	switch want {
	case "syntax":
		return got != ""
	case "utf8":
		return got == "utf8" || got == "duplicate"
	}
	return got == want
}

func TestCheckAgreesWithReference(t *testing.T) {
	for _, c := range append(append([]string{}, cases...), checkCases...) {
		if got, want := checkProblem([]byte(c)), reference([]byte(c)); got != want {
			t.Errorf("Check(%q): %q, want %q (%v)", c, got, want, Check([]byte(c)))
		}
	}
}

// manyMembers returns an object with n members named k0, k1, ..., the
// names listed in extra appended.
func manyMembers(n int, extra ...string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":{"k%d":[%d]}`, i, i, i)
	}
	for _, e := range extra {
		b.WriteString(`,"` + e + `":0`)
	}
	b.WriteString("}")
	return b.String()
}

func TestCheckManyMembers(t *testing.T) {
	for _, n := range []int{15, 16, 17, 40} {
		for _, c := range []struct {
			in  string
			dup bool
		}{
			{manyMembers(n), false},
			{manyMembers(n, "k0"), true},
			{manyMembers(n, `k\u0030`), true},
			{manyMembers(n, fmt.Sprintf("k%d", n-1)), true},
			{manyMembers(n, "x", "y", "x"), true},
			{manyMembers(n, `\u0078`, "y", "x"), true},
			{manyMembers(n, `\u0078`, "y", "z"), false},
			{`[` + manyMembers(n, "x") + `,` + manyMembers(n, "x") + `]`, false},
			{`{"a":` + manyMembers(n) + `,"b":` + manyMembers(n, `\u0062`) + `,"c":1}`, false},
			{`{"a":` + manyMembers(n) + `,"b":` + manyMembers(n, `\u0062`) + `,"\u0061":1}`, true},
		} {
			if got := checkProblem([]byte(c.in)) == "duplicate"; got != c.dup || reference([]byte(c.in)) != checkProblem([]byte(c.in)) {
				t.Errorf("%d members: %.80s...: duplicate %v, want %v", n, c.in, got, c.dup)
			}
		}
	}
}

// TestCheckEscapedNames fills the buffer of decoded names past its
// initial size.
func TestCheckEscapedNames(t *testing.T) {
	for _, n := range []int{3, 10, 20} {
		var b strings.Builder
		b.WriteString(`{"o":{`)
		for i := range n {
			fmt.Fprintf(&b, `"%s\u00e9%d":{"\u0078%s":1},`, strings.Repeat(`\u00e9`, 10), i, strings.Repeat("y", i))
		}
		base := b.String()
		for _, c := range []struct {
			last string
			dup  bool
		}{
			{`"z":0}}`, false},
			{`"` + strings.Repeat("é", 11) + `0":0}}`, true},
			{`"` + strings.Repeat("é", 11) + fmt.Sprint(n-1) + `":0}}`, true},
			{`"` + strings.Repeat("é", 11) + fmt.Sprint(n) + `":0}}`, false},
		} {
			in := []byte(base + c.last)
			if got := checkProblem(in); (got == "duplicate") != c.dup || got != reference(in) {
				t.Errorf("%d names, then %s: %q (%v)", n, c.last, got, Check(in))
			}
		}
	}
}

// TestNamesReset: a Names left with open objects (a scan that stopped at
// an error) works again after Reset, in its arrays and on the heap.
func TestNamesReset(t *testing.T) {
	data := []byte(`"a" "b"`)
	for _, deep := range []int{1, 3, 20} {
		var s Names
		for range deep {
			s.Open()
			if s.Add(data, 0, 3, false) != nil || s.Add(data, 4, 7, false) != nil {
				t.Fatal("distinct names refused")
			}
		}
		for round := range 3 {
			s.Reset()
			s.Open()
			if e := s.Add(data, 0, 3, false); e != nil {
				t.Fatalf("depth %d, round %d: %v after Reset", deep, round, e)
			}
			if e := s.Add(data, 0, 3, false); e == nil || !e.Duplicate || e.Member != "a" {
				t.Fatalf("depth %d, round %d: repeated name: %v", deep, round, e)
			}
			s.Close()
		}
	}
}

func TestCheckError(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	for _, c := range []struct {
		in     string
		offset int
		msg    string
		member string
	}{
		{`{"a":1,"a":2}`, 7, `duplicate member "a"`, "a"},
		{`{"a":1, "\u0061":2}`, 8, `duplicate member "a"`, "a"},
		{`{"x":[{"b":{},"b":[]}]}`, 14, `duplicate member "b"`, "b"},
		{`{"":1,"":2}`, 6, `duplicate member ""`, ""},
		{`{"q\"":1,"q\u0022":2}`, 9, `duplicate member "q\""`, `q"`},
		{`{"` + long + `":1,"` + long + `":2}`, 86, `duplicate member "` + long[:64] + `"...`, long[:64]},
		{`{"a` + long + `":1,"a` + long + `":2}`, 87, `duplicate member "a` + long[:62] + `"...`, "a" + long[:62]},
		{``, 0, "unexpected end of JSON input", ""},
		{`{"a":1`, 6, "unexpected end of JSON input", ""},
		{`{"a" 1}`, 5, "invalid character '1' after object key", ""},
		{`{"a":1 "b":2}`, 7, `invalid character '"' after object key:value pair`, ""},
		{`[1 2]`, 3, "invalid character '2' after array element", ""},
		{`{1:2}`, 1, "invalid character '1' looking for beginning of object key string", ""},
		{`[x]`, 1, "invalid character 'x' looking for beginning of value", ""},
		{`1 x`, 2, "invalid character 'x' after top-level value", ""},
		{`[tru]`, 4, "invalid character ']' in literal true (expecting 'e')", ""},
		{`-x`, 1, "invalid character 'x' in numeric literal", ""},
		{`1.x`, 2, "invalid character 'x' after decimal point in numeric literal", ""},
		{`1e+]`, 3, "invalid character ']' in exponent of numeric literal", ""},
		{"\"a\x01\"", 2, `invalid character '\x01' in string literal`, ""},
		{`"\q"`, 2, "invalid character 'q' in string escape code", ""},
		{`"\u12x4"`, 5, `invalid character 'x' in \u hexadecimal character escape`, ""},
		{"[\"ok\",\"\xc3(\"]", 7, "invalid UTF-8 in string", ""},
		{"\xef\xbb\xbf1", 0, "invalid character byte 0xef looking for beginning of value", ""},
	} {
		err := Check([]byte(c.in))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Check(%q) = %v, want an *Error", c.in, err)
			continue
		}
		if e.Offset != c.offset || e.Msg != c.msg || e.Member != c.member || e.Duplicate != strings.HasPrefix(c.msg, "duplicate") {
			t.Errorf("Check(%q) = %+v, want offset %d, %q, member %q", c.in, *e, c.offset, c.msg, c.member)
		}
		if want := fmt.Sprintf("%s at offset %d", c.msg, c.offset); err.Error() != want {
			t.Errorf("Check(%q).Error() = %q, want %q", c.in, err, want)
		}
	}
}

func TestCheckDepthLimit(t *testing.T) {
	for _, n := range []int{16, 17, 64, 65, 9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`, `{"a":[{"b":1},`} {
			close := strings.Repeat("]", strings.Count(open, "[")) + strings.Repeat("}", strings.Count(open, "{"))
			s := strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
			if got, want := checkProblem([]byte(s)), reference([]byte(s)); got != want {
				t.Errorf("depth %d %q: %q, want %q", n, open, got, want)
			}
		}
	}
}

func TestCheckDoesNotAllocate(t *testing.T) {
	for _, data := range [][]byte{
		sample,
		[]byte(manyMembers(16)),
		[]byte(`{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":[[[[{}]]]]}}}}}}}}`),
		[]byte(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}}}`),
		[]byte(`{"\u0061":{"b\n":1,"b\t":2,"x":"\ud83d\ude00"},"\/":[{"\"":1,"\\":2}]}`),
	} {
		if err := Check(data); err != nil {
			t.Fatalf("Check(%.60s...): %v", data, err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = Check(data) }); n != 0 {
			t.Errorf("Check(%.60s...) allocates %v times", data, n)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	for _, c := range checkCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(manyMembers(17, "k3")))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := checkProblem(data), reference(data); !consistent(got, want) {
			t.Fatalf("Check(%q): %q, want %q (%v)", data, got, want, Check(data))
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	b.SetBytes(int64(len(sample)))
	for b.Loop() {
		if Check(sample) != nil {
			b.Fatal("refused")
		}
	}
}
