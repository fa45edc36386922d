package jsonrpc

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsondec"
	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

// A SyntaxError is why Unmarshal refused its input before decoding it.
type SyntaxError struct {
	// Offset is the byte offset in the input where the problem was found:
	// the offending byte, the length of the input when it ended too soon,
	// or the opening quote of a repeated member name.
	Offset int
	// Msg says what is wrong, as in `invalid character 'x' after object
	// key` or `duplicate member "a"`.
	Msg string
	// Duplicate reports a member name repeated in one object; Member is
	// then that name, its escapes decoded, clipped to 64 bytes.
	Duplicate bool
	Member    string
}

func (e *SyntaxError) Error() string {
	return "jsonrpc: " + e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

func syntaxError(e *jsonvalid.Error) *SyntaxError {
	return &SyntaxError{Offset: e.Offset, Msg: e.Msg, Duplicate: e.Duplicate, Member: e.Member}
}

// Unmarshal decodes data, which a peer sent, into the value v points to.
// It is the one policy for reading client-sent JSON in mcpkit: use it
// rather than encoding/json.Unmarshal, which folds the case of member
// names and lets a repeated member win over (or merge into) the first, so
// that a value can differ from what a JSON Schema validator or a proxy
// saw.
//
// For every v, data must be one JSON text (RFC 8259, white space only
// among space, tab, line feed and carriage return, nesting at most 10000
// deep) whose strings are valid UTF-8 and in which no object, at any
// depth, has two members of the same name (compared after decoding
// escapes: "a" and "\u0061" are the same); otherwise the error is a
// *SyntaxError and v is not touched.
//
// The value is then decoded by mcpkit's compiled decoder (built once per
// type and cached), with the semantics of encoding/json.Unmarshal but for
// member names: they match struct fields exactly (case-sensitively), in
// every struct inside v, embedded ones and those behind pointers, maps,
// slices and interfaces included. A member "Text" does not fill a field
// tagged `json:"text"`; it is ignored like any unknown member. The one
// thing outside this guarantee is what an UnmarshalJSON method does with
// the raw (checked) bytes of its value: one that calls encoding/json on a
// struct matches names case-insensitively.
//
// As in encoding/json, unknown members are ignored, a value that does not
// fit its type is an *encoding/json.UnmarshalTypeError returned after the
// rest is decoded, and a nil or non-pointer v is an
// *encoding/json.InvalidUnmarshalError.
func Unmarshal(data []byte, v any) error {
	if err := jsonvalid.Check(data); err != nil {
		return syntaxError(err.(*jsonvalid.Error))
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || reflect.ValueOf(v).IsNil() {
		return &json.InvalidUnmarshalError{Type: t}
	}
	err := decoderFor(t).Decode(data, v)
	var e *jsonvalid.Error
	if err != nil && errors.As(err, &e) {
		// Not expected after Check, which accepts the same input.
		return syntaxError(e)
	}
	return err
}

// decoders caches a compiled decoder per pointer type.
var decoders sync.Map // reflect.Type -> *jsondec.Decoder

func decoderFor(ptr reflect.Type) *jsondec.Decoder {
	if d, ok := decoders.Load(ptr); ok {
		return d.(*jsondec.Decoder)
	}
	d, _ := decoders.LoadOrStore(ptr, jsondec.ForType(ptr.Elem()))
	return d.(*jsondec.Decoder)
}
