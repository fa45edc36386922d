package schema

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

var errInvalidJSON = errors.New("invalid JSON")

// parseValue decodes JSON text into the values encoding/json produces for
// an any with UseNumber (map[string]any, []any, string, json.Number, bool,
// nil), without its decoder's buffers: instance validation runs on every
// tool call.
func parseValue(data []byte) (any, error) {
	if !jsonvalid.Valid(data) {
		// Let encoding/json name the error.
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return nil, errInvalidJSON
	}
	p := valueParser{data: data}
	v := p.value()
	if p.err != nil {
		var dup *DuplicateMemberError
		if errors.As(p.err, &dup) {
			// Again, noting the path this time: only a refusal pays for it.
			p = valueParser{data: data, track: true}
			p.value()
		}
		return nil, p.err
	}
	return v, nil
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

// valueParser reads JSON already known to be valid.
type valueParser struct {
	data []byte
	i    int
	err  error
	// path is where the parser is, for the error of a duplicate member
	// (a member name, or an array index when key is false), kept only when
	// track is set.
	path  []pathStep
	track bool
}

type pathStep struct {
	name  string
	index int
	key   bool
}

func (p *valueParser) pointer() string {
	var b strings.Builder
	for _, s := range p.path {
		b.WriteByte('/')
		if s.key {
			b.WriteString(escapeToken(s.name))
		} else {
			b.WriteString(strconv.Itoa(s.index))
		}
	}
	return b.String()
}

func (p *valueParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *valueParser) value() any {
	p.space()
	if p.i >= len(p.data) {
		p.err = errInvalidJSON
		return nil
	}
	switch c := p.data[p.i]; c {
	case '{':
		p.i++
		m := make(map[string]any)
		p.space()
		if p.data[p.i] == '}' {
			p.i++
			return m
		}
		for p.err == nil {
			p.space()
			k := p.str()
			if _, dup := m[k]; dup && p.err == nil {
				p.err = &DuplicateMemberError{Path: p.pointer(), Name: k}
				return m
			}
			p.space()
			p.i++ // ':'
			if p.track {
				p.path = append(p.path, pathStep{name: k, key: true})
			}
			m[k] = p.value()
			if p.track {
				p.path = p.path[:len(p.path)-1]
			}
			p.space()
			if p.data[p.i] == ',' {
				p.i++
				continue
			}
			p.i++ // '}'
			break
		}
		return m
	case '[':
		p.i++
		a := []any{}
		p.space()
		if p.data[p.i] == ']' {
			p.i++
			return a
		}
		for p.err == nil {
			if p.track {
				p.path = append(p.path, pathStep{index: len(a)})
			}
			a = append(a, p.value())
			if p.track {
				p.path = p.path[:len(p.path)-1]
			}
			p.space()
			if p.data[p.i] == ',' {
				p.i++
				continue
			}
			p.i++ // ']'
			break
		}
		return a
	case '"':
		return p.str()
	case 't':
		p.i += 4
		return true
	case 'f':
		p.i += 5
		return false
	case 'n':
		p.i += 4
		return nil
	default:
		start := p.i
		for p.i < len(p.data) {
			switch p.data[p.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return json.Number(p.data[start:p.i])
			}
			p.i++
		}
		return json.Number(p.data[start:p.i])
	}
}

// str reads a string at p.i.
func (p *valueParser) str() string {
	start := p.i
	escaped := false
	for j := start + 1; j < len(p.data); j++ {
		switch p.data[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			p.i = j + 1
			inner := p.data[start+1 : j]
			if !escaped && utf8.Valid(inner) {
				return string(inner)
			}
			var s string
			if err := json.Unmarshal(p.data[start:j+1], &s); err != nil {
				p.err = err
			}
			return s
		}
	}
	p.err = errInvalidJSON
	return ""
}
