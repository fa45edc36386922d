package schema

import (
	"encoding/json"
	"math"
	"net/url"
	"sort"
	"strconv"
)

func (c *compiler) sub(m map[string]any, key, loc string, base *url.URL) (*schema, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	return c.compile(v, loc+"/"+escapeToken(key), base)
}

func (c *compiler) subArray(m map[string]any, key, loc string, base *url.URL, nonEmpty bool) ([]*schema, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok || (nonEmpty && len(arr) == 0) {
		return nil, c.errorf(loc, "%s must be a non-empty array of schemas", key)
	}
	out := make([]*schema, len(arr))
	for i, e := range arr {
		s, err := c.compile(e, loc+"/"+escapeToken(key)+"/"+strconv.Itoa(i), base)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (c *compiler) subMap(m map[string]any, key, loc string, base *url.URL) ([]namedSchema, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	mm, ok := v.(map[string]any)
	if !ok {
		return nil, c.errorf(loc, "%s must be an object", key)
	}
	names := make([]string, 0, len(mm))
	for k := range mm {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]namedSchema, 0, len(names))
	for _, k := range names {
		s, err := c.compile(mm[k], loc+"/"+escapeToken(key)+"/"+escapeToken(k), base)
		if err != nil {
			return nil, err
		}
		out = append(out, namedSchema{k, s})
	}
	return out, nil
}

func (c *compiler) count(m map[string]any, key, loc string) (int, error) {
	v, ok := m[key]
	if !ok {
		return -1, nil
	}
	n, ok := v.(json.Number)
	if ok {
		f, err := strconv.ParseFloat(string(n), 64)
		if err == nil && f >= 0 && isInteger(f) {
			if f > math.MaxInt32 {
				return math.MaxInt32, nil
			}
			return int(f), nil
		}
	}
	return 0, c.errorf(loc, "%s must be a non-negative integer", key)
}

func (c *compiler) number(m map[string]any, key, loc string) (limit, error) {
	v, ok := m[key]
	if !ok {
		return limit{}, nil
	}
	if n, ok := v.(json.Number); ok {
		f, err := strconv.ParseFloat(string(n), 64)
		if err == nil || isRangeErr(err) {
			return limit{set: true, f: f, lit: string(n)}, nil
		}
	}
	return limit{}, c.errorf(loc, "%s must be a number", key)
}

func (c *compiler) stringArray(m map[string]any, key, loc string) ([]string, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	return c.toStrings(v, key, loc)
}

func (c *compiler) toStrings(v any, key, loc string) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, c.errorf(loc, "%s must be an array of strings", key)
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, c.errorf(loc, "%s must be an array of strings", key)
		}
		out[i] = s
	}
	return out, nil
}

func (c *compiler) compileKeywords(s *schema, m map[string]any, loc string, base *url.URL) error {
	var err error
	// Definitions are compiled eagerly so that errors surface and anchors register.
	for _, kw := range []string{"$defs", "definitions"} {
		if _, err = c.subMap(m, kw, loc, base); err != nil {
			return err
		}
	}
	if v, ok := m["type"]; ok {
		if s.types, err = c.parseType(v, loc); err != nil {
			return err
		}
	}
	if v, ok := m["enum"]; ok {
		arr, ok := v.([]any)
		if !ok {
			return c.errorf(loc, "enum must be an array")
		}
		s.enum, s.hasEnum = arr, true
	}
	if v, ok := m["const"]; ok {
		s.constVal, s.hasConst = v, true
	}

	// objects
	if s.props, err = c.subMap(m, "properties", loc, base); err != nil {
		return err
	}
	if len(s.props) > 0 {
		s.propIndex = make(map[string]*schema, len(s.props))
		for _, p := range s.props {
			s.propIndex[p.name] = p.s
		}
	}
	pats, err := c.subMap(m, "patternProperties", loc, base)
	if err != nil {
		return err
	}
	for _, p := range pats {
		re, err := compilePattern(p.name)
		if err != nil {
			return c.errorf(loc, "patternProperties: invalid regular expression %q: %v", p.name, err)
		}
		s.patternProps = append(s.patternProps, patternSchema{re, p.s})
	}
	if s.additional, err = c.sub(m, "additionalProperties", loc, base); err != nil {
		return err
	}
	if s.required, err = c.stringArray(m, "required", loc); err != nil {
		return err
	}
	if s.propNames, err = c.sub(m, "propertyNames", loc, base); err != nil {
		return err
	}
	if s.minProps, err = c.count(m, "minProperties", loc); err != nil {
		return err
	}
	if s.maxProps, err = c.count(m, "maxProperties", loc); err != nil {
		return err
	}
	if err = c.dependencies(s, m, loc, base); err != nil {
		return err
	}
	if s.unevalProps, err = c.sub(m, "unevaluatedProperties", loc, base); err != nil {
		return err
	}

	// arrays
	if s.prefixItems, err = c.subArray(m, "prefixItems", loc, base, false); err != nil {
		return err
	}
	if _, isArr := m["items"].([]any); isArr {
		// Draft-07 style tuple validation; additionalItems covers the rest.
		if s.prefixItems, err = c.subArray(m, "items", loc, base, false); err != nil {
			return err
		}
		if s.items, err = c.sub(m, "additionalItems", loc, base); err != nil {
			return err
		}
	} else if s.items, err = c.sub(m, "items", loc, base); err != nil {
		return err
	}
	if s.contains, err = c.sub(m, "contains", loc, base); err != nil {
		return err
	}
	if s.minContains, err = c.count(m, "minContains", loc); err != nil {
		return err
	}
	if s.maxContains, err = c.count(m, "maxContains", loc); err != nil {
		return err
	}
	if s.minItems, err = c.count(m, "minItems", loc); err != nil {
		return err
	}
	if s.maxItems, err = c.count(m, "maxItems", loc); err != nil {
		return err
	}
	if v, ok := m["uniqueItems"]; ok {
		b, ok := v.(bool)
		if !ok {
			return c.errorf(loc, "uniqueItems must be a boolean")
		}
		s.uniqueItems = b
	}
	if s.unevalItems, err = c.sub(m, "unevaluatedItems", loc, base); err != nil {
		return err
	}

	// numbers
	if err = c.numbers(s, m, loc); err != nil {
		return err
	}

	// strings
	if s.minLength, err = c.count(m, "minLength", loc); err != nil {
		return err
	}
	if s.maxLength, err = c.count(m, "maxLength", loc); err != nil {
		return err
	}
	if v, ok := m["pattern"]; ok {
		p, ok := v.(string)
		if !ok {
			return c.errorf(loc, "pattern must be a string")
		}
		if s.pattern, err = compilePattern(p); err != nil {
			return c.errorf(loc, "pattern: invalid regular expression %q: %v", p, err)
		}
	}
	if v, ok := m["format"]; ok {
		f, ok := v.(string)
		if !ok {
			return c.errorf(loc, "format must be a string")
		}
		s.format = f
		if c.opts.AssertFormat {
			s.formatCheck = formatCheckers[f]
		}
	}

	// applicators
	if s.allOf, err = c.subArray(m, "allOf", loc, base, true); err != nil {
		return err
	}
	if s.anyOf, err = c.subArray(m, "anyOf", loc, base, true); err != nil {
		return err
	}
	if s.oneOf, err = c.subArray(m, "oneOf", loc, base, true); err != nil {
		return err
	}
	if s.not, err = c.sub(m, "not", loc, base); err != nil {
		return err
	}
	if s.ifS, err = c.sub(m, "if", loc, base); err != nil {
		return err
	}
	if s.thenS, err = c.sub(m, "then", loc, base); err != nil {
		return err
	}
	if s.elseS, err = c.sub(m, "else", loc, base); err != nil {
		return err
	}
	return nil
}

func (c *compiler) parseType(v any, loc string) (typeSet, error) {
	var names []any
	switch t := v.(type) {
	case string:
		names = []any{t}
	case []any:
		names = t
	default:
		return 0, c.errorf(loc, "type must be a string or an array of strings")
	}
	var set typeSet
	for _, n := range names {
		ns, _ := n.(string)
		found := false
		for _, tn := range typeNames {
			if tn.name == ns {
				set |= tn.bit
				found = true
			}
		}
		if !found {
			return 0, c.errorf(loc, "unknown type %v", n)
		}
	}
	if set == 0 {
		return 0, c.errorf(loc, "type must name at least one type")
	}
	return set, nil
}

func (c *compiler) numbers(s *schema, m map[string]any, loc string) error {
	var err error
	if s.minimum, err = c.number(m, "minimum", loc); err != nil {
		return err
	}
	if s.maximum, err = c.number(m, "maximum", loc); err != nil {
		return err
	}
	if s.exclMin, err = c.number(m, "exclusiveMinimum", loc); err != nil {
		return err
	}
	if s.exclMax, err = c.number(m, "exclusiveMaximum", loc); err != nil {
		return err
	}
	if s.multipleOf, err = c.number(m, "multipleOf", loc); err != nil {
		return err
	}
	if s.multipleOf.set && !(s.multipleOf.f > 0) {
		return c.errorf(loc, "multipleOf must be greater than 0")
	}
	return nil
}

// dependencies handles dependentRequired, dependentSchemas and the draft-07
// "dependencies" keyword, which combines both.
func (c *compiler) dependencies(s *schema, m map[string]any, loc string, base *url.URL) error {
	var err error
	if s.depSchemas, err = c.subMap(m, "dependentSchemas", loc, base); err != nil {
		return err
	}
	addRequired := func(key string, v any) error {
		mm, ok := v.(map[string]any)
		if !ok {
			return c.errorf(loc, "%s must be an object", key)
		}
		names := make([]string, 0, len(mm))
		for k := range mm {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if _, isArr := mm[k].([]any); !isArr && key == "dependencies" {
				sub, err := c.compile(mm[k], loc+"/dependencies/"+escapeToken(k), base)
				if err != nil {
					return err
				}
				s.depSchemas = append(s.depSchemas, namedSchema{k, sub})
				continue
			}
			req, err := c.toStrings(mm[k], key, loc)
			if err != nil {
				return err
			}
			s.depRequired = append(s.depRequired, dependency{k, req})
		}
		return nil
	}
	for _, key := range []string{"dependentRequired", "dependencies"} {
		if v, ok := m[key]; ok {
			if err := addRequired(key, v); err != nil {
				return err
			}
		}
	}
	return nil
}
