package schema

import (
	"regexp"
	"strconv"
	"strings"
)

// ecmaSpace lists the characters ECMA-262 "\s" matches (WhiteSpace and
// LineTerminator) in RE2 character-class syntax. RE2's own "\s" covers the
// ASCII ones only.
const ecmaSpace = `\t\n\v\f\r\x{2028}\x{2029}\x{feff}\p{Zs}`

// compilePattern compiles a "pattern" or "patternProperties" regular
// expression. JSON Schema patterns are ECMA-262 regular expressions; Go's
// RE2 syntax agrees on most of what schemas use, and the differences that
// change what a pattern matches are translated:
//
//   - "\s" and "\S" stand for ECMA-262 white space and line terminators
//     (including non-ASCII spaces such as U+00A0 and U+2028), not ASCII
//     white space only ("\S" inside a character class keeps RE2's meaning);
//   - "\cX" is the control character X mod 32.
//
// Constructs RE2 lacks (look-around, backreferences) remain compile errors.
func compilePattern(p string) (*regexp.Regexp, error) {
	if strings.IndexByte(p, '\\') < 0 {
		return regexp.Compile(p)
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '[' && !inClass:
			inClass = true
		case c == ']' && inClass:
			inClass = false
		case c == '\\' && i+1 < len(p):
			i++
			switch e := p[i]; {
			case e == 's' && inClass:
				b.WriteString(ecmaSpace)
			case e == 's':
				b.WriteString("[" + ecmaSpace + "]")
			case e == 'S' && !inClass:
				b.WriteString("[^" + ecmaSpace + "]")
			case e == 'c' && i+1 < len(p) && isASCIILetter(p[i+1]):
				i++
				b.WriteString(`\x{` + strconv.FormatInt(int64(p[i]%32), 16) + `}`)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			continue
		}
		b.WriteByte(c)
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		// Name the pattern as written where RE2 refuses it too.
		if _, err2 := regexp.Compile(p); err2 != nil {
			err = err2
		}
		return nil, err
	}
	return re, nil
}

func isASCIILetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
