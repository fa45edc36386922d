package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Dialect identifiers accepted in "$schema".
const (
	dialect202012 = "https://json-schema.org/draft/2020-12/schema"
	dialectDraft7 = "http://json-schema.org/draft-07/schema"
)

// defaultBase is the base URI of a document whose root has no absolute "$id".
const defaultBase = "urn:mcpkit:schema"

// CompileOptions adjusts how CompileWith interprets a schema document.
type CompileOptions struct {
	// AssertFormat makes "format" an assertion for the formats date-time,
	// date, time, email, uri, uuid, ipv4, ipv6 and hostname; unknown formats
	// remain annotations. When false, "format" is never checked.
	AssertFormat bool
}

// Schema is a compiled JSON Schema. It is immutable and safe for concurrent use.
type Schema struct {
	root *schema
	raw  json.RawMessage
}

// Raw returns a copy of the document bytes the Schema was compiled from,
// unchanged (unknown keywords and key order are preserved).
func (s *Schema) Raw() json.RawMessage {
	return append(json.RawMessage(nil), s.raw...)
}

// Compile parses and compiles a JSON Schema document (2020-12, or draft-07
// when declared by "$schema") with default options.
func Compile(doc json.RawMessage) (*Schema, error) {
	return CompileWith(doc, CompileOptions{})
}

// CompileWith is like Compile but applies opts. References ("$ref") must
// resolve inside the document; external references are reported as errors
// and are never fetched.
func CompileWith(doc json.RawMessage, opts CompileOptions) (*Schema, error) {
	root, err := decodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("schema: invalid JSON: %w", err)
	}
	c := &compiler{
		doc:       root,
		opts:      opts,
		byLoc:     make(map[string]*schema),
		resources: make(map[string]string),
		anchors:   make(map[string]*schema),
	}
	if m, ok := root.(map[string]any); ok {
		if d, ok := m["$schema"]; ok {
			ds, _ := d.(string)
			switch strings.TrimSuffix(ds, "#") {
			case dialect202012:
			case dialectDraft7:
				c.draft7 = true
			default:
				return nil, fmt.Errorf("schema: unsupported dialect %q (want %s or %s#)", ds, dialect202012, dialectDraft7)
			}
		}
	}
	base, _ := url.Parse(defaultBase)
	c.resources[defaultBase] = ""
	s, err := c.compile(root, "", base)
	if err != nil {
		return nil, err
	}
	if err := c.link(); err != nil {
		return nil, err
	}
	if err := c.checkCycles(); err != nil {
		return nil, err
	}
	return &Schema{root: s, raw: append(json.RawMessage(nil), doc...)}, nil
}

// IsObjectSchema reports whether the root of a schema document declares
// "type": "object" (or the one-element array ["object"]), as MCP requires for
// tool input schemas.
func IsObjectSchema(doc json.RawMessage) bool {
	var top struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(doc, &top) != nil {
		return false
	}
	switch t := top.Type.(type) {
	case string:
		return t == "object"
	case []any:
		return len(t) == 1 && t[0] == "object"
	}
	return false
}

// decodeJSON decodes exactly one JSON value, keeping numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimLeft(data[d.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("unexpected data after top-level value")
	}
	return v, nil
}

// typeSet is a bit set of JSON Schema primitive types.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBool
	tObject
	tArray
	tNumber
	tString
	tInteger
)

var typeNames = []struct {
	name string
	bit  typeSet
}{
	{"null", tNull}, {"boolean", tBool}, {"object", tObject}, {"array", tArray},
	{"number", tNumber}, {"string", tString}, {"integer", tInteger},
}

func (t typeSet) String() string {
	var names []string
	for _, tn := range typeNames {
		if t&tn.bit != 0 {
			names = append(names, tn.name)
		}
	}
	return strings.Join(names, " or ")
}

// limit is an optional numeric keyword value.
type limit struct {
	set bool
	f   float64
	lit string
}

type namedSchema struct {
	name string
	s    *schema
}

type patternSchema struct {
	re *regexp.Regexp
	s  *schema
}

type dependency struct {
	prop     string
	required []string
}

// schema is one compiled (sub)schema.
type schema struct {
	loc     string
	isBool  bool
	boolVal bool

	ref, dynRef *schema

	types    typeSet
	enum     []any
	hasEnum  bool
	constVal any
	hasConst bool

	// objects
	props        []namedSchema
	propIndex    map[string]*schema
	patternProps []patternSchema
	additional   *schema
	required     []string
	propNames    *schema
	minProps     int
	maxProps     int
	depRequired  []dependency
	depSchemas   []namedSchema
	unevalProps  *schema
	objectChecks bool

	// arrays
	prefixItems  []*schema
	items        *schema
	contains     *schema
	minContains  int
	maxContains  int
	minItems     int
	maxItems     int
	uniqueItems  bool
	unevalItems  *schema
	arrayChecks  bool
	hasUnevalAny bool

	// numbers
	minimum, maximum, exclMin, exclMax, multipleOf limit

	// strings
	minLength, maxLength int
	pattern              *regexp.Regexp
	format               string
	formatCheck          func(string) bool

	// applicators
	allOf, anyOf, oneOf []*schema
	not                 *schema
	ifS, thenS, elseS   *schema
}

type pendingRef struct {
	s       *schema
	ref     string
	base    *url.URL
	dynamic bool
}

type compiler struct {
	doc       any
	draft7    bool
	opts      CompileOptions
	byLoc     map[string]*schema
	resources map[string]string // resource URI (no fragment) -> document location
	anchors   map[string]*schema
	pending   []pendingRef
}

func (c *compiler) errorf(loc, format string, args ...any) error {
	return fmt.Errorf("schema: at %q: %s", "#"+loc, fmt.Sprintf(format, args...))
}

// compile compiles the schema node found at document location loc.
func (c *compiler) compile(node any, loc string, base *url.URL) (*schema, error) {
	if s, ok := c.byLoc[loc]; ok {
		return s, nil
	}
	if b, ok := node.(bool); ok {
		s := &schema{loc: loc, isBool: true, boolVal: b}
		c.byLoc[loc] = s
		return s, nil
	}
	m, ok := node.(map[string]any)
	if !ok {
		return nil, c.errorf(loc, "a schema must be an object or a boolean, got %s", kindOf(node))
	}
	s := &schema{loc: loc, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1,
		minContains: -1, maxContains: -1, minLength: -1, maxLength: -1}
	c.byLoc[loc] = s

	_, hasRef := m["$ref"]
	draft7Ref := hasRef && c.draft7 // draft-07: siblings of $ref are ignored
	if v, ok := m["$id"]; ok && !draft7Ref {
		id, ok := v.(string)
		if !ok {
			return nil, c.errorf(loc, "$id must be a string")
		}
		if strings.HasPrefix(id, "#") {
			if name := id[1:]; name != "" {
				c.anchors[uriKey(base)+"#"+name] = s
			}
		} else {
			u, err := base.Parse(id)
			if err != nil {
				return nil, c.errorf(loc, "invalid $id %q: %v", id, err)
			}
			base = u
			c.resources[uriKey(base)] = loc
			if u.Fragment != "" {
				c.anchors[uriKey(base)+"#"+u.Fragment] = s
			}
		}
	}
	for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
		if v, ok := m[kw]; ok {
			a, ok := v.(string)
			if !ok || a == "" {
				return nil, c.errorf(loc, "%s must be a non-empty string", kw)
			}
			c.anchors[uriKey(base)+"#"+a] = s
		}
	}
	for _, kw := range []string{"$ref", "$dynamicRef"} {
		if v, ok := m[kw]; ok {
			r, ok := v.(string)
			if !ok {
				return nil, c.errorf(loc, "%s must be a string", kw)
			}
			c.pending = append(c.pending, pendingRef{s: s, ref: r, base: base, dynamic: kw == "$dynamicRef"})
		}
	}
	if draft7Ref {
		return s, nil
	}
	if err := c.compileKeywords(s, m, loc, base); err != nil {
		return nil, err
	}
	s.objectChecks = s.props != nil || s.patternProps != nil || s.additional != nil ||
		s.required != nil || s.propNames != nil || s.minProps >= 0 || s.maxProps >= 0 ||
		s.depRequired != nil || s.depSchemas != nil
	s.arrayChecks = s.prefixItems != nil || s.items != nil || s.contains != nil ||
		s.minItems >= 0 || s.maxItems >= 0 || s.uniqueItems
	s.hasUnevalAny = s.unevalProps != nil || s.unevalItems != nil
	return s, nil
}
