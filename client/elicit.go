package client

import (
	"encoding/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// FormDefaults returns a form answer for an elicitation's requested schema
// made of the schema's defaults: each property's default, else its first
// enum value, else the zero value of its type ("", 0, false, []). A
// boolean is true only when its schema's default is true, so answering a
// confirmation with FormDefaults never approves what the schema does not
// approve by default. Handlers for unattended clients use it; interactive
// ones start the form from it.
func FormDefaults(requestedSchema json.RawMessage) map[string]any {
	var sch struct {
		Properties map[string]struct {
			Type    string          `json:"type"`
			Default json.RawMessage `json:"default"`
			Enum    []any           `json:"enum"`
			OneOf   []struct {
				Const any `json:"const"`
			} `json:"oneOf"`
		} `json:"properties"`
	}
	out := map[string]any{}
	if jsonrpc.Unmarshal(requestedSchema, &sch) != nil {
		return out
	}
	for name, p := range sch.Properties {
		var v any
		switch {
		case len(p.Default) > 0 && jsonrpc.Unmarshal(p.Default, &v) == nil:
		case len(p.Enum) > 0:
			v = p.Enum[0]
		case len(p.OneOf) > 0:
			v = p.OneOf[0].Const
		default:
			switch p.Type {
			case "string":
				v = ""
			case "integer", "number":
				v = 0
			case "boolean":
				v = false
			case "array":
				v = []any{}
			default:
				continue
			}
		}
		out[name] = v
	}
	return out
}
