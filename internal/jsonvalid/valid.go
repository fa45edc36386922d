// Package jsonvalid checks JSON text without decoding it and without
// allocating.
//
// [Valid] reports whether bytes are one JSON value exactly as
// encoding/json.Valid does (RFC 8259 grammar, strings not checked for
// UTF-8, repeated member names allowed, at most 10000 levels of nesting),
// several times faster: it scans bytes in tight loops instead of running
// a state machine call per byte.
//
// [Check] is the stricter gate for data a peer sent: the same grammar,
// plus valid UTF-8 in every string and no repeated member name in any
// object, and it says what is wrong and where in an *[Error].
package jsonvalid

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// special marks the bytes a string scan must stop at: control characters,
// the quote and the backslash.
var special = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

var hex = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

// Valid reports whether data is exactly one JSON value, optionally
// surrounded by white space, with the semantics of encoding/json.Valid:
// invalid UTF-8 inside strings and repeated member names are accepted.
// Use [Check] for input that must be refused in those cases.
func Valid(data []byte) bool {
	// One bit per open container: set for an object, clear for an array.
	var words [4]uint64
	stack := words[:]
	depth := 0
	i := skipSpace(data, 0)
value:
	if i >= len(data) {
		return false
	}
	switch data[i] {
	case '{', '[':
		if depth == maxDepth {
			return false
		}
		if depth/64 == len(stack) {
			stack = append(stack, 0)
		}
		open := data[i]
		if open == '{' {
			stack[depth/64] |= 1 << (depth % 64)
		} else {
			stack[depth/64] &^= 1 << (depth % 64)
		}
		depth++
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == open+2 { // '}' or ']'
			i++
			depth--
			goto next
		}
		if open == '{' {
			goto key
		}
		goto value
	case '"':
		if i = scanString(data, i); i < 0 {
			return false
		}
	case 't':
		if !literal(data, i, "true") {
			return false
		}
		i += 4
	case 'f':
		if !literal(data, i, "false") {
			return false
		}
		i += 5
	case 'n':
		if !literal(data, i, "null") {
			return false
		}
		i += 4
	default:
		if i = scanNumber(data, i); i < 0 {
			return false
		}
	}
next:
	i = skipSpace(data, i)
	if depth == 0 {
		return i == len(data)
	}
	if i >= len(data) {
		return false
	}
	if stack[(depth-1)/64]&(1<<((depth-1)%64)) != 0 {
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
			goto key
		case '}':
			i++
			depth--
			goto next
		}
		return false
	}
	switch data[i] {
	case ',':
		i = skipSpace(data, i+1)
		goto value
	case ']':
		i++
		depth--
		goto next
	}
	return false
key:
	if i >= len(data) || data[i] != '"' {
		return false
	}
	if i = scanString(data, i); i < 0 {
		return false
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return false
	}
	i = skipSpace(data, i+1)
	goto value
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func literal(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// scanString returns the index after the string starting at b[i] (a quote),
// or -1 when it is malformed.
func scanString(b []byte, i int) int {
	i++
	for {
		for i < len(b) && !special[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !hex[b[i+2]] || !hex[b[i+3]] || !hex[b[i+4]] || !hex[b[i+5]] {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
}

// scanNumber returns the index after the number starting at b[i], or -1.
// What follows the number is checked by the caller.
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
