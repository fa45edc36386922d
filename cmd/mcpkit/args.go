package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// assignment is one key=value (or key:=JSON) argument.
type assignment struct {
	key, value string
	raw        bool // key:=JSON
}

// parseAssignments splits key=value and key:=JSON arguments.
func parseAssignments(args []string) ([]assignment, error) {
	out := make([]assignment, 0, len(args))
	for _, a := range args {
		i := strings.IndexByte(a, '=')
		if i <= 0 {
			return nil, fmt.Errorf("argument %q is not key=value", a)
		}
		as := assignment{key: a[:i], value: a[i+1:]}
		if strings.HasSuffix(as.key, ":") {
			as.key, as.raw = as.key[:len(as.key)-1], true
			if as.key == "" {
				return nil, fmt.Errorf("argument %q has no key", a)
			}
			if !json.Valid([]byte(as.value)) {
				return nil, fmt.Errorf("argument %s:= wants a JSON value, got %q", as.key, as.value)
			}
		}
		out = append(out, as)
	}
	return out, nil
}

// readArgsFlag reads --args: a JSON object, or @file (@- for stdin).
func readArgsFlag(v string, stdin io.Reader) (map[string]any, error) {
	if v == "" {
		return nil, nil
	}
	data := []byte(v)
	if name, ok := strings.CutPrefix(v, "@"); ok {
		var err error
		if name == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, fmt.Errorf("--args: %v", err)
		}
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errors.New("--args wants a JSON object (or @file)")
	}
	return m, nil
}

// applyAssignments sets the assignments in args, typing each value by the
// property of the same name in props (strings when there is none).
func applyAssignments(args map[string]any, as []assignment, props map[string]*propertySchema) error {
	for _, a := range as {
		if a.raw {
			args[a.key] = json.RawMessage(a.value)
			continue
		}
		v, err := typedValue(props[a.key], a.value)
		if err != nil {
			return fmt.Errorf("argument %s: %v", a.key, err)
		}
		args[a.key] = v
	}
	return nil
}

// typedValue parses text as the property's type: integers, numbers,
// booleans, arrays (JSON, or comma-separated items) and objects (JSON);
// anything else stays a string.
func typedValue(p *propertySchema, text string) (any, error) {
	if p == nil {
		return text, nil
	}
	switch p.kind() {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want an integer, got %q", text)
		}
		return n, nil
	case "number":
		t := strings.TrimSpace(text)
		if _, err := strconv.ParseFloat(t, 64); err != nil || !json.Valid([]byte(t)) {
			return nil, fmt.Errorf("want a number, got %q", text)
		}
		return json.Number(t), nil
	case "boolean":
		switch strings.ToLower(strings.TrimSpace(text)) {
		case "true", "t", "1", "yes", "y":
			return true, nil
		case "false", "f", "0", "no", "n":
			return false, nil
		}
		return nil, fmt.Errorf("want true or false, got %q", text)
	case "null":
		return nil, nil
	case "object":
		t := strings.TrimSpace(text)
		if !strings.HasPrefix(t, "{") || !json.Valid([]byte(t)) {
			return nil, fmt.Errorf("want a JSON object, got %q", text)
		}
		return json.RawMessage(t), nil
	case "array":
		t := strings.TrimSpace(text)
		if strings.HasPrefix(t, "[") {
			if !json.Valid([]byte(t)) {
				return nil, fmt.Errorf("want a JSON array, got %q", text)
			}
			return json.RawMessage(t), nil
		}
		items := []any{}
		if t == "" {
			return items, nil
		}
		for _, part := range strings.Split(t, ",") {
			v, err := typedValue(p.Items, strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		return items, nil
	}
	return text, nil
}

// propertyOrder returns the names of a schema's properties in the order
// the schema lists them.
func propertyOrder(schema []byte) []string {
	var s struct {
		Properties jsontext.Value `json:"properties"`
	}
	if jsonrpc.Unmarshal(schema, &s) != nil || s.Properties.Kind() != '{' {
		return nil
	}
	var names []string
	_ = jsonrpc.EachMember(s.Properties, func(k []byte, _ jsontext.Value) error {
		names = append(names, string(k))
		return nil
	})
	return names
}
