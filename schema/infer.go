package schema

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Provider is implemented by types that supply their own JSON Schema. When
// For or ForType meets a type implementing Provider (with a value or pointer
// receiver), it calls JSONSchema on the zero value and uses the returned
// document verbatim instead of inferring one. The method must return valid JSON.
type Provider interface {
	JSONSchema() json.RawMessage
}

var (
	providerType   = reflect.TypeFor[Provider]()
	timeType       = reflect.TypeFor[time.Time]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	numberType     = reflect.TypeFor[json.Number]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
)

// For returns the JSON Schema (2020-12) describing how encoding/json encodes
// values of type T. See ForType for the mapping rules.
func For[T any]() (json.RawMessage, error) {
	return ForType(reflect.TypeFor[T]())
}

// ForType returns a compact JSON Schema (2020-12) document for t. Structs
// become closed objects whose properties follow field order, embedded structs
// are flattened as encoding/json does, and named recursive types are emitted
// once under "$defs" and referenced with "$ref". Channels, functions and
// complex numbers are rejected.
func ForType(t reflect.Type) (json.RawMessage, error) {
	if t == nil {
		return nil, fmt.Errorf("schema: nil type")
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	g := &generator{
		root:      t,
		recursive: map[reflect.Type]bool{},
		defNames:  map[reflect.Type]string{},
		usedNames: map[string]bool{},
		defs:      &object{},
	}
	g.findRecursive(t, map[reflect.Type]int{})
	s, err := g.schemaFor(t)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", t, err)
	}
	if len(g.defs.members) > 0 {
		o, ok := s.(*object)
		if !ok {
			o = &object{}
		}
		o.set("$defs", g.defs)
		s = o
	}
	return json.RawMessage(appendJSON(nil, s)), nil
}

// isProvider reports whether the concrete type t or *t implements Provider.
func isProvider(t reflect.Type) bool {
	if t.Kind() == reflect.Interface {
		return false
	}
	return t.Implements(providerType) || reflect.PointerTo(t).Implements(providerType)
}

type generator struct {
	root        reflect.Type
	rootStarted bool
	recursive   map[reflect.Type]bool // named types that are their own descendants
	defNames    map[reflect.Type]string
	usedNames   map[string]bool
	defs        *object
}

// findRecursive walks the type graph depth-first and marks every named type
// reached again while it is still being walked. Every cycle contains such a
// type, so emitting marked types by reference is enough to terminate.
func (g *generator) findRecursive(t reflect.Type, state map[reflect.Type]int) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType || t == rawMessageType || t == numberType || isProvider(t) {
		return
	}
	named := t.Name() != ""
	if named {
		switch state[t] {
		case 1:
			g.recursive[t] = true
			return
		case 2:
			return
		}
		state[t] = 1
		defer func() { state[t] = 2 }()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		g.findRecursive(t.Elem(), state)
	case reflect.Struct:
		for _, f := range structFields(t) {
			g.findRecursive(f.sf.Type, state)
		}
	}
}

// schemaFor returns the schema of t as an ordered JSON value.
func (g *generator) schemaFor(t reflect.Type) (any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if g.recursive[t] {
		if t == g.root {
			if g.rootStarted {
				return obj("$ref", "#"), nil
			}
		} else {
			return g.ref(t)
		}
	}
	if t == g.root {
		g.rootStarted = true
	}
	return g.build(t)
}

// build returns the schema of the non-pointer type t, without checking
// whether t itself must be emitted by reference.
func (g *generator) build(t reflect.Type) (any, error) {
	switch {
	case isProvider(t):
		return providedSchema(t)
	case t == timeType:
		return obj("type", "string", "format", "date-time"), nil
	case t == rawMessageType:
		return &object{}, nil
	case t == numberType:
		return obj("type", "number"), nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return obj("type", "boolean"), nil
	case reflect.String:
		return obj("type", "string"), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return obj("type", "integer"), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return obj("type", "integer", "minimum", json.Number("0")), nil
	case reflect.Float32, reflect.Float64:
		return obj("type", "number"), nil
	case reflect.Interface:
		return &object{}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !isProvider(t.Elem()) {
			return obj("type", "string", "contentEncoding", "base64"), nil
		}
		items, err := g.schemaFor(t.Elem())
		if err != nil {
			return nil, err
		}
		return obj("type", "array", "items", items), nil
	case reflect.Array:
		items, err := g.schemaFor(t.Elem())
		if err != nil {
			return nil, err
		}
		n := json.Number(fmt.Sprint(t.Len()))
		return obj("type", "array", "items", items, "minItems", n, "maxItems", n), nil
	case reflect.Map:
		return g.mapSchema(t)
	case reflect.Struct:
		return g.structSchema(t)
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}

// ref emits a reference to the $defs entry for recursive type t, generating
// the entry on first use.
func (g *generator) ref(t reflect.Type) (any, error) {
	name, ok := g.defNames[t]
	if !ok {
		name = g.defName(t)
		g.defNames[t] = name
		g.defs.set(name, nil) // reserve the position; filled below
		body, err := g.build(t)
		if err != nil {
			return nil, err
		}
		g.defs.set(name, body)
	}
	return obj("$ref", "#/$defs/"+name), nil
}

// defName derives a unique $defs key from the type name, keeping only
// characters that need no escaping in a JSON Pointer or URI fragment.
func (g *generator) defName(t reflect.Type) string {
	var b strings.Builder
	for _, r := range t.Name() {
		if r < 0x80 && (r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	base := b.String()
	name := base
	for i := 2; g.usedNames[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	g.usedNames[name] = true
	return name
}

func providedSchema(t reflect.Type) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s.JSONSchema panicked: %v", t, r)
		}
	}()
	var p Provider
	if t.Implements(providerType) {
		p = reflect.New(t).Elem().Interface().(Provider)
	} else {
		p = reflect.New(t).Interface().(Provider)
	}
	v, err = parseOrdered(p.JSONSchema())
	if err != nil {
		return nil, fmt.Errorf("%s.JSONSchema returned invalid JSON: %v", t, err)
	}
	switch v.(type) {
	case *object, bool:
		return v, nil
	}
	return nil, fmt.Errorf("%s.JSONSchema must return an object or boolean schema", t)
}

func (g *generator) mapSchema(t reflect.Type) (any, error) {
	kt := t.Key()
	o := obj("type", "object")
	switch kt.Kind() {
	case reflect.String:
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !kt.Implements(textMarshaler) {
			o.set("propertyNames", obj("pattern", "^-?[0-9]+$"))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !kt.Implements(textMarshaler) {
			o.set("propertyNames", obj("pattern", "^[0-9]+$"))
		}
	default:
		if !kt.Implements(textMarshaler) {
			return nil, fmt.Errorf("unsupported map key type %s", kt)
		}
	}
	elem, err := g.schemaFor(t.Elem())
	if err != nil {
		return nil, err
	}
	o.set("additionalProperties", elem)
	return o, nil
}

func (g *generator) structSchema(t reflect.Type) (any, error) {
	props := &object{}
	var required []string
	for _, f := range structFields(t) {
		tags, err := parseFieldTags(f.sf)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", t.Name(), f.sf.Name, err)
		}
		fs, err := g.fieldSchema(f, tags)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", t.Name(), f.sf.Name, err)
		}
		props.set(f.name, fs)
		isPtr := f.sf.Type.Kind() == reflect.Pointer
		req := !(f.omitEmpty || isPtr || f.viaPtr || tags.optional)
		if tags.required || req {
			required = append(required, f.name)
		}
	}
	o := obj("type", "object", "properties", props)
	if len(required) > 0 {
		o.set("required", required)
	}
	o.set("additionalProperties", false)
	return o, nil
}

func (g *generator) fieldSchema(f structField, tags fieldTags) (any, error) {
	var fs any
	base := f.sf.Type
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	switch base.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		if f.asString && !isProvider(base) {
			fs = obj("type", "string")
		}
	}
	if fs == nil {
		var err error
		if fs, err = g.schemaFor(f.sf.Type); err != nil {
			return nil, err
		}
		// Shared values (e.g. $ref objects) must not be mutated by tags.
		fs = cloneOrdered(fs)
	}
	return applyTags(fs, f.sf.Type, f.asString, tags)
}

// cloneOrdered deep-copies the top-level object so tags can modify it.
func cloneOrdered(v any) any {
	switch x := v.(type) {
	case *object:
		c := &object{members: make([]member, len(x.members))}
		for i, m := range x.members {
			c.members[i] = member{m.key, cloneOrdered(m.val)}
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = cloneOrdered(e)
		}
		return c
	}
	return v
}
