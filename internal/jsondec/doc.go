// Package jsondec decodes JSON into Go values of one type with a decoder
// compiled once for that type.
//
// [Compile] builds the decoder at registration time; decoding then walks a
// precomputed description of the type (field offsets, element decoders)
// instead of reflecting on every call, and it validates and decodes the
// input in a single pass.
//
// The semantics are those of [encoding/json.Unmarshal], with one exception:
// object member names match struct fields exactly (case-sensitively), not
// case-insensitively. A member "TEXT" does not fill a field tagged
// `json:"text"`; it is ignored like any unknown member. Callers validate
// arguments against a JSON Schema whose property names are matched exactly,
// and a decoder that folded case would accept a member the schema never
// checked.
//
// Apart from that:
//   - fields are named by their `json:"name"` tag or, untagged, by their Go
//     name; `json:"-"` fields and unexported fields are ignored, and so are
//     unknown members; two fields of the same name cancel each other unless
//     exactly one of them is tagged, as in encoding/json;
//   - with duplicate members the later one is decoded over the earlier one
//     (it replaces scalars and merges into structs, maps, slices and
//     pointers already set, as encoding/json does);
//   - null sets pointers, maps, slices and interfaces to nil and leaves any
//     other value unchanged;
//   - numbers into integers must be integral and in range; into interfaces
//     they become float64; objects into interfaces become map[string]any and
//     arrays []any;
//   - strings may use every JSON escape; invalid UTF-8 and unpaired
//     surrogates become U+FFFD; a string into a []byte is base64;
//   - a type whose pointer implements [encoding/json.Unmarshaler] receives
//     the raw bytes of its value, null included (but null sets a pointer to
//     such a type to nil); one implementing [encoding.TextUnmarshaler]
//     receives the unquoted text of a string, and other values are type
//     errors;
//   - a value that does not fit its Go type is skipped and the first such
//     [*encoding/json.UnmarshalTypeError] is returned after the rest has
//     been decoded; malformed input yields a [*SyntaxError], input nested
//     more than 10000 deep included.
//
// encoding/json validates the whole input before it stores anything; this
// package decodes as it validates, so after a syntax error the value may
// have been partly filled in, and Unmarshaler methods may have run on the
// members before the error.
//
// Types the decoder does not handle itself are decoded by encoding/json,
// decided once per type by [Compile]: those with an embedded (anonymous)
// field, a field with the `,string` option, a named pointer type, or a
// complex, channel, function or unsafe.Pointer value anywhere inside them.
// For those the member names match case-insensitively, as encoding/json
// does.
package jsondec
