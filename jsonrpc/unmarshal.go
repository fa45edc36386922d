package jsonrpc

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A SyntaxError is why Unmarshal refused its input as JSON text.
type SyntaxError struct {
	// Offset is the byte offset in the input where the problem was found:
	// at or just before the offending byte, the length of the input when
	// it ended too soon, or the opening quote of a repeated member name.
	Offset int
	// Msg says what is wrong, as in `invalid character 'x' after object
	// value (expecting ',' or '}')` or `duplicate member "a"`.
	Msg string
	// Duplicate reports a member name repeated in one object; Member is
	// then that name, its escapes decoded, clipped to 64 bytes.
	Duplicate bool
	Member    string
	// Pointer is the JSON Pointer (RFC 6901) of the value the problem is
	// in; for a repeated name, of the repeated member.
	Pointer string
}

func (e *SyntaxError) Error() string {
	return "jsonrpc: " + e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

// maxMemberInError bounds the repeated name a SyntaxError quotes.
const maxMemberInError = 64

// syntaxError returns err as a *SyntaxError when it is a syntactic error
// of jsontext, and err itself otherwise.
func syntaxError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &SyntaxError{Msg: "unexpected end of JSON input"}
	}
	se, ok := err.(*jsontext.SyntacticError)
	if !ok {
		return err
	}
	out := &SyntaxError{Offset: int(se.ByteOffset), Pointer: string(se.JSONPointer)}
	if errors.Is(se.Err, jsontext.ErrDuplicateName) {
		name := se.JSONPointer.LastToken()
		if len(name) > maxMemberInError {
			name = name[:maxMemberInError]
		}
		out.Duplicate, out.Member = true, name
		out.Msg = "duplicate member " + quoteJSON(name)
		return out
	}
	if se.Err != nil {
		out.Msg = se.Err.Error()
	} else {
		out.Msg = "invalid JSON"
	}
	return out
}

// Unmarshal decodes data, which a peer sent, into the value v points to.
// It is the one policy for reading peer-sent JSON in mcpkit: use it
// rather than encoding/json.Unmarshal, which folds the case of member
// names and lets a repeated member win over (or merge into) the first, so
// that a value can differ from what a JSON Schema validator or a proxy
// saw.
//
// Unmarshal is github.com/go-json-experiment/json's Unmarshal (the
// module that becomes encoding/json/v2) with its default options, which
// are mcpkit's policy:
//
//   - data must be one JSON text (RFC 8259, white space only among
//     space, tab, line feed and carriage return, nesting at most 10000
//     deep) whose strings are valid UTF-8 with valid escapes (an escaped
//     lone surrogate such as "\ud800" is refused), and in which no
//     object, at any depth, has two members of the same name (compared
//     after decoding escapes: "a" and "\u0061" are the same); otherwise
//     the error is a *SyntaxError;
//   - member names match struct fields exactly (case-sensitively), in
//     every struct inside v, embedded ones and those behind pointers,
//     maps, slices and interfaces included: a member "Text" does not fill
//     a field tagged `json:"text"`; it is ignored like any unknown member.
//     The exceptions are a field whose tag asks otherwise (the v2 option
//     `case:ignore`) and what an UnmarshalJSON method does with the raw
//     (checked) bytes of its value: one that calls encoding/json on a
//     struct matches names case-insensitively.
//
// Decoding follows the v2 rules for Go values, which differ from
// encoding/json's in a few places: JSON null sets any value to its zero
// value (encoding/json leaves non-pointer values as they are); `,string`
// applies to numbers only; a time.Duration has no default representation;
// an encoding/json Number takes a JSON number (or null) and keeps its
// text; the first value that does not fit its Go type stops decoding with a
// *json.SemanticError of go-json-experiment (where encoding/json goes on
// and returns an *encoding/json.UnmarshalTypeError). Numbers into
// interfaces become float64, objects map[string]any and arrays []any;
// unknown members are ignored.
//
// v is decoded as data is read: after any error, refused input included,
// it may have been partly filled in and must not be used. A nil or
// non-pointer v is an *encoding/json.InvalidUnmarshalError.
func Unmarshal(data []byte, v any) error {
	if a, ok := v.(*Any); ok && a != nil {
		return a.read(data)
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || reflect.ValueOf(v).IsNil() {
		return &json.InvalidUnmarshalError{Type: t}
	}
	var err error
	if mayHoldNumber(t) {
		err = jsonv2.Unmarshal(data, v, numbers)
	} else {
		err = jsonv2.Unmarshal(data, v)
	}
	if err != nil {
		return syntaxError(err)
	}
	return nil
}

// numberTypes caches mayHoldNumber's answer per type.
var numberTypes sync.Map // reflect.Type -> bool

var numberType = reflect.TypeFor[json.Number]()

// mayHoldNumber reports whether a value of type t can hold an
// encoding/json Number (an interface can hold anything), for which
// Unmarshal needs its numbers option, which costs on every value.
func mayHoldNumber(t reflect.Type) bool {
	if v, ok := numberTypes.Load(t); ok {
		return v.(bool)
	}
	b := holdsNumber(t, map[reflect.Type]bool{})
	numberTypes.Store(t, b)
	return b
}

func holdsNumber(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == numberType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsNumber(t.Elem(), seen)
	case reflect.Map:
		return holdsNumber(t.Key(), seen) || holdsNumber(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsNumber(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// numbers has Unmarshal read an encoding/json Number as encoding/json
// does, from a JSON number, keeping its text; go-json-experiment knows
// its own types only and would take a JSON string.
var numbers = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(d *jsontext.Decoder, n *json.Number) error {
	switch d.PeekKind() {
	case '0':
		raw, err := d.ReadValue()
		if err != nil {
			return err
		}
		*n = json.Number(raw)
		return nil
	case 'n':
		_, err := d.ReadToken()
		*n = ""
		return err
	}
	if _, err := d.ReadValue(); err != nil {
		return err
	}
	return errNotNumber
}))

var errNotNumber = errors.New("a json.Number takes a JSON number")
