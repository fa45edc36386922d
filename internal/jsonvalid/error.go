package jsonvalid

import (
	"strconv"
	"unicode/utf8"
)

// Error is why [Check] refused its input.
type Error struct {
	// Offset is the byte offset in the input where the problem was found:
	// the offending byte, the length of the input when it ended too soon,
	// or, for a duplicate member, the opening quote of the second name.
	Offset int
	// Msg describes the problem, without the offset: for example
	// `invalid character 'x' after object key` or `duplicate member "a"`.
	Msg string
	// Member is set for a duplicate member only: the repeated name, with
	// its escapes decoded, clipped to MaxMemberLen bytes (at a character
	// boundary). It is empty for other errors, and also for a repeated
	// empty name: test Duplicate, not Member, to tell duplicates apart.
	Member string
	// Duplicate reports that the input is well-formed JSON up to Offset
	// but repeats a member name in one object.
	Duplicate bool
}

// MaxMemberLen bounds the length of [Error.Member].
const MaxMemberLen = 64

// Error returns Msg followed by the offset, as in
// `duplicate member "a" at offset 9`.
func (e *Error) Error() string {
	return e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

// charError reports the byte at data[i] as unexpected in the given
// context, or the end of the input when i is past it.
//
//go:noinline
func charError(data []byte, i int, context string) *Error {
	if i >= len(data) {
		return eofError(data)
	}
	return &Error{Offset: i, Msg: "invalid character " + quoteChar(data[i]) + " " + context}
}

//go:noinline
func eofError(data []byte) *Error {
	return &Error{Offset: len(data), Msg: "unexpected end of JSON input"}
}

//go:noinline
func depthError(i int) *Error {
	return &Error{Offset: i, Msg: "exceeded max depth of " + strconv.Itoa(maxDepth)}
}

// duplicateError reports the member whose name starts at data[i] and whose
// decoded name is name.
//
//go:noinline
func duplicateError(i int, name []byte) *Error {
	member := name
	clipped := false
	if len(member) > MaxMemberLen {
		n := MaxMemberLen
		for n > 0 && !utf8.RuneStart(member[n]) {
			n--
		}
		member, clipped = member[:n], true
	}
	msg := "duplicate member " + strconv.Quote(string(member))
	if clipped {
		msg += "..."
	}
	return &Error{Offset: i, Msg: msg, Member: string(member), Duplicate: true}
}

func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	if c >= utf8.RuneSelf {
		return "byte 0x" + strconv.FormatUint(uint64(c), 16)
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// stringError explains why the string starting at data[i] (its quote) was
// refused; it is only called for a string that is bad.
//
//go:noinline
func stringError(data []byte, i int) *Error {
	for j := i + 1; j < len(data); {
		c := data[j]
		switch {
		case c == '"':
			// Not reached for a refused string; be safe.
			return &Error{Offset: j, Msg: "malformed string"}
		case c == '\\':
			if j+1 >= len(data) {
				return eofError(data)
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for k := j + 2; k < j+6; k++ {
					if k >= len(data) {
						return eofError(data)
					}
					if !hex[data[k]] {
						return charError(data, k, `in \u hexadecimal character escape`)
					}
				}
				j += 6
			default:
				return charError(data, j+1, "in string escape code")
			}
		case c < 0x20:
			return charError(data, j, "in string literal")
		case c < utf8.RuneSelf:
			j++
		default:
			r, n := utf8.DecodeRune(data[j:])
			if r == utf8.RuneError && n == 1 {
				return &Error{Offset: j, Msg: "invalid UTF-8 in string"}
			}
			j += n
		}
	}
	return eofError(data)
}

// numberError explains why the number starting at data[i] was refused.
//
//go:noinline
func numberError(data []byte, i int) *Error {
	minus := data[i] == '-'
	if minus {
		i++
	}
	switch {
	case i >= len(data):
		return eofError(data)
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = digits(data, i+1)
	default:
		if minus {
			return charError(data, i, "in numeric literal")
		}
		return charError(data, i, "looking for beginning of value")
	}
	if i < len(data) && data[i] == '.' {
		if j := digits(data, i+1); j == i+1 {
			return charError(data, i+1, "after decimal point in numeric literal")
		} else {
			i = j
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		return charError(data, i, "in exponent of numeric literal")
	}
	return charError(data, i, "in numeric literal")
}

// literalError explains why the literal lit expected at data[i] is not
// there.
//
//go:noinline
func literalError(data []byte, i int, lit string) *Error {
	for k := 1; k < len(lit); k++ {
		if i+k >= len(data) {
			return eofError(data)
		}
		if data[i+k] != lit[k] {
			return charError(data, i+k, "in literal "+lit+" (expecting "+quoteChar(lit[k])+")")
		}
	}
	return charError(data, i+len(lit), "after literal "+lit)
}

// DuplicateError returns the error Check returns for a repeated member
// name: the name's decoded value is name, and its string starts at
// data[offset]. It is for decoders that find repeated names on their own.
func DuplicateError(offset int, name []byte) *Error {
	return duplicateError(offset, name)
}
