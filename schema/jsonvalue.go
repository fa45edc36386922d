package schema

import (
	"encoding/json"
	"errors"
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
		return nil, p.err
	}
	return v, nil
}

// valueParser reads JSON already known to be valid.
type valueParser struct {
	data []byte
	i    int
	err  error
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
			p.space()
			p.i++ // ':'
			m[k] = p.value()
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
			a = append(a, p.value())
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
