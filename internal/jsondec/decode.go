package jsondec

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

// decode decodes data into the value of d's type at ptr; top is the
// pointer type of that value, which some errors name.
func decode(d *decoder, top reflect.Type, data []byte, ptr unsafe.Pointer) error {
	p := parser{data: data, outer: top}
	err := p.value(d, ptr)
	if err == nil {
		err = p.end()
	}
	p.release()
	if err != nil {
		if _, ok := err.(*SyntaxError); !ok {
			// A method failed; as in encoding/json, refused input is
			// reported first.
			if serr := check(data); serr != nil {
				return serr
			}
		}
		return err
	}
	return p.err
}

// sliceHeader is the memory layout of every slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// value decodes the JSON value at p.pos into the value of d's type at ptr.
// It returns syntax errors and errors from methods, which end decoding;
// values that do not fit their type are recorded with p.typeError.
func (p *parser) value(d *decoder, ptr unsafe.Pointer) error {
	c, err := p.peek()
	if err != nil {
		return err
	}
	// encoding/json names the type of the value it was given, before
	// pointers, when a TextUnmarshaler receives a value other than a
	// string; at the top that is the pointer to the value.
	outer := d.typ
	if p.outer != nil {
		outer, p.outer = p.outer, nil
	}
	// Go down pointers (allocating them) and through interfaces holding
	// pointers, to the value the JSON value is for.
	for {
		switch d.method {
		case methodJSON:
			return p.callJSON(d, ptr)
		case methodText:
			return p.callText(d, ptr, c, outer)
		}
		switch d.kind {
		case kindPointer:
			if c == 'n' {
				if err := p.literal("null"); err != nil {
					return err
				}
				*(*unsafe.Pointer)(ptr) = nil
				return nil
			}
			q := *(*unsafe.Pointer)(ptr)
			if q == nil {
				q = reflect.New(d.elem.typ).UnsafePointer()
				*(*unsafe.Pointer)(ptr) = q
			}
			d, ptr = d.elem, q
			continue
		case kindAny, kindIface:
			if hd, hp := heldPointer(d, ptr, c == 'n'); hd != nil {
				d, ptr = hd, hp
				continue
			}
		}
		break
	}
	switch c {
	case '"':
		return p.stringInto(d, ptr)
	case '{':
		return p.object(d, ptr)
	case '[':
		return p.array(d, ptr)
	case 't', 'f':
		return p.boolInto(d, ptr, c)
	case 'n':
		return p.nullInto(d, ptr)
	}
	return p.numberInto(d, ptr, c)
}

// heldPointer returns, for an interface at ptr holding a non-nil pointer,
// the decoder and address of the pointed-to value, which encoding/json
// decodes into rather than replacing the interface's value (for null only
// when that value is itself a pointer, which becomes nil).
func heldPointer(d *decoder, ptr unsafe.Pointer, null bool) (*decoder, unsafe.Pointer) {
	var v reflect.Value
	if d.kind == kindAny {
		e := *(*any)(ptr)
		if e == nil {
			return nil, nil
		}
		v = reflect.ValueOf(e)
	} else {
		iv := reflect.NewAt(d.typ, ptr).Elem()
		if iv.IsNil() {
			return nil, nil
		}
		v = iv.Elem()
	}
	if v.Kind() != reflect.Pointer || v.IsNil() || (null && v.Elem().Kind() != reflect.Pointer) {
		return nil, nil
	}
	q := v.UnsafePointer()
	if q == ptr {
		return nil, nil // an interface holding its own address
	}
	return decoderFor(v.Type().Elem()), q
}

// callJSON passes the raw value at p.pos to the type's UnmarshalJSON.
func (p *parser) callJSON(d *decoder, ptr unsafe.Pointer) error {
	start := p.pos
	if err := p.skip(); err != nil {
		return err
	}
	u := reflect.NewAt(d.typ, ptr).Interface().(json.Unmarshaler)
	if err := u.UnmarshalJSON(p.data[start:p.pos:p.pos]); err != nil {
		return p.methodError(err)
	}
	return nil
}

// callText passes a string's value to the type's UnmarshalText; null acts
// by the type's kind and other values are type errors.
func (p *parser) callText(d *decoder, ptr unsafe.Pointer, c byte, outer reflect.Type) error {
	var what string
	switch c {
	case '"':
		b, err := p.text()
		if err != nil {
			return err
		}
		u := reflect.NewAt(d.typ, ptr).Interface().(encoding.TextUnmarshaler)
		if err := u.UnmarshalText(b); err != nil {
			return p.methodError(err)
		}
		return nil
	case 'n':
		if err := p.literal("null"); err != nil {
			return err
		}
		switch d.typ.Kind() {
		case reflect.Map:
			*(*unsafe.Pointer)(ptr) = nil
		case reflect.Slice:
			*(*[]byte)(ptr) = nil
		}
		return nil
	case '{', '[':
		what = "object"
		if c == '[' {
			what = "array"
		}
		p.typeError(&json.UnmarshalTypeError{Value: what, Type: outer, Offset: int64(p.pos + 1)})
		return p.skip()
	case 't', 'f':
		what = "bool"
	default:
		what = "number"
	}
	if err := p.skip(); err != nil {
		return err
	}
	p.typeError(&json.UnmarshalTypeError{Value: what, Type: outer, Offset: int64(p.pos)})
	return nil
}

func (p *parser) stringInto(d *decoder, ptr unsafe.Pointer) error {
	switch d.kind {
	case kindString:
		s, err := p.stringValue()
		if err != nil {
			return err
		}
		*(*string)(ptr) = s
	case kindAny:
		s, err := p.stringValue()
		if err != nil {
			return err
		}
		*(*any)(ptr) = s
	case kindNumber:
		start := p.pos
		b, err := p.text()
		if err != nil {
			return err
		}
		if !validNumber(b) {
			return fmt.Errorf("json: invalid number literal, trying to unmarshal %q into Number", p.data[start:p.pos])
		}
		*(*string)(ptr) = string(b)
	case kindBytes:
		b, err := p.text()
		if err != nil {
			return err
		}
		dst := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
		n, err := base64.StdEncoding.Decode(dst, b)
		if err != nil {
			if p.err == nil {
				p.err = err
			}
			return nil
		}
		*(*[]byte)(ptr) = dst[:n]
	default:
		if _, _, err := p.str(); err != nil {
			return err
		}
		p.typeError(&json.UnmarshalTypeError{Value: "string", Type: d.typ, Offset: int64(p.pos)})
	}
	return nil
}

func (p *parser) boolInto(d *decoder, ptr unsafe.Pointer, c byte) error {
	word := "true"
	if c == 'f' {
		word = "false"
	}
	if err := p.literal(word); err != nil {
		return err
	}
	switch d.kind {
	case kindBool:
		*(*bool)(ptr) = c == 't'
	case kindAny:
		*(*any)(ptr) = c == 't'
	default:
		p.typeError(&json.UnmarshalTypeError{Value: "bool", Type: d.typ, Offset: int64(p.pos)})
	}
	return nil
}

func (p *parser) nullInto(d *decoder, ptr unsafe.Pointer) error {
	if err := p.literal("null"); err != nil {
		return err
	}
	switch d.kind {
	case kindAny:
		*(*any)(ptr) = nil
	case kindIface:
		reflect.NewAt(d.typ, ptr).Elem().SetZero()
	case kindMap:
		*(*unsafe.Pointer)(ptr) = nil
	case kindSlice, kindBytes:
		*(*[]byte)(ptr) = nil
	}
	return nil
}

func (p *parser) numberInto(d *decoder, ptr unsafe.Pointer, c byte) error {
	if c != '-' && !isDigit(c) {
		return p.invalid("looking for beginning of value")
	}
	item, err := p.number()
	if err != nil {
		return err
	}
	s := bytesString(item)
	if storeNumber(d, ptr, s) {
		return nil
	}
	switch d.kind {
	case kindInt, kindUint, kindFloat:
		// out of range: the type error below
	case kindNumber:
		*(*string)(ptr) = string(item)
		return nil
	case kindAny, kindIface:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			p.typeError(&json.UnmarshalTypeError{Value: "number " + s, Type: float64Type, Offset: int64(p.pos)})
			return nil
		}
		if d.kind == kindAny {
			*(*any)(ptr) = f
			return nil
		}
		fallthrough
	default:
		p.typeError(&json.UnmarshalTypeError{Value: "number", Type: d.typ, Offset: int64(p.pos)})
		return nil
	}
	p.typeError(&json.UnmarshalTypeError{Value: "number " + s, Type: d.typ, Offset: int64(p.pos)})
	return nil
}

// storeNumber stores the number s into an integer or floating-point value
// of d's kind; false when d is of another kind or s does not fit it.
func storeNumber(d *decoder, ptr unsafe.Pointer, s string) bool {
	switch d.kind {
	case kindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || d.bits < 64 && (n < -1<<(d.bits-1) || n >= 1<<(d.bits-1)) {
			return false
		}
		switch d.bits {
		case 8:
			*(*int8)(ptr) = int8(n)
		case 16:
			*(*int16)(ptr) = int16(n)
		case 32:
			*(*int32)(ptr) = int32(n)
		default:
			*(*int64)(ptr) = n
		}
		return true
	case kindUint:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || d.bits < 64 && n >= 1<<d.bits {
			return false
		}
		switch d.bits {
		case 8:
			*(*uint8)(ptr) = uint8(n)
		case 16:
			*(*uint16)(ptr) = uint16(n)
		case 32:
			*(*uint32)(ptr) = uint32(n)
		default:
			*(*uint64)(ptr) = n
		}
		return true
	case kindFloat:
		f, err := strconv.ParseFloat(s, int(d.bits))
		if err != nil {
			return false
		}
		if d.bits == 32 {
			*(*float32)(ptr) = float32(f)
		} else {
			*(*float64)(ptr) = f
		}
		return true
	}
	return false
}

func (p *parser) object(d *decoder, ptr unsafe.Pointer) error {
	switch d.kind {
	case kindStruct:
		return p.structObject(d, ptr)
	case kindMap:
		if d.key != keyBad {
			return p.mapObject(d, ptr)
		}
	case kindAny:
		v, err := p.anyObject()
		if err != nil {
			return err
		}
		*(*any)(ptr) = v
		return nil
	}
	p.typeError(&json.UnmarshalTypeError{Value: "object", Type: d.typ, Offset: int64(p.pos + 1)})
	return p.skip()
}

func (p *parser) structObject(d *decoder, ptr unsafe.Pointer) error {
	if err := p.open(); err != nil {
		return err
	}
	c, err := p.peek()
	if err != nil {
		return err
	}
	if c == '}' {
		p.pos++
		p.depth--
		return nil
	}
	// A repeated member is refused: seen has a bit for each of the first
	// 64 fields met, and other names go to p.names, opened for this
	// object at the first of them.
	var seen uint64
	named := false
	for {
		if c != '"' {
			return p.invalid("looking for beginning of object key string")
		}
		start := p.pos
		key, escaped, err := p.key()
		if err != nil {
			return err
		}
		k := d.lookup(key)
		if k >= 0 && k < 64 {
			if seen&(1<<k) != 0 {
				return wrapError(jsonvalid.DuplicateError(start, key))
			}
			seen |= 1 << k
		} else {
			if !named {
				p.openNames()
				named = true
			}
			if err := p.addName(start, escaped); err != nil {
				return err
			}
		}
		if err := p.colon(); err != nil {
			return err
		}
		if k >= 0 {
			f := &d.fields[k]
			var target unsafe.Pointer
			if f.hops != nil {
				// Promoted through an embedded pointer: f.offset is
				// within the struct that pointer reaches.
				target = p.follow(ptr, f)
			} else {
				target = unsafe.Add(ptr, f.offset)
			}
			p.level++
			switch {
			case target == nil:
				err = p.skip()
			case f.quoted:
				err = p.quotedValue(f.dec, target)
			default:
				err = p.value(f.dec, target)
			}
			if p.ctxLevel == p.level && p.ctxErr != nil {
				p.addContext(d, f.path)
			}
			p.level--
		} else {
			err = p.skip()
		}
		if err != nil {
			return err
		}
		end, err := p.next(true)
		if err != nil {
			return err
		}
		if end {
			if named {
				p.names.Close()
			}
			return nil
		}
		if c, err = p.peek(); err != nil {
			return err
		}
	}
}

// follow returns the address of field f, promoted through embedded
// pointers, of the struct at ptr, allocating the pointers that are nil. It
// returns nil, after recording an error as encoding/json does, when one of
// them is nil and cannot be set.
func (p *parser) follow(ptr unsafe.Pointer, f *field) unsafe.Pointer {
	for _, h := range f.hops {
		q := (*unsafe.Pointer)(unsafe.Add(ptr, h.offset))
		if *q == nil {
			if !h.settable {
				p.saveError(fmt.Errorf("json: cannot set embedded pointer to unexported struct: %v", h.elem))
				return nil
			}
			*q = reflect.New(h.elem).UnsafePointer()
		}
		ptr = *q
	}
	return unsafe.Add(ptr, f.offset)
}

// addContext prepends a struct member's name to the field path of the
// type error being built, whose innermost struct names Struct.
func (p *parser) addContext(d *decoder, name string) {
	e := p.ctxErr
	if !p.ctxStarted {
		e.Struct = d.typ.Name()
		p.ctxStarted = true
	}
	if e.Field == "" {
		e.Field = name
	} else {
		e.Field = name + "." + e.Field
	}
	p.ctxLevel--
}

func (p *parser) mapObject(d *decoder, ptr unsafe.Pointer) error {
	if err := p.open(); err != nil {
		return err
	}
	mv := reflect.NewAt(d.typ, ptr).Elem()
	if mv.IsNil() {
		mv.Set(reflect.MakeMap(d.typ))
	}
	c, err := p.peek()
	if err != nil {
		return err
	}
	if c == '}' {
		p.pos++
		p.depth--
		return nil
	}
	var elem, kv reflect.Value // reused for each member
	var elemPtr unsafe.Pointer
	if d.mapKind != mapStringAny {
		elem = reflect.New(d.elem.typ).Elem()
		elemPtr = elem.Addr().UnsafePointer()
	}
	p.openNames()
	for {
		if c != '"' {
			return p.invalid("looking for beginning of object key string")
		}
		start := p.pos
		key, escaped, err := p.key()
		if err != nil {
			return err
		}
		if err := p.addName(start, escaped); err != nil {
			return err
		}
		rawKey := p.data[start:p.pos:p.pos]
		if err := p.colon(); err != nil {
			return err
		}
		switch d.mapKind {
		case mapStringAny:
			v, err := p.anyValue()
			if err != nil {
				return err
			}
			(*(*map[string]any)(ptr))[string(key)] = v
		case mapStringString:
			*(*string)(elemPtr) = ""
			if err := p.value(d.elem, elemPtr); err != nil {
				return err
			}
			(*(*map[string]string)(ptr))[string(key)] = *(*string)(elemPtr)
		default:
			elem.SetZero()
			if err := p.value(d.elem, elemPtr); err != nil {
				return err
			}
			k, err := p.mapKey(d, &kv, key, rawKey, start)
			if err != nil {
				return err
			}
			if k.IsValid() {
				mv.SetMapIndex(k, elem)
			}
		}
		end, err := p.next(true)
		if err != nil {
			return err
		}
		if end {
			p.names.Close()
			return nil
		}
		if c, err = p.peek(); err != nil {
			return err
		}
	}
}

// mapKey converts an object key to the map's key type; an invalid value
// means the member is dropped (a type error has been recorded). kv holds
// a reusable key value.
func (p *parser) mapKey(d *decoder, kv *reflect.Value, key, rawKey []byte, start int) (reflect.Value, error) {
	kt := d.typ.Key()
	switch d.key {
	case keyText, keyJSON:
		k := reflect.New(kt)
		var err error
		if d.key == keyJSON {
			err = k.Interface().(json.Unmarshaler).UnmarshalJSON(rawKey)
		} else {
			err = k.Interface().(encoding.TextUnmarshaler).UnmarshalText(key[:len(key):len(key)])
		}
		if err != nil {
			return reflect.Value{}, p.methodError(err)
		}
		return k.Elem(), nil
	}
	if !kv.IsValid() {
		*kv = reflect.New(kt).Elem()
	}
	switch d.key {
	case keyString:
		kv.SetString(string(key))
		return *kv, nil
	case keyInt:
		n, err := strconv.ParseInt(bytesString(key), 10, 64)
		if err == nil && !kv.OverflowInt(n) {
			kv.SetInt(n)
			return *kv, nil
		}
	default: // keyUint
		n, err := strconv.ParseUint(bytesString(key), 10, 64)
		if err == nil && !kv.OverflowUint(n) {
			kv.SetUint(n)
			return *kv, nil
		}
	}
	p.typeError(&json.UnmarshalTypeError{Value: "number " + string(key), Type: kt, Offset: int64(start + 1)})
	return reflect.Value{}, nil
}

func (p *parser) array(d *decoder, ptr unsafe.Pointer) error {
	switch d.kind {
	case kindSlice, kindBytes:
		return p.sliceArray(d, ptr)
	case kindArray:
		return p.fixedArray(d, ptr)
	case kindAny:
		v, err := p.anyArray()
		if err != nil {
			return err
		}
		*(*any)(ptr) = v
		return nil
	}
	p.typeError(&json.UnmarshalTypeError{Value: "array", Type: d.typ, Offset: int64(p.pos + 1)})
	return p.skip()
}

// sliceArray decodes an array into a slice. As in encoding/json, it
// decodes into the slice's elements in place, growing it when needed,
// and an empty array makes an empty non-nil slice.
func (p *parser) sliceArray(d *decoder, ptr unsafe.Pointer) error {
	if err := p.open(); err != nil {
		return err
	}
	h := (*sliceHeader)(ptr)
	c, err := p.peek()
	if err != nil {
		return err
	}
	i := 0
	if c == ']' {
		p.pos++
		p.depth--
	} else {
		for {
			if i >= h.cap {
				reflect.NewAt(d.typ, ptr).Elem().Grow(1)
			}
			if i >= h.len {
				h.len = i + 1
			}
			if err := p.value(d.elem, unsafe.Add(h.data, uintptr(i)*d.elemSize)); err != nil {
				return err
			}
			i++
			end, err := p.next(false)
			if err != nil {
				return err
			}
			if end {
				break
			}
		}
	}
	if i < h.len {
		h.len = i
	}
	if i == 0 {
		*(*[]byte)(ptr) = []byte{}
	}
	return nil
}

// fixedArray decodes an array into a Go array: extra elements are
// dropped, missing ones set to zero.
func (p *parser) fixedArray(d *decoder, ptr unsafe.Pointer) error {
	if err := p.open(); err != nil {
		return err
	}
	c, err := p.peek()
	if err != nil {
		return err
	}
	i := 0
	if c == ']' {
		p.pos++
		p.depth--
	} else {
		for {
			if i < d.length {
				err = p.value(d.elem, unsafe.Add(ptr, uintptr(i)*d.elemSize))
			} else {
				err = p.skip()
			}
			if err != nil {
				return err
			}
			i++
			end, err := p.next(false)
			if err != nil {
				return err
			}
			if end {
				break
			}
		}
	}
	for ; i < d.length; i++ {
		reflect.NewAt(d.elem.typ, unsafe.Add(ptr, uintptr(i)*d.elemSize)).Elem().SetZero()
	}
	return nil
}

// anyValue decodes the value at p.pos as encoding/json does into an empty
// interface.
func (p *parser) anyValue() (any, error) {
	c, err := p.peek()
	if err != nil {
		return nil, err
	}
	switch c {
	case '{':
		return p.anyObject()
	case '[':
		return p.anyArray()
	case '"':
		return p.stringValue()
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	}
	if c != '-' && !isDigit(c) {
		return nil, p.invalid("looking for beginning of value")
	}
	item, err := p.number()
	if err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(bytesString(item), 64)
	if err != nil {
		p.typeError(&json.UnmarshalTypeError{Value: "number " + string(item), Type: float64Type, Offset: int64(p.pos)})
		return nil, nil
	}
	return f, nil
}

func (p *parser) anyObject() (any, error) {
	if err := p.open(); err != nil {
		return nil, err
	}
	m := map[string]any{}
	c, err := p.peek()
	if err != nil {
		return nil, err
	}
	if c == '}' {
		p.pos++
		p.depth--
		return m, nil
	}
	p.openNames()
	for {
		if c != '"' {
			return nil, p.invalid("looking for beginning of object key string")
		}
		start := p.pos
		key, escaped, err := p.key()
		if err != nil {
			return nil, err
		}
		if err := p.addName(start, escaped); err != nil {
			return nil, err
		}
		if err := p.colon(); err != nil {
			return nil, err
		}
		v, err := p.anyValue()
		if err != nil {
			return nil, err
		}
		m[string(key)] = v
		end, err := p.next(true)
		if err != nil {
			return nil, err
		}
		if end {
			p.names.Close()
			return m, nil
		}
		if c, err = p.peek(); err != nil {
			return nil, err
		}
	}
}

func (p *parser) anyArray() (any, error) {
	if err := p.open(); err != nil {
		return nil, err
	}
	a := []any{}
	c, err := p.peek()
	if err != nil {
		return nil, err
	}
	if c == ']' {
		p.pos++
		p.depth--
		return a, nil
	}
	for {
		v, err := p.anyValue()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		end, err := p.next(false)
		if err != nil {
			return nil, err
		}
		if end {
			return a, nil
		}
	}
}
