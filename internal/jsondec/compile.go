package jsondec

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unsafe"
)

// Compile returns a decoder for values of type T, built once (call it at
// registration, not per request). The decoder is safe for concurrent use.
// For a type this package does not handle (see the package documentation)
// it returns a function that calls encoding/json.Unmarshal.
func Compile[T any]() func(data []byte, v *T) error {
	t := reflect.TypeFor[T]()
	d := compile(t)
	if d == nil {
		return func(data []byte, v *T) error { return json.Unmarshal(data, v) }
	}
	top := reflect.PointerTo(t)
	return func(data []byte, v *T) error {
		if v == nil {
			return &json.InvalidUnmarshalError{Type: reflect.TypeFor[*T]()}
		}
		return decode(d, top, data, unsafe.Pointer(v))
	}
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
	// kindFallback is decoded by encoding/json. It is only built for a
	// pointer found at run time in an interface (see heldPointer).
	kindFallback
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
	offset uintptr
	dec    *decoder
}

// Structs with more fields than this look members up in a map.
const linearFields = 8

// lookup returns the field named key exactly, or nil.
func (d *decoder) lookup(key []byte) *field {
	if d.byName != nil {
		if i, ok := d.byName[string(key)]; ok {
			return &d.fields[i]
		}
		return nil
	}
	for i := range d.fields {
		if d.fields[i].name == string(key) {
			return &d.fields[i]
		}
	}
	return nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
	float64Type         = reflect.TypeFor[float64]()
	stringType          = reflect.TypeFor[string]()
	anyType             = reflect.TypeFor[any]()
)

// compile returns the decoder for t, or nil when t (or a type inside it)
// is left to encoding/json.
func compile(t reflect.Type) *decoder {
	c := compiler{seen: map[reflect.Type]*decoder{}, ok: true}
	d := c.compile(t)
	if !c.ok {
		return nil
	}
	return d
}

type compiler struct {
	seen map[reflect.Type]*decoder
	ok   bool
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
		if t.Name() != "" {
			// encoding/json does not look for methods below a named
			// pointer type; leave that to it.
			c.ok = false
			return d
		}
		d.kind = kindPointer
		d.elem = c.compile(t.Elem())
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
	default: // complex, chan, func, unsafe.Pointer
		c.ok = false
	}
	return d
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
// encoding/json for a struct without embedded fields.
func (c *compiler) compileStruct(d *decoder) {
	t := d.typ
	d.kind = kindStruct
	type candidate struct {
		field
		tagged bool
	}
	var cands []candidate
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if sf.Anonymous {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if tag == "-" || (!sf.IsExported() && ft.Kind() != reflect.Struct) {
				continue // ignored by encoding/json too
			}
			c.ok = false // field promotion
			return
		}
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validName(name) {
			name = ""
		}
		if hasOption(opts, "string") && quotable(sf.Type) {
			c.ok = false
			return
		}
		cand := candidate{field: field{name: name, offset: sf.Offset}, tagged: name != ""}
		if !cand.tagged {
			cand.name = sf.Name
		}
		cand.dec = c.compile(sf.Type)
		cands = append(cands, cand)
	}
	// Of fields sharing a name, a single tagged one wins; otherwise none
	// of them is decoded.
	for i, a := range cands {
		keep := true
		for j, b := range cands {
			if i != j && a.name == b.name && (!a.tagged || b.tagged) {
				keep = false
				break
			}
		}
		if keep {
			d.fields = append(d.fields, a.field)
		}
	}
	if len(d.fields) > linearFields {
		d.byName = make(map[string]int32, len(d.fields))
		for i, f := range d.fields {
			d.byName[f.name] = int32(i)
		}
	}
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

// decoderFor returns a decoder for t, falling back to encoding/json.
func decoderFor(t reflect.Type) *decoder {
	if d, ok := decoders.Load(t); ok {
		return d.(*decoder)
	}
	d := compile(t)
	if d == nil {
		d = &decoder{typ: t, kind: kindFallback}
	}
	actual, _ := decoders.LoadOrStore(t, d)
	return actual.(*decoder)
}
