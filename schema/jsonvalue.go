package schema

import (
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// parseValue decodes JSON text into the values encoding/json produces for
// an any with UseNumber (map[string]any, []any, string, json.Number, bool,
// nil), reading it once with jsonrpc.Unmarshal. A member name repeated in
// an object is a *DuplicateMemberError.
func parseValue(data []byte) (any, error) {
	var v jsonrpc.Any
	if err := unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v.Value, nil
}

// unmarshal is jsonrpc.Unmarshal, with a repeated member name reported as
// a *DuplicateMemberError.
func unmarshal(data []byte, v any) error {
	err := jsonrpc.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var se *jsonrpc.SyntaxError
	if errors.As(err, &se) && se.Duplicate {
		p := jsontext.Pointer(se.Pointer)
		return &DuplicateMemberError{Path: string(p.Parent()), Name: p.LastToken()}
	}
	return err
}

// DuplicateMemberError is the refusal of a JSON instance in which an object
// has two members of the same name: which of them a schema checks and
// which a decoder keeps could differ, so neither is taken.
type DuplicateMemberError struct {
	// Path is the JSON Pointer of the object; "" is the root.
	Path string
	// Name is the repeated member name.
	Name string
}

func (e *DuplicateMemberError) Error() string {
	p := e.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": duplicate member " + strconv.Quote(e.Name)
}
