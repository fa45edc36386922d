// Package jsondec decodes JSON into Go values of one type with a decoder
// compiled once for that type.
//
// [Compile] builds the decoder at registration time; decoding then walks a
// precomputed description of the type (field offsets, element decoders)
// instead of reflecting on every call, and it validates and decodes the
// input in a single pass.
//
// The semantics are those of [encoding/json.Unmarshal], except that the
// decoder refuses input that could be read two ways, so that what it
// decodes is what a JSON Schema validator checked:
//
//   - object member names match struct fields exactly (case-sensitively),
//     not case-insensitively. A member "TEXT" does not fill a field tagged
//     `json:"text"`; it is ignored like any unknown member. Callers
//     validate arguments against a JSON Schema whose property names are
//     matched exactly, and a decoder that folded case would accept a
//     member the schema never checked;
//   - a member name repeated in one object, at any depth and whatever the
//     object is decoded into (skipped values and the raw bytes given to
//     an Unmarshaler included), is a [*SyntaxError]. Names are compared
//     after decoding their escapes, so "a" and "\u0061" are the same
//     name. encoding/json lets the last member win, or merges it into the
//     earlier one for structs, maps and pointers, which smuggles values
//     past a validator that kept the first or the last;
//   - invalid UTF-8 in a string is a [*SyntaxError], not replaced with
//     U+FFFD.
//
// The input accepted is exactly what jsonvalid.Check accepts; every
// *SyntaxError wraps the *jsonvalid.Error describing the problem, the
// repeated name included.
//
// Every type is decoded this way, so these rules hold for every struct
// inside the value; only an UnmarshalJSON method can do otherwise with
// the (checked) bytes it is given.
//
// Apart from that:
//   - fields are named by their `json:"name"` tag or, untagged, by their Go
//     name; `json:"-"` fields and unexported fields are ignored, and so are
//     unknown members. The fields of embedded structs (by value or by
//     pointer, exported or not) are promoted, and of the fields of one
//     name the least nested wins, then a single tagged one, otherwise
//     none, as in encoding/json. An embedded struct pointer that is nil is
//     allocated when one of its fields is met, or, when unexported, left
//     nil with an error (where encoding/json panics for one named by a
//     tag);
//   - the `,string` option on a bool, number or string field (or an
//     unnamed pointer to one) takes the value from a JSON string holding
//     its JSON text, as encoding/json reads it;
//   - null sets pointers, maps, slices and interfaces to nil and leaves any
//     other value unchanged;
//   - numbers into integers must be integral and in range; into interfaces
//     they become float64; objects into interfaces become map[string]any and
//     arrays []any;
//   - strings may use every JSON escape; escaped unpaired surrogates
//     become U+FFFD; a string into a []byte is base64;
//   - a type whose pointer implements [encoding/json.Unmarshaler] receives
//     the raw bytes of its value, null included (but null sets a pointer to
//     such a type to nil); one implementing [encoding.TextUnmarshaler]
//     receives the unquoted text of a string, and other values are type
//     errors. The value a named pointer type points to is decoded by its
//     kind, without its methods;
//   - complex, channel, function and unsafe.Pointer values take null (and
//     keep their value); anything else is a type error;
//   - a value that does not fit its Go type is skipped and the first such
//     [*encoding/json.UnmarshalTypeError] is returned after the rest has
//     been decoded; refused input yields a [*SyntaxError], input nested
//     more than 10000 deep included.
//
// encoding/json validates the whole input before it stores anything; this
// package decodes as it validates, so after a syntax error the value may
// have been partly filled in, and Unmarshaler methods may have run on the
// members before the error (each on a value that was checked in full,
// repeated names included). When a method fails, refused input later in
// the data is reported instead, as encoding/json does.
package jsondec
