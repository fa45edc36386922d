package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// A byteDecoder is a jsontext.Decoder reading a byte slice in place: the
// values it returns alias the slice.
type byteDecoder struct {
	buf bytes.Buffer
	jsontext.Decoder
}

var byteDecoders = sync.Pool{New: func() any { return new(byteDecoder) }}

// newByteDecoder returns a pooled decoder reading data; release returns it.
func newByteDecoder(data []byte, opts ...jsontext.Options) *byteDecoder {
	d := byteDecoders.Get().(*byteDecoder)
	d.buf = *bytes.NewBuffer(data)
	d.Reset(&d.buf, opts...)
	return d
}

func (d *byteDecoder) release() {
	d.buf = bytes.Buffer{}
	d.Reset(&d.buf) // drops the data
	byteDecoders.Put(d)
}

// atEOF reports whether nothing but white space follows the value read.
func (d *byteDecoder) atEOF() error {
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			err = &jsontext.SyntacticError{ByteOffset: d.InputOffset(), Err: errors.New("invalid data after top-level value")}
		}
		return err
	}
	return nil
}

// readName reads an object member name, returning it with its escapes
// decoded (into a new slice) when it has any.
func (d *byteDecoder) readName() ([]byte, error) {
	raw, err := d.ReadValue()
	if err != nil {
		return nil, err
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, nil
	}
	return jsontext.AppendUnquote(nil, raw)
}

// readObject reads the object that comes next in buf, which d reads,
// appending its members to ms, and returns its raw text (a slice of buf).
func (d *byteDecoder) readObject(buf []byte, ms []member) (jsontext.Value, []member, error) {
	if _, err := d.ReadToken(); err != nil {
		return nil, ms, err
	}
	start := d.InputOffset() - 1
	for d.PeekKind() != '}' {
		name, err := d.readName()
		if err != nil {
			return nil, ms, err
		}
		value, err := d.ReadValue()
		if err != nil {
			return nil, ms, err
		}
		ms = append(ms, member{name, value})
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, ms, err
	}
	return buf[start:d.InputOffset()], ms, nil
}

// EachMember calls fn with the name and the value of each member of the
// JSON object obj, in order, and returns the first error fn returns. obj
// is read with the policy of Unmarshal: anything but one JSON object, with
// valid UTF-8 and no name repeated at any depth, is a *SyntaxError,
// returned once fn has seen the members before the problem. name has its
// escapes decoded; name and value are valid only during the call.
//
// It reads obj once, with jsontext, allocating nothing for names without
// escapes: use it where a struct and Unmarshal would cost too much.
func EachMember(obj []byte, fn func(name []byte, value jsontext.Value) error) error {
	d := newByteDecoder(obj)
	defer d.release()
	if d.PeekKind() != '{' {
		if _, err := d.ReadValue(); err != nil {
			return syntaxError(err)
		}
		return &SyntaxError{Msg: "not a JSON object"}
	}
	if _, err := d.ReadToken(); err != nil {
		return syntaxError(err)
	}
	for d.PeekKind() != '}' {
		name, err := d.readName()
		if err != nil {
			return syntaxError(err)
		}
		value, err := d.ReadValue()
		if err != nil {
			return syntaxError(err)
		}
		if err := fn(name, value); err != nil {
			return err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return syntaxError(err)
	}
	return syntaxError(d.atEOF())
}

// StringValue returns the value of raw, a JSON string with its quotes and
// nothing around them; ok is false when raw is anything else, or a
// string with invalid UTF-8 or escapes.
func StringValue(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain && utf8.Valid(inner) {
		return string(inner), true
	}
	b, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return "", false
	}
	return string(b), true
}
