package jsondec

import (
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

// maxDepth bounds the nesting of arrays and objects, as in encoding/json.
const maxDepth = 10000

// A SyntaxError describes refused input: malformed JSON, invalid UTF-8 or
// a member name repeated in an object. It wraps the *jsonvalid.Error that
// says which, the repeated name included.
type SyntaxError struct {
	msg    string
	Offset int64 // the input offset where the error was detected
	cause  *jsonvalid.Error
}

// wrapError returns the SyntaxError for e.
func wrapError(e *jsonvalid.Error) *SyntaxError {
	return &SyntaxError{msg: e.Msg, Offset: int64(e.Offset), cause: e}
}

func (e *SyntaxError) Error() string {
	return "json: syntax error at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.msg
}

// Unwrap returns the *jsonvalid.Error behind e.
func (e *SyntaxError) Unwrap() error { return e.cause }

// parser holds the state of one decode call.
type parser struct {
	data  []byte
	pos   int          // next byte to read
	depth int          // open arrays and objects
	outer reflect.Type // set for the top-level value only

	// err is the first type error, returned when the input is otherwise
	// decoded without error.
	err error
	// ctxErr is the type error still receiving its struct field path:
	// each struct member decoder around it, from the innermost, prepends
	// its member name when ctxLevel equals its nesting level.
	ctxErr     *json.UnmarshalTypeError
	ctxLevel   int
	ctxStarted bool
	level      int // struct members being decoded, one inside the other

	// names holds the member names of the objects being read, to refuse
	// a repeated one (struct fields are tracked apart, see structObject).
	// It comes from namesPool when the first object needs it.
	names *jsonvalid.Names
}

var namesPool = sync.Pool{New: func() any { return new(jsonvalid.Names) }}

// openNames notes the start of an object with members whose names go to
// p.names.
func (p *parser) openNames() {
	if p.names == nil {
		p.names = namesPool.Get().(*jsonvalid.Names)
	}
	p.names.Open()
}

// release returns p.names to the pool.
func (p *parser) release() {
	if p.names != nil {
		p.names.Reset()
		namesPool.Put(p.names)
		p.names = nil
	}
}

// typeError records a value that does not fit type t, unless one was
// recorded already.
func (p *parser) typeError(e *json.UnmarshalTypeError) {
	if p.err == nil {
		p.err = e
		p.ctxErr, p.ctxLevel, p.ctxStarted = e, p.level, false
	}
}

// saveError records an error other than a type error, returned after the
// rest has been decoded unless an error was recorded already.
func (p *parser) saveError(err error) {
	if p.err == nil {
		p.err = err
	}
}

// methodError notes an error returned by an Unmarshaler method, which ends
// decoding; a type error gets its field path like a recorded one.
func (p *parser) methodError(err error) error {
	if e, ok := err.(*json.UnmarshalTypeError); ok {
		p.ctxErr, p.ctxLevel, p.ctxStarted = e, p.level, false
	}
	return err
}

//go:noinline
func (p *parser) syntaxError(msg string) error {
	return wrapError(&jsonvalid.Error{Offset: p.pos, Msg: msg})
}

// addName records the name of a member of the innermost object, the
// string data[start:p.pos], and refuses a repeated one.
func (p *parser) addName(start int, escaped bool) error {
	if e := p.names.Add(p.data, start, p.pos, escaped); e != nil {
		return wrapError(e)
	}
	return nil
}

//go:noinline
func (p *parser) eof() error {
	p.pos = len(p.data)
	return p.syntaxError("unexpected end of JSON input")
}

// invalid reports the byte at p.pos as unexpected.
//
//go:noinline
func (p *parser) invalid(context string) error {
	return p.syntaxError("invalid character " + quoteChar(p.data[p.pos]) + " " + context)
}

func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// space skips white space and returns the next byte, false at the end.
func (p *parser) space() (byte, bool) {
	data, i := p.data, p.pos
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			p.pos = i
			return c, true
		}
	}
	p.pos = i
	return 0, false
}

// peek skips white space and returns the next byte.
func (p *parser) peek() (byte, error) {
	if c, ok := p.space(); ok {
		return c, nil
	}
	return 0, p.eof()
}

// open enters the array or object whose bracket is at p.pos.
func (p *parser) open() error {
	if p.depth >= maxDepth {
		return p.syntaxError("exceeded max depth")
	}
	p.depth++
	p.pos++
	return nil
}

// colon reads the ':' after an object key.
func (p *parser) colon() error {
	c, err := p.peek()
	if err != nil {
		return err
	}
	if c != ':' {
		return p.invalid("after object key")
	}
	p.pos++
	return nil
}

// next reads the ',' or closing bracket after a member or element. It
// returns true at the end of the array or object.
func (p *parser) next(obj bool) (bool, error) {
	c, err := p.peek()
	if err != nil {
		return false, err
	}
	switch {
	case c == ',':
		p.pos++
		return false, nil
	case obj && c == '}', !obj && c == ']':
		p.pos++
		p.depth--
		return true, nil
	case obj:
		return false, p.invalid("after object key:value pair")
	}
	return false, p.invalid("after array element")
}

// literal reads the word true, false or null at p.pos.
func (p *parser) literal(word string) error {
	data := p.data
	for i := 1; i < len(word); i++ {
		if p.pos+i >= len(data) {
			return p.eof()
		}
		if data[p.pos+i] != word[i] {
			p.pos += i
			return p.invalid("in literal " + word + " (expecting " + quoteChar(word[i]) + ")")
		}
	}
	p.pos += len(word)
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number reads the number at p.pos and returns its text.
func (p *parser) number() ([]byte, error) {
	data, start := p.data, p.pos
	i := start
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return nil, p.eof()
	case data[i] == '0':
		i++
	case isDigit(data[i]):
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	default:
		p.pos = i
		return nil, p.invalid("in numeric literal")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) {
			return nil, p.eof()
		}
		if !isDigit(data[i]) {
			p.pos = i
			return nil, p.invalid("after decimal point in numeric literal")
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) {
			return nil, p.eof()
		}
		if !isDigit(data[i]) {
			p.pos = i
			return nil, p.invalid("in exponent of numeric literal")
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	p.pos = i
	return data[start:i], nil
}

// validNumber reports whether s is exactly one JSON number.
func validNumber(s []byte) bool {
	if len(s) == 0 || (s[0] != '-' && !isDigit(s[0])) {
		return false
	}
	q := parser{data: s}
	_, err := q.number()
	return err == nil && q.pos == len(s)
}

// plainByte marks the bytes a string holds as they are: printable ASCII
// other than the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// str reads the string at p.pos (its opening quote) and returns its
// content between the quotes; invalid UTF-8 is a syntax error. plain
// reports that the content is its own value, without escapes; otherwise
// unescape gives the value.
func (p *parser) str() (raw []byte, plain bool, err error) {
	data := p.data
	start := p.pos + 1
	i := start
	plain = true
	for {
		for i < len(data) && plainByte[data[i]] {
			i++
		}
		if i >= len(data) {
			return nil, false, p.eof()
		}
		switch c := data[i]; {
		case c == '"':
			raw = data[start:i]
			p.pos = i + 1
			return raw, plain, nil
		case c == '\\':
			plain = false
			if i+1 >= len(data) {
				return nil, false, p.eof()
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(data) {
						return nil, false, p.eof()
					}
					if !isHex(data[k]) {
						p.pos = k
						return nil, false, p.invalid(`in \u hexadecimal character escape`)
					}
				}
				i += 6
			default:
				p.pos = i + 1
				return nil, false, p.invalid("in string escape code")
			}
		case c < 0x20:
			p.pos = i
			return nil, false, p.invalid("in string literal")
		default: // not ASCII
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				p.pos = i
				return nil, false, p.syntaxError("invalid UTF-8 in string")
			}
			i += n
		}
	}
}

// stringValue reads the string at p.pos as a Go string.
func (p *parser) stringValue() (string, error) {
	raw, plain, err := p.str()
	if err != nil {
		return "", err
	}
	if plain {
		return string(raw), nil
	}
	return bytesString(unescape(make([]byte, 0, len(raw)), raw)), nil
}

// text reads the string at p.pos and returns its value, which may share
// the input's memory.
func (p *parser) text() ([]byte, error) {
	raw, plain, err := p.str()
	if err != nil {
		return nil, err
	}
	if plain {
		return raw[:len(raw):len(raw)], nil
	}
	return unescape(make([]byte, 0, len(raw)), raw), nil
}

// key reads the object key at p.pos and returns its value, which may
// share the input's memory, and whether it had escapes.
func (p *parser) key() ([]byte, bool, error) {
	raw, plain, err := p.str()
	if err != nil {
		return nil, false, err
	}
	if plain {
		return raw[:len(raw):len(raw)], false, nil
	}
	return unescape(make([]byte, 0, len(raw)), raw), true, nil
}

// unescape appends the value of string content raw, already checked by
// str (invalid UTF-8 refused), to dst.
func unescape(dst, raw []byte) []byte { return jsonvalid.AppendUnescaped(dst, raw) }

// skip checks the value at p.pos and moves past it. It keeps the stack of
// open arrays and objects in a bit set, so that nesting costs no recursion.
func (p *parser) skip() error {
	var small [4]uint64
	stack := small[:0] // bit i: level i is an object
	n := 0             // open levels
	for {
		// A value starts here.
		c, err := p.peek()
		if err != nil {
			return err
		}
		switch c {
		case '{', '[':
			if p.depth+n >= maxDepth {
				return p.syntaxError("exceeded max depth")
			}
			if n/64 == len(stack) {
				stack = append(stack, 0)
			}
			if c == '{' {
				stack[n/64] |= 1 << (n % 64)
			} else {
				stack[n/64] &^= 1 << (n % 64)
			}
			n++
			p.pos++
			e, err := p.peek()
			if err != nil {
				return err
			}
			if c == '{' {
				if e == '}' {
					p.pos++
					n--
					break
				}
				p.openNames()
				if err := p.skipKey(e); err != nil {
					return err
				}
			} else if e == ']' {
				p.pos++
				n--
				break
			}
			continue
		case '"':
			if _, _, err := p.str(); err != nil {
				return err
			}
		case 't':
			err = p.literal("true")
		case 'f':
			err = p.literal("false")
		case 'n':
			err = p.literal("null")
		default:
			if c != '-' && !isDigit(c) {
				return p.invalid("looking for beginning of value")
			}
			_, err = p.number()
		}
		if err != nil {
			return err
		}
		// A value ended: close the levels it ends.
		for {
			if n == 0 {
				return nil
			}
			obj := stack[(n-1)/64]&(1<<((n-1)%64)) != 0
			c, err := p.peek()
			if err != nil {
				return err
			}
			if c == ',' {
				p.pos++
				if obj {
					c, err := p.peek()
					if err != nil {
						return err
					}
					if err := p.skipKey(c); err != nil {
						return err
					}
				}
				break
			}
			if obj && c == '}' || !obj && c == ']' {
				p.pos++
				n--
				if obj {
					p.names.Close()
				}
				continue
			}
			if obj {
				return p.invalid("after object key:value pair")
			}
			return p.invalid("after array element")
		}
	}
}

// skipKey reads an object key, whose first byte is c, and its colon.
func (p *parser) skipKey(c byte) error {
	if c != '"' {
		return p.invalid("looking for beginning of object key string")
	}
	start := p.pos
	_, plain, err := p.str()
	if err != nil {
		return err
	}
	if err := p.addName(start, !plain); err != nil {
		return err
	}
	return p.colon()
}

// end checks that only white space follows the top-level value.
func (p *parser) end() error {
	if _, ok := p.space(); ok {
		return p.invalid("after top-level value")
	}
	return nil
}
