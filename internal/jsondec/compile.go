package jsondec

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unsafe"

	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

// Compile returns a decoder for values of type T, built once (call it at
// registration, not per request). The decoder is safe for concurrent use.
func Compile[T any]() func(data []byte, v *T) error {
	t := reflect.TypeFor[T]()
	d := compile(t)
	top := reflect.PointerTo(t)
	return func(data []byte, v *T) error {
		if v == nil {
			return &json.InvalidUnmarshalError{Type: reflect.TypeFor[*T]()}
		}
		return decode(d, top, data, unsafe.Pointer(v))
	}
}

// A Decoder decodes JSON into values of one type, like the function
// Compile returns, for callers that hold the type as a reflect.Type.
type Decoder struct {
	d   *decoder
	ptr reflect.Type // pointer to the type
}

// ForType returns a decoder for values of type t, built once (call it per
// type, not per value). The decoder is safe for concurrent use.
func ForType(t reflect.Type) *Decoder {
	return &Decoder{d: compile(t), ptr: reflect.PointerTo(t)}
}

// Decode decodes data into the value v points to. v must be a pointer to
// the decoder's type; a nil one is an
// *encoding/json.InvalidUnmarshalError.
func (dec *Decoder) Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Type() != dec.ptr {
		return fmt.Errorf("jsondec: decoder for %v given %T", dec.ptr, v)
	}
	if rv.IsNil() {
		return &json.InvalidUnmarshalError{Type: dec.ptr}
	}
	return decode(dec.d, dec.ptr, data, rv.UnsafePointer())
}

// check refuses what jsonvalid.Check refuses (malformed JSON, invalid
// UTF-8, a repeated member name) with a *SyntaxError, as the decoder does
// while it decodes.
func check(data []byte) error {
	if err := jsonvalid.Check(data); err != nil {
		return wrapError(err.(*jsonvalid.Error))
	}
	return nil
}

type kind uint8

const (
	kindBool kind = iota + 1
	kindInt
	kindUint
	kindFloat
	kindString
	kindNumber // json.Number
	kindBytes  // a slice of a uint8 kind: base64 from a string
	kindSlice
	kindArray
	kindMap
	kindStruct
	kindPointer
	kindAny   // an interface without methods
	kindIface // an interface with methods
)

// Methods a type's pointer implements that take over its decoding; such
// decoders have no kind.
const (
	methodNone = iota
	methodJSON // json.Unmarshaler
	methodText // encoding.TextUnmarshaler
)

// Map key conversions.
const (
	keyString = iota + 1
	keyInt
	keyUint
	keyText // TextUnmarshaler, given the key's text
	keyJSON // TextUnmarshaler that is also an Unmarshaler, given the quoted key
	keyBad  // not a valid map key for JSON: objects are type errors
)

// Map kinds handled without reflect.
const (
	mapReflect = iota
	mapStringAny
	mapStringString
)

// decoder describes how to decode into one Go type. Decoders are built by
// compile and never change afterwards.
type decoder struct {
	typ    reflect.Type
	kind   kind
	method uint8
	bits   uint8 // integer and float sizes

	elem     *decoder // pointer, slice, array and map elements
	elemSize uintptr  // slices and arrays
	length   int      // arrays

	key     uint8 // maps
	mapKind uint8

	fields []field          // structs
	byName map[string]int32 // structs with many fields: index into fields
}

type field struct {
	name   string
	path   string // for type errors: name, after the embedded fields it is promoted from
	offset uintptr
	dec    *decoder
	quoted bool // the `,string` option: the value is in a JSON string
	// hops are the embedded pointers to go through first, outermost
	// first; offset is then from the last one's target.
	hops []hop
}

// hop is an embedded struct pointer on the way to a promoted field.
type hop struct {
	offset   uintptr      // of the pointer, from the struct or the previous hop's target
	elem     reflect.Type // allocated when the pointer is nil
	settable bool         // false for an unexported embedded field: nil stays nil
}

// Structs with more fields than this look members up in a map.
const linearFields = 8

// lookup returns the index in d.fields of the field named key exactly,
// or -1.
func (d *decoder) lookup(key []byte) int {
	if d.byName != nil {
		if i, ok := d.byName[string(key)]; ok {
			return int(i)
		}
		return -1
	}
	for i := range d.fields {
		if d.fields[i].name == string(key) {
			return i
		}
	}
	return -1
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
	float64Type         = reflect.TypeFor[float64]()
	stringType          = reflect.TypeFor[string]()
	anyType             = reflect.TypeFor[any]()
)

// compile returns the decoder for t.
func compile(t reflect.Type) *decoder {
	c := compiler{seen: map[reflect.Type]*decoder{}}
	return c.compile(t)
}

type compiler struct {
	seen      map[reflect.Type]*decoder
	seenPlain map[reflect.Type]*decoder // see compilePlain
}

func (c *compiler) compile(t reflect.Type) *decoder {
	if d := c.seen[t]; d != nil {
		return d // also ends recursive types: d is filled in below
	}
	d := &decoder{typ: t}
	c.seen[t] = d
	pt := reflect.PointerTo(t)
	switch {
	case pt.Implements(unmarshalerType):
		d.method = methodJSON
		return d
	case pt.Implements(textUnmarshalerType):
		d.method = methodText
		return d
	}
	c.compileKind(d)
	return d
}

// compilePlain returns a decoder for t that decodes by t's kind even when
// t's pointer has UnmarshalJSON or UnmarshalText: encoding/json does not
// look for those methods on the value a named pointer type points to.
func (c *compiler) compilePlain(t reflect.Type) *decoder {
	pt := reflect.PointerTo(t)
	if !pt.Implements(unmarshalerType) && !pt.Implements(textUnmarshalerType) {
		return c.compile(t)
	}
	if d := c.seenPlain[t]; d != nil {
		return d
	}
	if c.seenPlain == nil {
		c.seenPlain = map[reflect.Type]*decoder{}
	}
	d := &decoder{typ: t}
	c.seenPlain[t] = d
	c.compileKind(d)
	return d
}

// compileKind fills in d by its type's kind.
func (c *compiler) compileKind(d *decoder) {
	t := d.typ
	switch t.Kind() {
	case reflect.Bool:
		d.kind = kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.kind, d.bits = kindInt, uint8(t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.kind, d.bits = kindUint, uint8(t.Bits())
	case reflect.Float32, reflect.Float64:
		d.kind, d.bits = kindFloat, uint8(t.Bits())
	case reflect.String:
		d.kind = kindString
		if t == numberType {
			d.kind = kindNumber
		}
	case reflect.Interface:
		d.kind = kindIface
		if t.NumMethod() == 0 {
			d.kind = kindAny
		}
	case reflect.Pointer:
		d.kind = kindPointer
		if t.Name() != "" {
			d.elem = c.compilePlain(t.Elem())
		} else {
			d.elem = c.compile(t.Elem())
		}
	case reflect.Slice:
		d.kind = kindSlice
		if t.Elem().Kind() == reflect.Uint8 {
			d.kind = kindBytes
		}
		d.elem, d.elemSize = c.compile(t.Elem()), t.Elem().Size()
	case reflect.Array:
		d.kind, d.length = kindArray, t.Len()
		d.elem, d.elemSize = c.compile(t.Elem()), t.Elem().Size()
	case reflect.Map:
		c.compileMap(d)
	case reflect.Struct:
		c.compileStruct(d)
	default:
		// Complex, channel, function and unsafe.Pointer values: no kind,
		// so that every JSON value but null is a type error, as in
		// encoding/json.
	}
}

func (c *compiler) compileMap(d *decoder) {
	t := d.typ
	d.kind = kindMap
	d.elem = c.compile(t.Elem())
	kt := t.Key()
	pkt := reflect.PointerTo(kt)
	switch {
	case pkt.Implements(textUnmarshalerType):
		d.key = keyText
		if pkt.Implements(unmarshalerType) {
			d.key = keyJSON
		}
	case kt.Kind() == reflect.String:
		d.key = keyString
		if kt == stringType {
			switch t.Elem() {
			case anyType:
				d.mapKind = mapStringAny
			case stringType:
				d.mapKind = mapStringString
			}
		}
	case kt.Kind() >= reflect.Int && kt.Kind() <= reflect.Int64:
		d.key = keyInt
	case kt.Kind() >= reflect.Uint && kt.Kind() <= reflect.Uintptr:
		d.key = keyUint
	default:
		d.key = keyBad
	}
}

// compileStruct lists the fields JSON members can fill, by the rules of
// encoding/json (see structFields).
func (c *compiler) compileStruct(d *decoder) {
	d.kind = kindStruct
	for _, sf := range structFields(d.typ) {
		f := field{name: sf.name, path: sf.name, quoted: sf.quoted}
		// Follow the index through embedded structs, by value (adding
		// offsets) or by pointer (a hop); the Go names of the embedded
		// fields start the path that type errors name.
		t := d.typ
		var embedded []string
		for k, i := range sf.index {
			ft := t.Field(i)
			last := k == len(sf.index)-1
			if !last {
				embedded = append(embedded, ft.Name)
			}
			if ft.Type.Kind() == reflect.Pointer && (!last || ft.Anonymous && !ft.IsExported()) {
				// An embedded pointer. One whose field is unexported can
				// be followed but not set: its promoted fields, or its
				// value when it is named by a tag, are only reachable
				// while it is not nil.
				f.hops = append(f.hops, hop{offset: f.offset + ft.Offset, elem: ft.Type.Elem(), settable: ft.IsExported()})
				f.offset, t = 0, ft.Type.Elem()
				if last {
					f.dec = c.compile(t)
				}
				continue
			}
			f.offset += ft.Offset
			t = ft.Type
			if last {
				f.dec = c.compile(t)
			}
		}
		if len(embedded) > 0 {
			f.path = strings.Join(embedded, ".") + "." + f.name
		}
		d.fields = append(d.fields, f)
	}
	if len(d.fields) > linearFields {
		d.byName = make(map[string]int32, len(d.fields))
		for i, f := range d.fields {
			d.byName[f.name] = int32(i)
		}
	}
}

// structField is a field of a struct type that JSON members fill, found
// directly in the struct or promoted from an embedded one.
type structField struct {
	name   string
	tagged bool  // named by its tag
	index  []int // field indexes from the struct down to the field
	quoted bool  // the `,string` option applies
}

// structFields returns the fields of struct type t that JSON members
// fill, by encoding/json's rules. Exported fields (and the exported
// fields of embedded structs, exported or not, by value or by pointer)
// are named by their tag or their Go name; an embedded struct named by
// its tag is a field like any other. Of the fields of one name, the least
// nested wins; of several at that depth, a single tagged one; otherwise
// none. A struct type is looked into at the shallowest depth it is
// embedded at only, and its fields cancel out when it is embedded more
// than once at that depth.
func structFields(t reflect.Type) []structField {
	type embedding struct {
		typ   reflect.Type
		index []int
	}
	var found []structField
	next := []embedding{{typ: t}}
	var count map[reflect.Type]int // how often each type of this depth is embedded
	nextCount := map[reflect.Type]int{}
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validName(name) {
					name = ""
				}
				index := append(append([]int(nil), e.index...), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					// Promoted fields: one depth down.
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, embedding{typ: ft, index: index})
					}
					continue
				}
				f := structField{name: name, tagged: name != "", index: index, quoted: hasOption(opts, "string") && quotable(sf.Type)}
				if !f.tagged {
					f.name = sf.Name
				}
				found = append(found, f)
				if count[e.typ] > 1 {
					// A copy, to cancel out with.
					found = append(found, f)
				}
			}
		}
	}
	slices.SortStableFunc(found, func(a, b structField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := len(a.index) - len(b.index); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var fields []structField
	for i := 0; i < len(found); {
		j := i + 1
		for j < len(found) && found[j].name == found[i].name {
			j++
		}
		if g := found[i:j]; len(g) == 1 || len(g[0].index) < len(g[1].index) || g[0].tagged != g[1].tagged {
			fields = append(fields, g[0])
		}
		i = j
	}
	// In the order of the struct, so that the first fields get the bits
	// for repeated members.
	slices.SortFunc(fields, func(a, b structField) int { return slices.Compare(a.index, b.index) })
	return fields
}

// validName reports whether a tag name is used as the member name, as
// encoding/json decides it.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// quotable reports whether the `,string` option applies to a field of
// type t.
func quotable(t reflect.Type) bool {
	if t.Name() == "" && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// decoders caches decoders for types met at run time (see heldPointer).
var decoders sync.Map // reflect.Type -> *decoder

// decoderFor returns a decoder for t.
func decoderFor(t reflect.Type) *decoder {
	if d, ok := decoders.Load(t); ok {
		return d.(*decoder)
	}
	actual, _ := decoders.LoadOrStore(t, compile(t))
	return actual.(*decoder)
}
