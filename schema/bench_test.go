package schema

import (
	"encoding/json"
	"testing"
)

func BenchmarkValidateSmallObject(b *testing.B) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`))
	if err != nil {
		b.Fatal(err)
	}
	inst := map[string]any{"text": "hello"}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(inst); err != nil {
			b.Fatal(err)
		}
	}
}
