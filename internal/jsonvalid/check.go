package jsonvalid

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// linearNames is how many member names an object keeps in the shared
// name stack, where a new name is compared with each earlier one; an
// object with more members moves its names to a map.
const linearNames = 16

// nameRef locates a member name already seen: data[off:] for a name
// without escapes (its text is its value), or arena[^off:] for the decoded
// value of a name with escapes (off is negative). tag is its nameTag, its
// length included.
type nameRef struct {
	tag uint64
	off int
}

// nameTag packs a name's length and three of its bytes, so that most
// different names are told apart without comparing them.
func nameTag(name []byte) uint64 {
	n := len(name)
	if n == 0 {
		return 0
	}
	return uint64(n)<<32 | uint64(name[0])<<16 | uint64(name[n/2])<<8 | uint64(name[n-1])
}

// filterBit picks the bit of an object's filter for a name's tag.
func filterBit(tag uint64) uint64 {
	return 1 << (tag * 0x9e3779b97f4a7c15 >> 58)
}

// bytes returns the name r locates.
func (r nameRef) bytes(data, arena []byte) []byte {
	n := int(r.tag >> 32)
	if r.off >= 0 {
		return data[r.off : r.off+n]
	}
	return arena[^r.off : ^r.off+n]
}

// openObject is the duplicate-check state of one object being scanned.
type openObject struct {
	names int32               // index in names of its first name
	arena int32               // length of arena when it opened
	seen  map[string]struct{} // its names, once there are too many to compare
	// filter has the filterBit of each of its names (while they are
	// compared): a name whose bit is clear is new.
	filter uint64
}

// Names finds a member name repeated in one object. Check uses it, and so
// can a decoder that walks JSON objects itself and must refuse what Check
// refuses: call Open when an object turns out to have members, Add for
// each member name, and Close at the end of the object; objects nest.
//
// The zero value is ready to use. Names starts in its own arrays, so that
// a local Names allocates nothing for small objects (see Check), and moves
// to the heap when they are full; since it holds no pointer to itself, it
// can stay on the stack. It must not be copied after first use.
type Names struct {
	nObjs, nNames, nArena int
	objs                  [8]openObject // open objects with members, innermost last
	names                 [24]nameRef   // their names, in order
	arena                 [64]byte      // decoded names that had escapes

	heap *heapMembers // all of the above, once the arrays are too small
}

type heapMembers struct {
	objs  []openObject
	names []nameRef
	arena []byte
}

// Reset empties s for another input, as after the last Close; a Names
// whose scan ended early (at an error) must be reset before it is reused.
func (s *Names) Reset() {
	for i := range s.objs[:s.nObjs] {
		s.objs[i].seen = nil
	}
	s.nObjs, s.nNames, s.nArena = 0, 0, 0
	if h := s.heap; h != nil {
		clear(h.objs[:cap(h.objs)])
		h.objs, h.names, h.arena = h.objs[:0], h.names[:0], h.arena[:0]
	}
}

// toHeap moves the set to the heap.
//
//go:noinline
func (s *Names) toHeap() {
	h := &heapMembers{
		objs:  make([]openObject, s.nObjs, 2*len(s.objs)),
		names: make([]nameRef, s.nNames, 2*len(s.names)),
		arena: make([]byte, s.nArena, 2*len(s.arena)),
	}
	copy(h.objs, s.objs[:s.nObjs])
	copy(h.names, s.names[:s.nNames])
	copy(h.arena, s.arena[:s.nArena])
	s.heap = h
}

// Open notes the start of an object with at least one member.
func (s *Names) Open() {
	if s.heap == nil && s.nObjs == len(s.objs) {
		s.toHeap()
	}
	if h := s.heap; h != nil {
		h.objs = append(h.objs, openObject{names: int32(len(h.names)), arena: int32(len(h.arena))})
		return
	}
	s.objs[s.nObjs] = openObject{names: int32(s.nNames), arena: int32(s.nArena)}
	s.nObjs++
}

// Close forgets the names of the innermost open object.
func (s *Names) Close() {
	if h := s.heap; h != nil {
		o := h.objs[len(h.objs)-1]
		h.names, h.arena = h.names[:o.names], h.arena[:o.arena]
		h.objs = h.objs[:len(h.objs)-1]
		return
	}
	s.nObjs--
	o := &s.objs[s.nObjs]
	s.nNames, s.nArena = int(o.names), int(o.arena)
	o.seen = nil
}

// Add records the name of a member of the innermost open object: the
// string data[i:j], quotes included, which must be well-formed (escapes
// valid, UTF-8); escaped reports that it has a backslash. It returns a
// duplicate-member *Error, at offset i, when the object has the name
// already.
func (s *Names) Add(data []byte, i, j int, escaped bool) *Error {
	o := &s.objs[(s.nObjs-1)&(len(s.objs)-1)]
	n := s.nNames
	if escaped || s.heap != nil || o.seen != nil || n-int(o.names) >= linearNames || n == len(s.names) {
		return s.addSlow(data, i, j, escaped)
	}
	// The common case: a name without escapes, in an object with few
	// members, all in the arrays. Most new names miss the filter.
	name := data[i+1 : j-1]
	tag := nameTag(name)
	if bit := filterBit(tag); o.filter&bit == 0 {
		o.filter |= bit
	} else {
		for k := int(o.names); k < n; k++ {
			if r := s.names[k]; r.tag == tag && string(r.bytes(data, s.arena[:])) == string(name) {
				return duplicateError(i, name)
			}
		}
	}
	s.names[n] = nameRef{tag: tag, off: i + 1}
	s.nNames = n + 1
	return nil
}

// addSlow is Add for the other cases.
//
//go:noinline
func (s *Names) addSlow(data []byte, i, j int, escaped bool) *Error {
	if s.heap == nil && (s.nNames == len(s.names) || escaped && s.nArena+j-i > len(s.arena)) {
		s.toHeap()
	}
	if h := s.heap; h != nil {
		var err *Error
		h.names, h.arena, err = addName(&h.objs[len(h.objs)-1], h.names, h.arena, data, i, j, escaped)
		return err
	}
	// The arrays have room: addName's appends stay in them.
	names, arena, err := addName(&s.objs[s.nObjs-1], s.names[:s.nNames], s.arena[:s.nArena], data, i, j, escaped)
	s.nNames, s.nArena = len(names), len(arena)
	return err
}

// addName adds the name data[i:j] (a string, escaped or not) to object o,
// whose names are at the end of names, unless o has it already. Names
// with escapes are decoded into arena.
func addName(o *openObject, names []nameRef, arena, data []byte, i, j int, escaped bool) ([]nameRef, []byte, *Error) {
	name := data[i+1 : j-1]
	off := i + 1
	if escaped {
		mark := len(arena)
		arena = AppendUnescaped(arena, name)
		name = arena[mark:]
		off = ^mark
	}
	if o.seen != nil {
		if _, dup := o.seen[string(name)]; dup {
			return names, arena, duplicateError(i, name)
		}
		o.seen[string(name)] = struct{}{}
		return names, arena[:o.arena], nil
	}
	tag := nameTag(name)
	o.filter |= filterBit(tag)
	for _, r := range names[o.names:] {
		if r.tag == tag && string(r.bytes(data, arena)) == string(name) {
			return names, arena, duplicateError(i, name)
		}
	}
	if len(names)-int(o.names) < linearNames {
		return append(names, nameRef{tag: tag, off: off}), arena, nil
	}
	// Too many names to compare each new one with: a map from now on.
	o.seen = make(map[string]struct{}, 2*linearNames)
	for _, r := range names[o.names:] {
		o.seen[string(r.bytes(data, arena))] = struct{}{}
	}
	o.seen[string(name)] = struct{}{}
	return names[:o.names], arena[:o.arena], nil
}

// Check reports whether data is exactly one JSON text as RFC 8259 defines
// it, and is stricter than [Valid] and encoding/json in two ways: the
// bytes of every string must be valid UTF-8, and no object, at any depth,
// may have two members of the same name. Names are compared after their
// escapes are decoded, so "a" and "\u0061" are the same name; an escaped
// unpaired surrogate counts as U+FFFD, as encoding/json decodes it.
// Only space, tab, line feed and carriage return are white space (no byte
// order mark), and nesting is limited to 10000 levels, as in
// encoding/json.
//
// The error, when there is one, is a *[Error]. Check does not allocate
// unless an object has more than 16 members, objects with members nest
// more than 8 deep, the open objects have more than 24 members in all, or
// their names have long escapes.
func Check(data []byte) error {
	// One bit per open container: set for an object, clear for an array.
	var words [4]uint64
	stack := words[:]
	var members Names
	depth := 0
	i := skipSpace(data, 0)
value:
	if i >= len(data) {
		return eofError(data)
	}
	switch data[i] {
	case '{', '[':
		if depth == maxDepth {
			return depthError(i)
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
			members.Open()
			goto key
		}
		goto value
	case '"':
		j, _ := checkString(data, i)
		if j < 0 {
			return stringError(data, i)
		}
		i = j
	case 't':
		if !literal(data, i, "true") {
			return literalError(data, i, "true")
		}
		i += 4
	case 'f':
		if !literal(data, i, "false") {
			return literalError(data, i, "false")
		}
		i += 5
	case 'n':
		if !literal(data, i, "null") {
			return literalError(data, i, "null")
		}
		i += 4
	default:
		j := scanNumber(data, i)
		if j < 0 {
			return numberError(data, i)
		}
		i = j
	}
next:
	i = skipSpace(data, i)
	if depth == 0 {
		if i != len(data) {
			return charError(data, i, "after top-level value")
		}
		return nil
	}
	if i >= len(data) {
		return eofError(data)
	}
	if stack[(depth-1)/64]&(1<<((depth-1)%64)) != 0 {
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
			goto key
		case '}':
			i++
			depth--
			members.Close()
			goto next
		}
		return charError(data, i, "after object key:value pair")
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
	return charError(data, i, "after array element")
key:
	if i >= len(data) || data[i] != '"' {
		return charError(data, i, "looking for beginning of object key string")
	}
	{
		j, escaped := checkString(data, i)
		if j < 0 {
			return stringError(data, i)
		}
		if err := members.Add(data, i, j, escaped); err != nil {
			return err
		}
		i = skipSpace(data, j)
	}
	if i >= len(data) || data[i] != ':' {
		return charError(data, i, "after object key")
	}
	i = skipSpace(data, i+1)
	goto value
}

// plain marks the bytes a string holds as they are with no further check:
// printable ASCII other than the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// checkString returns the index after the string starting at b[i] (a quote)
// and whether it has escapes, or -1 when it is malformed or not UTF-8.
func checkString(b []byte, i int) (int, bool) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	escaped := false
	i++
	for {
		// Eight bytes at a time while none of them is a control
		// character, a quote, a backslash or not ASCII: the high bit of
		// a byte of the mask is set for such a byte (and maybe for the
		// bytes above it), and for no byte below the first such one.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			if ((w-lo*0x20)|((w^(lo*'"'))-lo)|((w^(lo*'\\'))-lo)|w)&hi != 0 {
				break
			}
			i += 8
		}
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			if i+1 >= len(b) {
				return -1, false
			}
			escaped = true
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !hex[b[i+2]] || !hex[b[i+3]] || !hex[b[i+4]] || !hex[b[i+5]] {
					return -1, false
				}
				i += 6
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		case c < 0xe0:
			// Two bytes: a lead byte C2..DF and one continuation byte.
			if c < 0xc2 || i+1 >= len(b) || b[i+1]&0xc0 != 0x80 {
				return -1, false
			}
			i += 2
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return -1, false
			}
			i += n
		}
	}
}

// hex4 decodes four hexadecimal digits.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// AppendUnescaped appends the value of the content raw of a JSON string
// that Check accepted (no quotes; valid UTF-8, valid escapes) to dst: the
// escapes decoded, an escaped surrogate that is not part of a pair as
// U+FFFD. Every reader decodes strings with it.
func AppendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = utf16.DecodeRune(r, hex4(raw[i+2:]))
				}
				if r2 != utf8.RuneError {
					i += 6
				}
				r = r2
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}
