package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"math"
	"sync"
	"sync/atomic"
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

// readObject reads the object that comes next in buf, which d reads, and
// returns its text (a slice of buf) and the number of its members, whose
// places (relative to the object) it stores in spans: 0 when the object
// has none, or more than spans holds.
func (d *byteDecoder) readObject(buf []byte, spans *[maxSpans]span) (jsontext.Value, int, error) {
	if _, err := d.ReadToken(); err != nil {
		return nil, 0, err
	}
	start := d.InputOffset() - 1
	n := 0
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return nil, 0, err
		}
		nameEnd := d.InputOffset() - start - 1
		value, err := d.ReadValue()
		if err != nil {
			return nil, 0, err
		}
		if n <= maxSpans {
			if n < maxSpans {
				valueEnd := d.InputOffset() - start
				spans[n] = span{
					nameStart: int32(nameEnd) - int32(len(name)) + 2, nameEnd: int32(nameEnd),
					valueStart: int32(valueEnd) - int32(len(value)), valueEnd: int32(valueEnd),
					escaped: bytes.IndexByte(name, '\\') >= 0,
				}
			}
			n++
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, 0, err
	}
	end := d.InputOffset()
	if n > maxSpans || end-start > math.MaxInt32 {
		n = 0
	}
	return buf[start:end], n, nil
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
		if m := interned.Load(); m != nil {
			if s, ok := (*m)[string(inner)]; ok {
				return s, true
			}
		}
		return string(inner), true
	}
	b, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// ReadValue reads data, one JSON value under the policy of Unmarshal,
// with read: read consumes the value from d (and may stop early by
// returning an error); ReadValue then checks that nothing but white space
// follows. It returns read's error, or the syntax error of data.
func ReadValue(data []byte, read func(d *jsontext.Decoder) error) error {
	d := newByteDecoder(data)
	defer d.release()
	if err := read(&d.Decoder); err != nil {
		return syntaxError(err)
	}
	if err := d.atEOF(); err != nil {
		return syntaxError(err)
	}
	return nil
}

// interned holds the strings StringValue returns without allocating.
var interned atomic.Pointer[map[string]string]

// Intern adds strings that StringValue returns, when it reads them
// without escapes, as these very strings rather than new copies: the
// method names and revisions every message carries. It is safe to call at
// any time; each call copies the set.
func Intern(ss ...string) {
	for {
		old := interned.Load()
		m := make(map[string]string, len(ss)+8)
		if old != nil {
			for k, v := range *old {
				m[k] = v
			}
		}
		for _, s := range ss {
			m[s] = s
		}
		if interned.CompareAndSwap(old, &m) {
			return
		}
	}
}
