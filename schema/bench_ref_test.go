package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// treeInstance builds a tree of the given depth and fan-out as decoded JSON.
func treeInstance(depth, fanout int) any {
	node := map[string]any{"name": fmt.Sprintf("n%d", depth), "size": json.Number("3")}
	if depth > 0 {
		kids := make([]any, fanout)
		for i := range kids {
			kids[i] = treeInstance(depth-1, fanout)
		}
		node["children"] = kids
	}
	return node
}

func benchValidate(b *testing.B, doc string, inst any) {
	s, err := Compile(json.RawMessage(doc))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Validate(inst); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(inst); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateRefTree validates a recursive structure through "$ref".
func BenchmarkValidateRefTree(b *testing.B) {
	doc := `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","required":["name"],
		"properties":{"name":{"type":"string","minLength":1},"size":{"type":"integer","minimum":0},
		"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"additionalProperties":false}}}`
	benchValidate(b, strings.ReplaceAll(doc, "\n", ""), treeInstance(4, 3))
}

// BenchmarkValidateDynamicRefTree validates the same structure through an
// extensible tree schema whose "$dynamicRef" is resolved in dynamic scope.
func BenchmarkValidateDynamicRefTree(b *testing.B) {
	doc := `{"$id":"https://example.com/strict-tree","$dynamicAnchor":"node","$ref":"tree","unevaluatedProperties":false,
		"$defs":{"tree":{"$id":"tree","$dynamicAnchor":"node","type":"object","required":["name"],
		"properties":{"name":{"type":"string","minLength":1},"size":{"type":"integer","minimum":0},
		"children":{"type":"array","items":{"$dynamicRef":"#node"}}}}}}`
	benchValidate(b, strings.ReplaceAll(doc, "\n", ""), treeInstance(4, 3))
}
