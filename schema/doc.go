// Package schema infers, compiles and validates JSON Schema (draft 2020-12)
// documents for the Model Context Protocol, where tools declare an
// inputSchema and optional outputSchema.
//
// # Inference
//
// For and ForType derive a schema from a Go type, mirroring how encoding/json
// encodes it:
//
//   - bool, string, integer kinds ("integer", with "minimum": 0 for unsigned
//     kinds) and float kinds ("number");
//   - slices and arrays become "array" with "items" (arrays also get
//     minItems/maxItems equal to their length); []byte is a base64 "string";
//   - maps with string (or integer, or encoding.TextMarshaler) keys become
//     "object" with "additionalProperties";
//   - interfaces and json.RawMessage become {} (any value); time.Time is a
//     "date-time" string; pointers are transparent;
//   - structs become closed objects ("additionalProperties": false) with
//     properties in field order. Names, "-", "omitempty", "omitzero" and
//     "string" come from the json tag, and embedded structs are flattened.
//   - named recursive types are emitted once under "$defs" and referenced
//     with "$ref" ("#" when the root type refers to itself);
//   - channels, functions and complex numbers are errors.
//
// A field is required unless it is a pointer, has omitempty or omitzero, is
// promoted through an embedded pointer, or is tagged jsonschema:"optional";
// jsonschema:"required" forces it to be required.
//
// Field schemas can be refined with struct tags:
//
//	Name  string   `json:"name" description:"Display name, shown to users"`
//	Kind  string   `json:"kind" jsonschema:"enum=small|large,default=small"`
//	Size  int      `json:"size" jsonschema:"minimum=1,maximum=10"`
//	Code  string   `json:"code" pattern:"^[A-Z]{2,3}$"`
//	Tags  []string `json:"tags,omitempty" jsonschema:"minItems=1,uniqueItems,maxLength=20"`
//
// The description tag holds free text (commas allowed). The jsonschema tag is
// a comma-separated list of flags (required, optional, uniqueItems) and
// key=value pairs: enum (values separated by "|"), minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength,
// pattern, format, default, minItems, maxItems and title. Enum and default
// values are typed by the field's Go kind (strings are taken verbatim; other
// non-scalar kinds take a JSON literal). Because commas separate entries, a
// pattern containing a comma must be given in the separate pattern tag, which
// takes precedence when both are present. For slice and array fields, value
// keywords (enum, bounds, lengths, pattern, format) constrain the items while
// minItems, maxItems and uniqueItems constrain the array. Malformed or
// inapplicable tags are errors naming the field.
//
// A type can take over its own schema by implementing Provider
// (JSONSchema() json.RawMessage); its output is used verbatim.
//
// # Validation
//
// Compile and CompileWith turn a schema document into an immutable *Schema
// that is safe for concurrent use; Validate and ValidateJSON check instances
// against it. The full 2020-12 validation vocabulary is supported, including
// unevaluatedProperties/unevaluatedItems, $ref to JSON pointers and
// $anchor names, $id for scoping relative references, and $dynamicRef,
// which resolves through the dynamic scope (the schema resources entered
// on the way to it) when it names a $dynamicAnchor. Draft-07 documents
// (declared with "$schema") are accepted, including array-form "items",
// "additionalItems", "definitions" and "dependencies". Patterns are
// compiled with Go's regexp package; ECMA-262's "\s", "\S" and "\cX" keep
// their ECMA-262 meaning.
//
// References are resolved within the document being compiled and, when
// CompileOptions.Loader is set, within the documents it supplies for other
// URIs; without a Loader a $ref to any other URI is a compile error. The
// package never fetches anything itself. "format" is an annotation unless
// CompileOptions.AssertFormat is set. Unknown keywords are ignored, and
// Schema.Raw returns the original document unchanged so callers can pass it
// on verbatim.
//
// Documents and instances are read as all peer-sent JSON is in mcpkit
// (jsonrpc.Unmarshal): one JSON text, valid UTF-8, member names exact and
// never repeated. A document that repeats a member name does not compile;
// an instance that does is refused by ValidateJSON with a
// *DuplicateMemberError, since which of the two members a validator
// checks and which a decoder keeps could differ.
//
// Validation failures are reported as ValidationErrors, a list of at most ten
// ValidationError values whose Path is a JSON Pointer into the instance.
package schema
