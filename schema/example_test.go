package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/schema"
)

func ExampleFor() {
	type SearchInput struct {
		Query string   `json:"query" description:"Search terms, e.g. \"go, json\""`
		Limit int      `json:"limit,omitempty" jsonschema:"minimum=1,maximum=50,default=10"`
		Sort  string   `json:"sort,omitempty" jsonschema:"enum=relevance|date"`
		Tags  []string `json:"tags,omitempty" jsonschema:"uniqueItems"`
	}
	doc, err := schema.For[SearchInput]()
	if err != nil {
		panic(err)
	}
	var out bytes.Buffer
	json.Indent(&out, doc, "", "  ")
	fmt.Println(out.String())
	// Output:
	// {
	//   "type": "object",
	//   "properties": {
	//     "query": {
	//       "type": "string",
	//       "description": "Search terms, e.g. \"go, json\""
	//     },
	//     "limit": {
	//       "type": "integer",
	//       "minimum": 1,
	//       "maximum": 50,
	//       "default": 10
	//     },
	//     "sort": {
	//       "type": "string",
	//       "enum": [
	//         "relevance",
	//         "date"
	//       ]
	//     },
	//     "tags": {
	//       "type": "array",
	//       "items": {
	//         "type": "string"
	//       },
	//       "uniqueItems": true
	//     }
	//   },
	//   "required": [
	//     "query"
	//   ],
	//   "additionalProperties": false
	// }
}

func ExampleCompile() {
	s, err := schema.Compile(json.RawMessage(`{
		"type": "object",
		"properties": {
			"name": {"type": "string", "minLength": 1},
			"age": {"type": "integer", "minimum": 0}
		},
		"required": ["name"],
		"additionalProperties": false
	}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.ValidateJSON([]byte(`{"name": "Ada", "age": 36}`)))
	fmt.Println(s.ValidateJSON([]byte(`{"age": -1, "nickname": "x"}`)))
	// Output:
	// <nil>
	// (root): missing required property "name"; (root): additional property "nickname" is not allowed; /age: must be >= 0
}

func ExampleValidationErrors() {
	s, _ := schema.Compile(json.RawMessage(`{"properties": {"tags": {"items": {"type": "string"}}}}`))
	var inst any
	json.Unmarshal([]byte(`{"tags": ["a", 2]}`), &inst)
	if errs, ok := s.Validate(inst).(schema.ValidationErrors); ok {
		for _, e := range errs {
			fmt.Printf("path=%s keyword=%s message=%s\n", e.Path, e.Keyword, e.Message)
		}
	}
	// Output:
	// path=/tags/1 keyword=type message=must be string, got integer
}
