package server

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// uriTemplate is a resource template's RFC 6570 URI template (levels 1 to
// 4: simple {x}, reserved {+x}, fragment {#x}, label {.x}, path segment
// {/x}, path-style parameter {;x}, query {?x} and query continuation {&x}
// expressions, with prefix {x:3} and explode {x*} modifiers). The server
// never expands templates: it matches the URIs clients read against them
// and hands the variables to the handler.
//
// Matching is the inverse of expansion, and is lenient where a client may
// reasonably spell a URI differently from what expansion produces:
//
//   - A variable's value is percent-decoded, except in reserved {+x} and
//     fragment {#x} expressions, where percent-encoded reserved characters
//     (gen-delims and sub-delims, RFC 3986) are kept as written, as
//     reserved expansion passes them through; other octets are decoded
//     there too (so "%25" becomes "%"). Malformed percent-encoding is kept
//     as written.
//   - Simple, label, path and parameter values stop at "/", "?" and "#";
//     reserved and fragment values may contain anything (the rest of the
//     template decides where they end, and the shortest value that lets it
//     match is taken).
//   - Query parameters ({?x} and {&x}) may come in any order, mixed with
//     parameters the template does not name, which are ignored; a name
//     given several times (as an exploded list expands) yields its values
//     joined with ",", the form a non-exploded list takes. Path-style
//     parameters ({;x}) are read the same way.
//   - Variables a URI leaves out (undefined ones expand to nothing) are
//     absent from the result; in simple and reserved expressions, where
//     nothing marks them, they come back empty.
//   - A variable with a prefix modifier {x:n} matches at most n characters
//     (after decoding). A variable used more than once must take
//     consistent values (a prefix use must be a prefix of the full value).
//   - A literal outside ASCII (as in "file:///café/{name}") matches both
//     its percent-encoded UTF-8 form, which is what expansion produces
//     ("file:///caf%C3%A9/readme"), and the character itself, as IRIs
//     carry it; percent-encoded literals match with either case of hex
//     digits, and those encoding an unreserved character also match the
//     character itself.
//
// Values are strings: a list comes back as it appears in the URI, its
// items joined by "," (or by "." and "/" in exploded label and path
// expressions), and so does an associative array ("k,v,..." or, exploded,
// "k=v,..."), except that an exploded associative array in a parameter or
// query expression ({?keys*}) expands to its own member names, which are
// not attributed to the variable. Multiple variables in one expression are
// split at the expression's separator, an exploded one taking the parts the
// others leave over, so a value containing the separator unencoded
// (possible in reserved expansion, and in label expansion for ".") or an
// undefined variable before the last shifts the values that follow.
type uriTemplate struct {
	raw   string
	re    *regexp.Regexp
	exprs []templateExpr // one per capturing group, in order
	// repeated is set when a variable name occurs more than once.
	repeated bool
}

type templateExpr struct {
	op   byte // 0 for a simple expression
	vars []templateVar
}

type templateVar struct {
	name    string // as written in the template (it may be percent-encoded)
	key     string // name decoded, as query and parameter names are compared
	prefix  int    // maximum length from a prefix modifier; 0 if none
	explode bool
}

// maxPrefix is the largest prefix modifier RFC 6570 allows.
const maxPrefix = 9999

// parseURITemplate parses and checks a URI template, refusing anything that
// is not RFC 6570 syntax: unbalanced braces, empty expressions, reserved
// operators (=,!@|), malformed variable names or modifiers (a prefix must
// be 1 to 9999, and cannot be combined with explode), malformed
// percent-encoding and characters a URI cannot contain (controls, space,
// and "<>\^`|). The apostrophe, which RFC 6570's grammar leaves out but its
// examples use, is accepted.
func parseURITemplate(t string) (*uriTemplate, error) {
	if t == "" {
		return nil, errors.New("empty URI template")
	}
	if !utf8.ValidString(t) {
		return nil, errors.New("URI template is not valid UTF-8")
	}
	ut := &uriTemplate{raw: t}
	var re strings.Builder
	re.WriteString("^")
	seen := make(map[string]bool)
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '{':
			end := strings.IndexAny(t[i+1:], "{}")
			if end < 0 || t[i+1+end] == '{' {
				return nil, fmt.Errorf("unclosed expression at offset %d", i)
			}
			e, err := parseExpression(t[i+1 : i+1+end])
			if err != nil {
				return nil, fmt.Errorf("expression %q at offset %d: %w", t[i:i+2+end], i, err)
			}
			for _, v := range e.vars {
				ut.repeated = ut.repeated || seen[v.name]
				seen[v.name] = true
			}
			ut.exprs = append(ut.exprs, e)
			i += end + 2
			re.WriteString(e.pattern(i == len(t)))
		case c == '}':
			return nil, fmt.Errorf("'}' without '{' at offset %d", i)
		case c == '%':
			if i+2 >= len(t) || !isHex(t[i+1]) || !isHex(t[i+2]) {
				return nil, fmt.Errorf("malformed percent-encoding at offset %d", i)
			}
			b := unhex(t[i+1])<<4 | unhex(t[i+2])
			re.WriteString(`(?:` + encodedPattern(b))
			if b < utf8.RuneSelf && isUnreserved(b) {
				re.WriteString(`|` + regexp.QuoteMeta(string(rune(b))))
			}
			re.WriteString(`)`)
			i += 3
		case c < utf8.RuneSelf:
			if c <= ' ' || c == 0x7f || strings.IndexByte("\"<>\\^`|", c) >= 0 {
				return nil, fmt.Errorf("character %q at offset %d is not allowed in a URI template", c, i)
			}
			re.WriteString(regexp.QuoteMeta(string(c)))
			i++
		default:
			_, size := utf8.DecodeRuneInString(t[i:])
			re.WriteString(`(?:` + regexp.QuoteMeta(t[i:i+size]) + `|`)
			for j := i; j < i+size; j++ {
				re.WriteString(encodedPattern(t[j]))
			}
			re.WriteString(`)`)
			i += size
		}
	}
	re.WriteString("$")
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil, err
	}
	ut.re = compiled
	return ut, nil
}

// parseExpression parses the text between an expression's braces.
func parseExpression(body string) (templateExpr, error) {
	var e templateExpr
	if body == "" {
		return e, errors.New("empty expression")
	}
	switch c := body[0]; c {
	case '+', '#', '.', '/', ';', '?', '&':
		e.op, body = c, body[1:]
	case '=', ',', '!', '@', '|':
		return e, fmt.Errorf("operator %q is reserved", c)
	}
	for _, spec := range strings.Split(body, ",") {
		name, mod := spec, ""
		if k := strings.IndexAny(spec, ":*"); k >= 0 {
			name, mod = spec[:k], spec[k:]
		}
		if !validVarName(name) {
			return e, fmt.Errorf("invalid variable name %q", name)
		}
		v := templateVar{name: name, key: pctDecode(name, false)}
		switch {
		case mod == "":
		case mod == "*":
			v.explode = true
		case mod[0] == ':' && strings.HasSuffix(mod, "*"):
			return e, fmt.Errorf("variable %q combines a prefix and an explode modifier", name)
		case mod[0] == ':':
			n, ok := prefixLength(mod[1:])
			if !ok {
				return e, fmt.Errorf("variable %q: prefix length must be an integer from 1 to %d", name, maxPrefix)
			}
			v.prefix = n
		default:
			return e, fmt.Errorf("variable %q: invalid modifier %q", name, mod)
		}
		e.vars = append(e.vars, v)
	}
	return e, nil
}

// validVarName checks RFC 6570's varname: varchars (letters, digits, "_"
// and percent-encoded octets) with single dots between them.
func validVarName(s string) bool {
	if s == "" {
		return false
	}
	afterDot := true // a name cannot start with "."
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if afterDot {
				return false
			}
			afterDot = true
			continue
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		case c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default:
			return false
		}
		afterDot = false
	}
	return !afterDot
}

// prefixLength parses a prefix modifier's max-length: 1 to 9999 without
// leading zeros.
func prefixLength(s string) (int, bool) {
	if s == "" || len(s) > 4 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// pattern returns the regular expression matching the expression's
// expansions, with one capturing group. Reserved and fragment values take
// the shortest text that lets the rest of the template match, or all that
// is left when the expression ends the template.
func (e templateExpr) pattern(last bool) string {
	switch {
	case e.op == '+' && last:
		return `(.*)`
	case e.op == '+':
		return `(.*?)`
	case e.op == '#' && last:
		return `(?:#(.*))?`
	case e.op == '#':
		return `(?:#(.*?))?`
	}
	switch e.op {
	case '.':
		return `(\.[^/?#]*)?`
	case '/':
		return `((?:/[^/?#]*)*)`
	case ';':
		return `((?:;[^/?#]*)*)`
	case '?':
		return `(?:\?([^#]*))?`
	case '&':
		return `((?:&[^#]*)*)`
	}
	return `([^/?#]*)`
}

// separator returns the character between the values of an expression's
// variables.
func (e templateExpr) separator() byte {
	switch e.op {
	case '.', '/':
		return e.op
	}
	return ','
}

// split divides the text an expression matched (without its leading
// operator character) among its variables. An exploded variable takes every
// part the variables after it leave over; otherwise the last variable takes
// the rest. When there are fewer parts than variables, the last variables
// get none (they were undefined).
func (e templateExpr) split(raw string) []string {
	if len(e.vars) == 1 {
		return []string{raw}
	}
	sep := string(e.separator())
	explode := -1
	for j, v := range e.vars {
		if v.explode {
			explode = j
			break
		}
	}
	if explode < 0 || explode == len(e.vars)-1 {
		return strings.SplitN(raw, sep, len(e.vars))
	}
	parts := strings.Split(raw, sep)
	extra := len(parts) - len(e.vars)
	if extra <= 0 {
		return parts
	}
	joined := strings.Join(parts[explode:explode+extra+1], sep)
	return append(append(parts[:explode:explode], joined), parts[explode+extra+1:]...)
}

// match reports whether uri matches the template and returns the variables
// (see uriTemplate for how values are read).
func (ut *uriTemplate) match(uri string) (map[string]string, bool) {
	idx := ut.re.FindStringSubmatchIndex(uri)
	if idx == nil {
		return nil, false
	}
	vars := make(map[string]string)
	var prefixed map[string]int // length limit of values set by a prefix use
	// set records a value, checking it against a prefix modifier (n is its
	// length in characters) and against other uses of the variable.
	set := func(v templateVar, val string, n int) bool {
		if v.prefix > 0 && n > v.prefix {
			return false
		}
		if !ut.repeated {
			vars[v.name] = val
			return true
		}
		old, ok := vars[v.name]
		if !ok {
			vars[v.name] = val
			if v.prefix > 0 {
				if prefixed == nil {
					prefixed = make(map[string]int)
				}
				prefixed[v.name] = v.prefix
			}
			return true
		}
		oldLimit, oldPrefixed := prefixed[v.name]
		switch {
		case v.prefix == 0 && !oldPrefixed:
			return val == old
		case v.prefix == 0: // a full value after a prefix
			if truncate(val, oldLimit) != old {
				return false
			}
			vars[v.name] = val
			delete(prefixed, v.name)
			return true
		case !oldPrefixed:
			return truncate(old, v.prefix) == val
		default:
			n := min(v.prefix, oldLimit)
			if truncate(old, n) != truncate(val, n) {
				return false
			}
			if v.prefix > oldLimit {
				vars[v.name], prefixed[v.name] = val, v.prefix
			}
			return true
		}
	}
	// Query and path-style parameters are looked up among all such
	// expressions' text, whichever expression they came in.
	var query, params []string
	for gi, e := range ut.exprs {
		if start := idx[2*gi+2]; start >= 0 && (e.op == '?' || e.op == '&' || e.op == ';') {
			if e.op == ';' {
				params = append(params, uri[start:idx[2*gi+3]])
			} else {
				query = append(query, uri[start:idx[2*gi+3]])
			}
		}
	}
	for gi, e := range ut.exprs {
		start, end := idx[2*gi+2], idx[2*gi+3]
		if start < 0 {
			continue // an optional expression that is absent
		}
		raw := uri[start:end]
		switch e.op {
		case '?', '&', ';':
			texts, sep := query, byte('&')
			if e.op == ';' {
				texts, sep = params, ';'
			}
			for _, v := range e.vars {
				val, ok := paramValue(texts, sep, v.key)
				if !ok {
					continue
				}
				if !set(v, val, utf8.RuneCountInString(val)) {
					return nil, false
				}
			}
		default:
			if e.op == '.' || e.op == '/' {
				if raw == "" {
					continue // no segment: every variable undefined
				}
				raw = raw[1:]
			}
			parts := e.split(raw)
			keep := e.op == '+' || e.op == '#'
			for j, v := range e.vars {
				if j >= len(parts) {
					break
				}
				val, n := pctDecode(parts[j], keep), 0
				if v.prefix > 0 {
					n = utf8.RuneCountInString(pctDecode(parts[j], false))
				}
				if !set(v, val, n) {
					return nil, false
				}
			}
		}
	}
	return vars, true
}

// paramValue finds the value of the parameter named key (decoded) in
// query or path-style parameter texts separated by sep; a parameter without
// "=" has the empty value, and the values of a repeated one are joined with
// ",".
func paramValue(texts []string, sep byte, key string) (string, bool) {
	var val string
	found := false
	for _, text := range texts {
		for text != "" {
			var p string
			if i := strings.IndexByte(text, sep); i >= 0 {
				p, text = text[:i], text[i+1:]
			} else {
				p, text = text, ""
			}
			k, v, _ := strings.Cut(p, "=")
			if k == "" || pctDecode(k, false) != key {
				continue
			}
			if found {
				val += "," + pctDecode(v, false)
			} else {
				val, found = pctDecode(v, false), true
			}
		}
	}
	return val, found
}

// truncate returns the first n characters of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// pctDecode decodes the percent-encoded octets of s; malformed ones are kept
// as written, and so are those encoding reserved characters when
// keepReserved is set.
func pctDecode(s string, keepReserved bool) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if !keepReserved || !isReserved(d) {
				b = append(b, d)
				i += 2
				continue
			}
		}
		b = append(b, c)
	}
	return string(b)
}

// encodedPattern matches the percent-encoding of octet b, either case.
func encodedPattern(b byte) string {
	const digits = "0123456789ABCDEF"
	var sb strings.Builder
	sb.WriteByte('%')
	for _, d := range []byte{digits[b>>4], digits[b&15]} {
		if d >= 'A' {
			sb.WriteString("[" + string(d) + string(d+'a'-'A') + "]")
		} else {
			sb.WriteByte(d)
		}
	}
	return sb.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// isUnreserved reports RFC 3986 unreserved characters.
func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0
}

// isReserved reports RFC 3986 reserved characters (gen-delims and sub-delims).
func isReserved(c byte) bool {
	return c < utf8.RuneSelf && strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
}
