package protocol

import (
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The hot results (tool calls and their text content) are encoded by hand:
// the output is the same as encoding/json's for these types, without its
// reflection and without re-validating nested Marshaler output.

var errInvalidRaw = errors.New("protocol: structuredContent is not valid JSON")

// appendString appends s as a JSON string, escaping as encoding/json does
// (including <, > and & for HTML safety).
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendText appends a text content block.
func (c *TextContent) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"type":"text","text":`...)
	dst = appendString(dst, c.Text)
	var err error
	if c.Annotations != nil {
		dst = append(dst, `,"annotations":`...)
		if dst, err = appendMarshal(dst, c.Annotations); err != nil {
			return dst, err
		}
	}
	if len(c.Meta) > 0 {
		dst = append(dst, `,"_meta":`...)
		if dst, err = appendMarshal(dst, c.Meta); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// MarshalJSON encodes the block with its "type".
func (c *TextContent) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, 32+len(c.Text)))
}

// appendJSON appends the resultType and _meta members, each followed by
// a comma (the caller appends at least one member after them).
func (h *ResultHeader) appendJSON(dst []byte) ([]byte, error) {
	if h.ResultType != "" {
		dst = append(dst, `"resultType":`...)
		dst = appendString(dst, string(h.ResultType))
		dst = append(dst, ',')
	}
	if h.Meta != nil {
		b, err := h.Meta.MarshalJSON()
		if err != nil {
			return dst, err
		}
		dst = append(dst, `"_meta":`...)
		dst = append(dst, b...)
		dst = append(dst, ',')
	}
	return dst, nil
}

// MarshalJSON encodes the result; nil Content is sent as an empty list.
func (r *CallToolResult) MarshalJSON() ([]byte, error) {
	b, err := r.AppendJSON(make([]byte, 0, 256))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// AppendJSON appends what MarshalJSON returns to dst; on an error dst is
// returned as it was.
func (r *CallToolResult) AppendJSON(dst []byte) ([]byte, error) {
	out, err := r.appendJSON(dst)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func (r *CallToolResult) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	dst, err := r.ResultHeader.appendJSON(dst)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if t, ok := c.(*TextContent); ok {
			dst, err = t.appendJSON(dst)
		} else {
			dst, err = appendMarshal(dst, c)
		}
		if err != nil {
			return nil, err
		}
	}
	dst = append(dst, ']')
	if len(r.StructuredContent) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		var err error
		if dst, err = appendCompact(dst, r.StructuredContent); err != nil {
			return nil, err
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}

// appendCompact appends raw, which must be one valid JSON value, without
// insignificant white space: checked and compacted in one pass, in place.
func appendCompact(dst, raw []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, raw...)
	v := jsontext.Value(dst[start:])
	if err := v.Compact(); err != nil {
		return dst[:start], errInvalidRaw
	}
	return dst[:start+len(v)], nil
}
