package jsondec

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"unsafe"
)

// quotedValue decodes the value at p.pos for a field with the `,string`
// option, as encoding/json does: the value is a JSON string holding the
// JSON text of a number, a bool, null or a string, which is decoded into
// the field; plain null is decoded as without the option; any other value
// is skipped with an error.
func (p *parser) quotedValue(d *decoder, ptr unsafe.Pointer) error {
	c, err := p.peek()
	if err != nil {
		return err
	}
	switch c {
	case 'n':
		return p.value(d, ptr)
	case '"':
		s, err := p.text()
		if err != nil {
			return err
		}
		return p.storeQuoted(d, ptr, s)
	}
	start := p.pos
	if err := p.skip(); err != nil {
		return err
	}
	if c == '-' || isDigit(c) {
		// encoding/json reads the number into an interface first; one
		// out of float64's range is an error, and then acts as null.
		if num := p.data[start:p.pos]; !floatFits(num) {
			p.typeError(&json.UnmarshalTypeError{Value: "number " + string(num), Type: float64Type, Offset: int64(p.pos)})
			return p.valueOf([]byte("null"), d, ptr)
		}
	}
	p.saveError(fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal unquoted value into %v", d.typ))
	return nil
}

func floatFits(num []byte) bool {
	_, err := strconv.ParseFloat(bytesString(num), 64)
	return err == nil
}

// valueOf decodes the JSON value text (checked) into the value of d's type
// at ptr as if it were at p.pos.
func (p *parser) valueOf(text []byte, d *decoder, ptr unsafe.Pointer) error {
	data, pos := p.data, p.pos
	p.data, p.pos = text, 0
	err := p.value(d, ptr)
	p.data, p.pos = data, pos
	return err
}

func invalidUse(s []byte, t reflect.Type) error {
	return fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", s, t)
}

// storeQuoted decodes s, the content of the string given for a `,string`
// field, into the value of d's type at ptr: a bool, number or string type,
// or an unnamed pointer to one. Its errors and their order are those of
// encoding/json, which reads s more loosely than JSON (it parses numbers
// with strconv, for example).
func (p *parser) storeQuoted(d *decoder, ptr unsafe.Pointer, s []byte) error {
	if len(s) == 0 {
		p.saveError(invalidUse(s, d.typ))
		return nil
	}
	outer := d.typ
	null := s[0] == 'n'
	if d.kind == kindPointer {
		if null {
			if string(s) != "null" {
				p.saveError(invalidUse(s, d.typ))
				return nil
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
	}
	switch {
	case d.method == methodJSON:
		u := reflect.NewAt(d.typ, ptr).Interface().(json.Unmarshaler)
		if err := u.UnmarshalJSON(append([]byte(nil), s...)); err != nil {
			return p.methodError(err)
		}
		return nil
	case d.method == methodText && !null:
		if s[0] != '"' {
			p.saveError(invalidUse(s, outer))
			return nil
		}
		text, ok := unquoteString(s)
		if !ok {
			return invalidUse(s, outer)
		}
		u := reflect.NewAt(d.typ, ptr).Interface().(encoding.TextUnmarshaler)
		if err := u.UnmarshalText(text); err != nil {
			return p.methodError(err)
		}
		return nil
	}
	t := d.typ
	switch c := s[0]; c {
	case 'n':
		if string(s) != "null" {
			p.saveError(invalidUse(s, t))
		}
		return nil // null leaves a bool, number or string as it is
	case 't', 'f':
		switch {
		case string(s) != "true" && string(s) != "false":
			p.saveError(invalidUse(s, t))
		case d.kind == kindBool:
			*(*bool)(ptr) = c == 't'
		default:
			p.saveError(invalidUse(s, t))
		}
		return nil
	case '"':
		text, ok := unquoteString(s)
		if !ok {
			return invalidUse(s, t)
		}
		switch d.kind {
		case kindString:
			*(*string)(ptr) = string(text)
		case kindNumber:
			if !validNumber(text) {
				return fmt.Errorf("json: invalid number literal, trying to unmarshal %q into Number", s)
			}
			*(*string)(ptr) = string(text)
		default:
			p.typeError(&json.UnmarshalTypeError{Value: "string", Type: t, Offset: int64(p.pos)})
		}
		return nil
	default:
		if c != '-' && !isDigit(c) {
			return invalidUse(s, t)
		}
	}
	str := string(s)
	if storeNumber(d, ptr, str) {
		return nil
	}
	switch d.kind {
	case kindInt, kindUint, kindFloat:
		// out of range: the type error below
	case kindNumber:
		*(*string)(ptr) = str
		return nil
	default: // a bool or string
		return invalidUse(s, t)
	}
	p.typeError(&json.UnmarshalTypeError{Value: "number " + str, Type: t, Offset: int64(p.pos)})
	return nil
}

// unquoteString returns the value of s when s is exactly one JSON string.
func unquoteString(s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' {
		return nil, false
	}
	q := parser{data: s}
	raw, plain, err := q.str()
	if err != nil || q.pos != len(s) {
		return nil, false
	}
	if plain {
		return raw[:len(raw):len(raw)], true
	}
	return unescape(make([]byte, 0, len(raw)), raw), true
}
