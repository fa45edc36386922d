package schema

import (
	"encoding/json"
	"testing"
)

func FuzzCompileValidate(f *testing.F) {
	for _, tc := range validationCases {
		f.Add([]byte(tc.schema), []byte(tc.instance))
	}
	f.Add([]byte(`{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"type":"null"}]},"b":{"items":{"$ref":"#/$defs/a"}}}}`), []byte(`[[[null]]]`))
	f.Add([]byte(`{"format":"date-time"}`), []byte(`"2024-01-01T00:00:60+01:00"`))
	f.Fuzz(func(t *testing.T, schemaBytes, instance []byte) {
		for _, opts := range []CompileOptions{{}, {AssertFormat: true}} {
			s, err := CompileWith(json.RawMessage(schemaBytes), opts)
			if err != nil {
				continue
			}
			checkPlain(t, s, instance)
			_ = s.ValidateJSON(instance)
			if v, err := decodeJSON(instance); err == nil {
				_ = s.Validate(v)
				_ = s.Validate(toFloats(v))
			}
		}
		_ = IsObjectSchema(schemaBytes)
	})
}

// toFloats converts json.Number values to float64, as plain json.Unmarshal would.
func toFloats(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toFloats(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = toFloats(e)
		}
		return out
	}
	return v
}
