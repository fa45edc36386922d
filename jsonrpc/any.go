package jsonrpc

import (
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"
)

// Any holds a JSON value of any kind as encoding/json decodes one into an
// any with UseNumber: map[string]any, []any, string, json.Number, bool or
// nil. Unmarshal into an *Any keeps every number's text exact (where
// Unmarshal into an any makes numbers float64), reading the value once:
//
//	var claims jsonrpc.Any
//	if err := jsonrpc.Unmarshal(payload, &claims); err != nil {
//		return err
//	}
//	m, ok := claims.Value.(map[string]any)
type Any struct {
	Value any
}

// UnmarshalJSONFrom decodes the next value of d into a.Value. It
// implements the UnmarshalerFrom interface of go-json-experiment/json,
// which Unmarshal calls.
func (a *Any) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	v, err := decodeAny(d)
	if err != nil {
		return err
	}
	a.Value = v
	return nil
}

// read decodes data, which must be one JSON value, into a.Value, with a
// pooled decoder: what Unmarshal does, without its reflection.
func (a *Any) read(data []byte) error {
	d := newByteDecoder(data)
	defer d.release()
	v, err := decodeAny(&d.Decoder)
	if err == nil {
		err = d.atEOF()
	}
	if err != nil {
		return syntaxError(err)
	}
	a.Value = v
	return nil
}

// decodeAny reads the next value of d. Nesting is bounded by d (jsontext
// refuses more than 10000 levels).
func decodeAny(d *jsontext.Decoder) (any, error) {
	switch d.PeekKind() {
	case '{':
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
		m := make(map[string]any)
		for d.PeekKind() != '}' {
			name, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			k := name.String()
			v, err := decodeAny(d)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		_, err := d.ReadToken()
		return m, err
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
		a := []any{}
		for d.PeekKind() != ']' {
			v, err := decodeAny(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.ReadToken()
		return a, err
	case '0':
		raw, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		return json.Number(raw), nil
	}
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '"':
		return tok.String(), nil
	case 't', 'f':
		return tok.Bool(), nil
	}
	return nil, nil // null
}
