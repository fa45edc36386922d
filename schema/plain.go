package schema

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// A plain schema is one whose every keyword is among "type", "properties",
// "required", "additionalProperties" (a boolean) and "items", with plain
// subschemas, or a boolean schema true: the shape of nearly every tool's
// input schema. ValidateJSON checks an instance against it while reading
// the text once, with nothing decoded into values; when the answer is not
// a plain yes (an invalid instance, a number "integer" cannot judge from
// its text) the full validator decides and reports, so the errors are the
// same either way. The plain check only ever says "valid" for what the
// full validator accepts (checkPlain, run over the JSON-Schema test suite,
// the validation cases and FuzzCompileValidate; TestPlainKnowsEveryKeyword).
type plain struct {
	types    typeSet // 0: any type
	props    map[string]*plain
	required map[string]int // required member → its bit in the seen mask
	closed   bool           // additionalProperties: false
	items    *plain         // nil: any items
	anything bool           // the boolean schema true
}

// maxPlainDepth bounds the nesting of a plain schema; deeper ones are
// validated by the full validator.
const maxPlainDepth = 16

// plainOf returns s as a plain schema, or nil when it is not one.
func plainOf(s *schema, depth int) *plain {
	if s == nil || depth > maxPlainDepth {
		return nil
	}
	if s.isBool {
		if s.boolVal {
			return &plain{anything: true}
		}
		return nil
	}
	if s.ref != nil || s.dynRef != nil || s.dynName != "" || s.hasEnum || s.hasConst ||
		s.patternProps != nil || s.propNames != nil || s.minProps >= 0 || s.maxProps >= 0 ||
		s.depRequired != nil || s.depSchemas != nil || s.unevalProps != nil ||
		s.prefixItems != nil || s.contains != nil || s.minContains >= 0 || s.maxContains >= 0 ||
		s.minItems >= 0 || s.maxItems >= 0 || s.uniqueItems || s.unevalItems != nil || s.hasUnevalAny ||
		s.minimum.set || s.maximum.set || s.exclMin.set || s.exclMax.set || s.multipleOf.set ||
		s.minLength >= 0 || s.maxLength >= 0 || s.pattern != nil || s.formatCheck != nil ||
		s.allOf != nil || s.anyOf != nil || s.oneOf != nil || s.not != nil ||
		s.ifS != nil || s.thenS != nil || s.elseS != nil {
		return nil
	}
	p := &plain{types: s.types}
	switch {
	case s.additional == nil:
	case s.additional.isBool && s.additional.boolVal:
	case s.additional.isBool:
		p.closed = true
	default:
		return nil
	}
	if len(s.props) > 0 {
		p.props = make(map[string]*plain, len(s.props))
		for _, ns := range s.props {
			c := plainOf(ns.s, depth+1)
			if c == nil {
				return nil
			}
			p.props[ns.name] = c
		}
	}
	if len(s.required) > 0 {
		if len(s.required) > 64 {
			return nil
		}
		p.required = make(map[string]int, len(s.required))
		for _, r := range s.required {
			if _, dup := p.required[r]; !dup {
				p.required[r] = len(p.required)
			}
		}
	}
	if s.items != nil {
		if p.items = plainOf(s.items, depth+1); p.items == nil {
			return nil
		}
	}
	return p
}

// validJSON reports whether data is valid against p: true only when it
// surely is (and is one JSON value under the policy of jsonrpc.Unmarshal).
func (p *plain) validJSON(data []byte) bool {
	ok := false
	err := jsonrpc.ReadValue(data, func(d *jsontext.Decoder) error {
		var err error
		ok, err = p.valid(d)
		return err
	})
	return ok && err == nil
}

// valid reads the next value of d and reports whether it surely is valid
// against p; it stops reading at the first doubt.
func (p *plain) valid(d *jsontext.Decoder) (bool, error) {
	if p.anything {
		return true, d.SkipValue()
	}
	switch k := d.PeekKind(); k {
	case '{':
		if p.types != 0 && p.types&tObject == 0 {
			return false, nil
		}
		if p.props == nil && p.required == nil && !p.closed {
			return true, d.SkipValue()
		}
		return p.object(d)
	case '[':
		if p.types != 0 && p.types&tArray == 0 {
			return false, nil
		}
		if p.items == nil {
			return true, d.SkipValue()
		}
		if _, err := d.ReadToken(); err != nil {
			return false, err
		}
		for d.PeekKind() != ']' {
			if ok, err := p.items.valid(d); !ok || err != nil {
				return false, err
			}
		}
		_, err := d.ReadToken()
		return err == nil, err
	case '0':
		raw, err := d.ReadValue()
		if err != nil {
			return false, err
		}
		if p.types == 0 || p.types&tNumber != 0 {
			return true, nil
		}
		// An integer written without a fraction or an exponent; others
		// (2.0, 1e3) are for the full validator to judge.
		return p.types&tInteger != 0 && bytes.IndexAny(raw, ".eE") < 0, nil
	case '"', 't', 'f', 'n':
		want := tNull
		switch k {
		case '"':
			want = tString
		case 't', 'f':
			want = tBool
		}
		if p.types != 0 && p.types&want == 0 {
			return false, nil
		}
		return true, d.SkipValue()
	default:
		_, err := d.ReadToken() // invalid JSON: its error
		return false, err
	}
}

// object reads an object member by member.
func (p *plain) object(d *jsontext.Decoder) (bool, error) {
	if _, err := d.ReadToken(); err != nil {
		return false, err
	}
	var seen uint64
	var buf [128]byte
	name := buf[:0]
	for d.PeekKind() != '}' {
		raw, err := d.ReadValue() // the member name
		if err != nil {
			return false, err
		}
		if name, err = jsontext.AppendUnquote(name[:0], raw); err != nil {
			return false, err
		}
		if bit, ok := p.required[string(name)]; ok {
			seen |= 1 << bit
		}
		if c, ok := p.props[string(name)]; ok {
			if ok, err := c.valid(d); !ok || err != nil {
				return false, err
			}
			continue
		}
		if p.closed {
			return false, nil
		}
		if err := d.SkipValue(); err != nil {
			return false, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return false, err
	}
	return seen == 1<<len(p.required)-1, nil
}
