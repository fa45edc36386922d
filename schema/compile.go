package schema

import (
	"encoding/json"
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

	// Loader, when set, supplies the schema documents that references name
	// by a URI outside the document being compiled. It is called at most
	// once per document URI (without fragment) and only while compiling;
	// whatever it returns is compiled as a 2020-12 (or, when declared,
	// draft-07) document retrieved from that URI. When Loader is nil such
	// references are compile errors. The package itself never fetches
	// anything.
	Loader func(uri string) (json.RawMessage, error)
}

// Schema is a compiled JSON Schema. It is immutable and safe for concurrent use.
type Schema struct {
	root *schema
	raw  json.RawMessage
	// dynamic is set when some "$dynamicRef" depends on the dynamic scope,
	// which validation then tracks.
	dynamic bool
	// plain is root as a plain schema (plain.go), or nil.
	plain *plain
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
// resolve inside the document or, with opts.Loader, inside a document the
// Loader supplies; other references are reported as errors.
func CompileWith(doc json.RawMessage, opts CompileOptions) (*Schema, error) {
	root, err := decodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("schema: invalid JSON: %w", err)
	}
	draft7, err := dialectOf(root)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := &compiler{
		docs:      map[string]*document{"": {root: root, draft7: draft7}},
		opts:      opts,
		byLoc:     make(map[string]*schema),
		resources: make(map[string]*resource),
		dynByName: make(map[string][]*schema),
	}
	base, _ := url.Parse(defaultBase)
	c.resources[defaultBase] = &resource{uri: defaultBase, loc: ""}
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
	return &Schema{root: s, raw: append(json.RawMessage(nil), doc...), dynamic: c.dynamic, plain: plainOf(s, 0)}, nil
}

// dialectOf reports whether a document declares draft-07 in "$schema",
// refusing dialects other than draft-07 and 2020-12.
func dialectOf(root any) (draft7 bool, err error) {
	m, ok := root.(map[string]any)
	if !ok {
		return false, nil
	}
	d, ok := m["$schema"]
	if !ok {
		return false, nil
	}
	ds, _ := d.(string)
	switch strings.TrimSuffix(ds, "#") {
	case dialect202012:
		return false, nil
	case dialectDraft7:
		return true, nil
	}
	return false, fmt.Errorf("unsupported dialect %q (want %s or %s#)", ds, dialect202012, dialectDraft7)
}

// IsObjectSchema reports whether the root of a schema document declares
// "type": "object" (or the one-element array ["object"]), as MCP requires for
// tool input schemas. The document is read as Compile reads it: member
// names are exact ("TYPE" is not "type") and a document that repeats a
// member name, or is not JSON text, is not an object schema.
func IsObjectSchema(doc json.RawMessage) bool {
	root, err := decodeJSON(doc)
	if err != nil {
		return false
	}
	top, _ := root.(map[string]any)
	switch t := top["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return len(t) == 1 && t[0] == "object"
	}
	return false
}

// decodeJSON decodes exactly one JSON value, keeping numbers as
// json.Number. Schema documents are read as instances are: invalid UTF-8
// and member names repeated in an object are refused.
func decodeJSON(data []byte) (any, error) { return parseValue(data) }

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

	// res is the schema resource (the nearest enclosing "$id", or the
	// document) the subschema belongs to.
	res *resource

	ref, dynRef *schema
	// dynName is the "$dynamicAnchor" name a "$dynamicRef" initially
	// resolved to; when set, the reference is re-resolved against the
	// dynamic scope during validation.
	dynName string

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

// document is one JSON document taking part in a compilation: the one being
// compiled or one supplied by CompileOptions.Loader.
type document struct {
	root   any
	draft7 bool
}

// resource is a schema resource: a document root or a subschema with an
// absolute "$id". loc is the location of its root schema.
type resource struct {
	uri        string
	loc        string
	anchors    map[string]*schema // "$anchor", "$dynamicAnchor" and draft-07 "#name" ids
	dynAnchors map[string]*schema // "$dynamicAnchor" only
}

// Locations name a schema node across documents: a JSON pointer ("" or
// "/...") within the document being compiled, or "<uri>#<pointer>" within a
// document supplied by the Loader.
func splitLoc(loc string) (doc, ptr string) {
	if loc == "" || loc[0] == '/' {
		return "", loc
	}
	i := strings.IndexByte(loc, '#')
	return loc[:i], loc[i+1:]
}

// where renders a location for an error message.
func where(loc string) string {
	if loc == "" || loc[0] == '/' {
		return "#" + loc
	}
	return loc
}

type compiler struct {
	docs      map[string]*document // by URI; "" is the document being compiled
	opts      CompileOptions
	byLoc     map[string]*schema
	resources map[string]*resource // by URI without fragment
	dynByName map[string][]*schema // every "$dynamicAnchor", by name
	pending   []pendingRef
	dynamic   bool // some "$dynamicRef" depends on the dynamic scope
}

func (c *compiler) errorf(loc, format string, args ...any) error {
	return fmt.Errorf("schema: at %q: %s", where(loc), fmt.Sprintf(format, args...))
}

// resourceAt returns the resource identified by base, registering it (rooted
// at loc) if it is new.
func (c *compiler) resourceAt(base *url.URL, loc string) *resource {
	k := uriKey(base)
	r, ok := c.resources[k]
	if !ok {
		r = &resource{uri: k, loc: loc}
		c.resources[k] = r
	}
	return r
}

func (r *resource) addAnchor(name string, s *schema, dynamic bool) {
	if r.anchors == nil {
		r.anchors = make(map[string]*schema)
	}
	r.anchors[name] = s
	if dynamic {
		if r.dynAnchors == nil {
			r.dynAnchors = make(map[string]*schema)
		}
		r.dynAnchors[name] = s
	}
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
	docKey, _ := splitLoc(loc)
	draft7Ref := hasRef && c.docs[docKey].draft7 // draft-07: siblings of $ref are ignored
	if v, ok := m["$id"]; ok && !draft7Ref {
		id, ok := v.(string)
		if !ok {
			return nil, c.errorf(loc, "$id must be a string")
		}
		if strings.HasPrefix(id, "#") {
			if name := id[1:]; name != "" {
				c.resourceAt(base, loc).addAnchor(name, s, false)
			}
		} else {
			u, err := base.Parse(id)
			if err != nil {
				return nil, c.errorf(loc, "invalid $id %q: %v", id, err)
			}
			base = u
			k := uriKey(base)
			if r, ok := c.resources[k]; !ok || r.loc != loc {
				c.resources[k] = &resource{uri: k, loc: loc}
			}
			if u.Fragment != "" {
				c.resources[k].addAnchor(u.Fragment, s, false)
			}
		}
	}
	s.res = c.resourceAt(base, loc)
	for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
		if v, ok := m[kw]; ok {
			a, ok := v.(string)
			if !ok || a == "" {
				return nil, c.errorf(loc, "%s must be a non-empty string", kw)
			}
			dynamic := kw == "$dynamicAnchor"
			s.res.addAnchor(a, s, dynamic)
			if dynamic {
				c.dynByName[a] = append(c.dynByName[a], s)
			}
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
