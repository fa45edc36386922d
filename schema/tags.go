package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// fieldTags holds the schema-related struct tags of one field.
type fieldTags struct {
	required, optional bool
	entries            []tagEntry // jsonschema key=value pairs, in tag order
	description        string
	hasDescription     bool
	pattern            string
	hasPattern         bool
}

type tagEntry struct {
	key, value string
	flag       bool // written without "="
}

// valueKeywords apply to the value itself; for slice and array fields they
// apply to the items instead.
var valueKeywords = map[string]bool{
	"enum": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "minLength": true,
	"maxLength": true, "pattern": true, "format": true,
}

var numberKeywords = map[string]bool{
	"minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true,
}

var stringKeywords = map[string]bool{
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
}

var arrayKeywords = map[string]bool{"minItems": true, "maxItems": true, "uniqueItems": true}

// parseFieldTags reads the description, pattern and jsonschema tags.
func parseFieldTags(sf reflect.StructField) (fieldTags, error) {
	var ft fieldTags
	ft.description, ft.hasDescription = sf.Tag.Lookup("description")
	ft.pattern, ft.hasPattern = sf.Tag.Lookup("pattern")
	js, ok := sf.Tag.Lookup("jsonschema")
	if !ok || strings.TrimSpace(js) == "" {
		return ft, nil
	}
	for part := range strings.SplitSeq(js, ",") {
		part = strings.TrimSpace(part)
		key, value, hasValue := strings.Cut(part, "=")
		key = strings.TrimSpace(key)
		switch {
		case key == "required" && !hasValue:
			ft.required = true
		case key == "optional" && !hasValue:
			ft.optional = true
		case key == "uniqueItems" || key == "title" || key == "default" ||
			key == "minItems" || key == "maxItems" || valueKeywords[key]:
			if !hasValue && key != "uniqueItems" {
				return ft, fmt.Errorf("jsonschema tag %q needs a value (%s=...)", key, key)
			}
			ft.entries = append(ft.entries, tagEntry{key: key, value: value, flag: !hasValue})
		case key == "":
			return ft, fmt.Errorf("empty entry in jsonschema tag %q", js)
		default:
			return ft, fmt.Errorf("unknown jsonschema tag key %q", key)
		}
	}
	if ft.required && ft.optional {
		return ft, fmt.Errorf("jsonschema tag cannot be both required and optional")
	}
	return ft, nil
}

// valueKind classifies a Go type for typing tag values.
type valueKind int

const (
	vkString valueKind = iota
	vkBool
	vkInt
	vkUint
	vkFloat
	vkArray
	vkOther // interfaces, structs, maps, types with custom schemas
)

func valueKindOf(t reflect.Type, asString bool) valueKind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if asString {
		return vkString
	}
	switch {
	case t == timeType:
		return vkString
	case t == numberType:
		return vkFloat
	case isProvider(t) || t == rawMessageType:
		return vkOther
	}
	switch t.Kind() {
	case reflect.String:
		return vkString
	case reflect.Bool:
		return vkBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return vkInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return vkUint
	case reflect.Float32, reflect.Float64:
		return vkFloat
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return vkString // []byte is a base64 string
		}
		return vkArray
	case reflect.Array:
		return vkArray
	}
	return vkOther
}

// typedValue converts tag text into a JSON value typed by kind.
func typedValue(text string, vk valueKind) (any, error) {
	switch vk {
	case vkString:
		return text, nil
	case vkBool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", text)
		}
		return b, nil
	case vkInt:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		return json.Number(strconv.FormatInt(n, 10)), nil
	case vkUint:
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a non-negative integer", text)
		}
		return json.Number(strconv.FormatUint(n, 10)), nil
	case vkFloat:
		return numberValue(text)
	}
	// Arrays, objects and interfaces take a JSON literal; for interfaces and
	// other kinds a bare word that is not JSON is kept as a string.
	v, err := parseOrdered([]byte(text))
	if err != nil {
		if vk == vkArray {
			return nil, fmt.Errorf("%q is not a JSON array", text)
		}
		return text, nil
	}
	return v, nil
}

// numberValue parses a finite decimal number into a canonical JSON number.
func numberValue(text string) (json.Number, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || strings.ContainsAny(text, "xXpP_") {
		return "", fmt.Errorf("%q is not a number", text)
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

func countValue(text string) (json.Number, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(text), 10, 31)
	if err != nil {
		return "", fmt.Errorf("%q is not a non-negative integer", text)
	}
	return json.Number(strconv.FormatUint(n, 10)), nil
}

// applyTags adds the keywords requested by tags to the schema of a field of
// type t. Array-level keywords go on the field schema; value keywords go on
// the items schema for slices and arrays.
func applyTags(fs any, t reflect.Type, asString bool, tags fieldTags) (any, error) {
	if len(tags.entries) == 0 && !tags.hasDescription && !tags.hasPattern {
		return fs, nil
	}
	o, ok := fs.(*object)
	if !ok {
		if b, isBool := fs.(bool); isBool && b {
			o = &object{}
		} else {
			return nil, fmt.Errorf("cannot apply tags to schema %s", appendJSON(nil, fs))
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fieldKind := valueKindOf(t, asString)
	itemTarget, itemKind := o, fieldKind
	if fieldKind == vkArray {
		items, _ := o.get("items")
		io, ok := items.(*object)
		if !ok {
			return nil, fmt.Errorf("array schema has no items to constrain")
		}
		itemTarget, itemKind = io, valueKindOf(t.Elem(), false)
	}

	if tags.hasDescription {
		o.set("description", tags.description)
	}
	entries := tags.entries
	if tags.hasPattern {
		entries = append(entries[:len(entries):len(entries)], tagEntry{key: "pattern", value: tags.pattern})
	}
	for _, e := range entries {
		target, vk := o, fieldKind
		if valueKeywords[e.key] {
			target, vk = itemTarget, itemKind
		}
		switch {
		case numberKeywords[e.key] && vk != vkInt && vk != vkUint && vk != vkFloat && vk != vkOther:
			return nil, fmt.Errorf("jsonschema tag %q requires a numeric field", e.key)
		case stringKeywords[e.key] && vk != vkString && vk != vkOther:
			return nil, fmt.Errorf("jsonschema tag %q requires a string field", e.key)
		case arrayKeywords[e.key] && fieldKind != vkArray && fieldKind != vkOther:
			return nil, fmt.Errorf("jsonschema tag %q requires a slice or array field", e.key)
		}
		var val any
		var err error
		switch e.key {
		case "title", "format":
			val = e.value
		case "pattern":
			if _, err = regexp.Compile(e.value); err != nil {
				return nil, fmt.Errorf("invalid pattern %q: %v", e.value, err)
			}
			val = e.value
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
			var n json.Number
			if n, err = numberValue(e.value); err == nil {
				val = n
				if f, _ := strconv.ParseFloat(string(n), 64); e.key == "multipleOf" && f <= 0 {
					err = fmt.Errorf("must be greater than 0")
				}
			}
		case "minLength", "maxLength", "minItems", "maxItems":
			val, err = countValue(e.value)
		case "uniqueItems":
			b := true
			if !e.flag {
				b, err = strconv.ParseBool(e.value)
			}
			val = b
		case "default":
			val, err = typedValue(e.value, fieldKind)
		case "enum":
			var vals []any
			for item := range strings.SplitSeq(e.value, "|") {
				var v any
				if v, err = typedValue(item, vk); err != nil {
					break
				}
				vals = append(vals, v)
			}
			val = vals
		}
		if err != nil {
			return nil, fmt.Errorf("jsonschema tag %q: %v", e.key, err)
		}
		target.set(e.key, val)
	}
	return o, nil
}
