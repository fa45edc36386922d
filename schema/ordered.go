package schema

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// member is one key/value pair of an ordered JSON object.
type member struct {
	key string
	val any
}

// object is a JSON object that remembers key insertion order, used to emit
// inferred schemas deterministically. Values are *object, []any, string,
// json.Number, bool or nil.
type object struct {
	members []member
}

// set replaces the value for key, or appends it when absent.
func (o *object) set(key string, val any) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members[i].val = val
			return
		}
	}
	o.members = append(o.members, member{key, val})
}

func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

func obj(kv ...any) *object {
	o := &object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

// appendJSON appends the compact JSON encoding of v.
func appendJSON(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		return strconv.AppendBool(buf, x)
	case string:
		return appendString(buf, x)
	case json.Number:
		return append(buf, x...)
	case []any:
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSON(buf, e)
		}
		return append(buf, ']')
	case []string:
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, e)
		}
		return append(buf, ']')
	case *object:
		buf = append(buf, '{')
		for i, m := range x.members {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(appendString(buf, m.key), ':')
			buf = appendJSON(buf, m.val)
		}
		return append(buf, '}')
	}
	panic("schema: internal error: unexpected value in ordered JSON")
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string literal, replacing invalid UTF-8.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// parseOrdered decodes one JSON value, preserving object key order, as
// parseValue reads it (a repeated member name is refused).
func parseOrdered(data []byte) (any, error) {
	var v orderedValue
	if err := unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v.value, nil
}

// orderedValue is a JSON value whose objects are *object.
type orderedValue struct{ value any }

// UnmarshalJSONFrom reads the next value of d, which Unmarshal checks as
// it is read.
func (o *orderedValue) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	switch d.PeekKind() {
	case '{':
		if _, err := d.ReadToken(); err != nil {
			return err
		}
		obj := &object{}
		for d.PeekKind() != '}' {
			name, err := d.ReadToken()
			if err != nil {
				return err
			}
			k := name.String() // before the token is voided
			var v orderedValue
			if err := v.UnmarshalJSONFrom(d); err != nil {
				return err
			}
			obj.members = append(obj.members, member{k, v.value})
		}
		o.value = obj
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return err
		}
		arr := []any{}
		for d.PeekKind() != ']' {
			var v orderedValue
			if err := v.UnmarshalJSONFrom(d); err != nil {
				return err
			}
			arr = append(arr, v.value)
		}
		o.value = arr
	default:
		var v jsonrpc.Any
		if err := jsonv2.UnmarshalDecode(d, &v); err != nil {
			return err
		}
		o.value = v.Value
		return nil
	}
	_, err := d.ReadToken()
	return err
}
