package jsonrpc

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonvalid"
)

// Version is the only JSON-RPC version this package speaks.
const Version = "2.0"

// Message is one decoded JSON-RPC 2.0 message: a request (Method and ID set),
// a notification (Method set, no ID) or a response (no Method; Result or
// Error set).
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage // object or array; nil when absent
	Result json.RawMessage // responses only
	Error  *Error          // error responses only
}

// IsRequest reports whether m is a request that expects a response.
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response (result or error).
func (m *Message) IsResponse() bool { return m.Method == "" }

// IsBatch reports whether data, after leading white space, is a JSON array:
// a JSON-RPC batch.
func IsBatch(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '['
}

// Decode decodes exactly one JSON-RPC message. Input that is not JSON
// text is a *Error with CodeParseError: malformed JSON, and invalid UTF-8
// in a string (refused, not read with replacement characters). Valid JSON
// that is not a JSON-RPC 2.0 message (including a batch array) is a
// *Error with CodeInvalidRequest, and so is a message in which an object
// outside the params repeats a member name, as in "invalid request:
// duplicate member \"x\""; a repeated name at any depth of the params is
// a *Error with CodeInvalidParams ("invalid params: duplicate member
// \"x\" at offset 42"). In short, Decode accepts
// what Unmarshal accepts. When the message's id could be read it is
// returned in the Message even on error, so the caller can answer with
// it.
//
// Member names are matched exactly: besides repeated names, a name
// differing from a JSON-RPC name only in case is rejected, so that every
// reader of the message (a proxy, Member, the server) sees the same
// members. The Message does not alias data.
func Decode(data []byte) (*Message, error) {
	trimmed := bytes.Trim(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, NewError(CodeParseError, "parse error: empty message", nil)
	}
	if err := jsonvalid.Check(data); err != nil {
		return refused(data, trimmed, err.(*jsonvalid.Error))
	}
	if trimmed[0] != '{' {
		if trimmed[0] == '[' {
			return nil, NewError(CodeInvalidRequest, "invalid request: batches are not supported", nil)
		}
		return nil, NewError(CodeInvalidRequest, "invalid request: a message must be a JSON object", nil)
	}
	// One copy, which every raw member of the Message slices into.
	buf := append([]byte(nil), trimmed...)
	var members [len(wireNames)][]byte
	if err := splitMembers(buf, &members); err != nil {
		return nil, err
	}
	rawVersion, rawID, rawMethod := members[0], members[1], members[2]
	params, result, rawError := members[3], members[4], members[5]

	m := &Message{}
	idNull := false
	if rawID != nil {
		if string(rawID) == "null" {
			idNull = true
		} else if err := m.ID.UnmarshalJSON(rawID); err != nil {
			return m, NewError(CodeInvalidRequest, "invalid request: "+err.Error(), nil)
		}
	}
	if v, ok := unquote(rawVersion); !ok || v != Version {
		return m, NewError(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`, nil)
	}
	if rawMethod != nil {
		method, ok := unquote(rawMethod)
		switch {
		case !ok:
			return m, NewError(CodeInvalidRequest, "invalid request: method must be a string", nil)
		case method == "":
			return m, NewError(CodeInvalidRequest, "invalid request: method must not be empty", nil)
		case idNull:
			return m, NewError(CodeInvalidRequest, "invalid request: id must not be null", nil)
		case result != nil || rawError != nil:
			return m, NewError(CodeInvalidRequest, "invalid request: a request must not carry result or error", nil)
		}
		if params != nil {
			if c := params[0]; c != '{' && c != '[' {
				return m, NewError(CodeInvalidRequest, "invalid request: params must be an object or an array", nil)
			}
			m.Params = params
		}
		m.Method = method
		return m, nil
	}
	// A response.
	switch {
	case result != nil && rawError != nil:
		return m, NewError(CodeInvalidRequest, "invalid response: both result and error", nil)
	case result != nil:
		if !m.ID.IsValid() {
			return m, NewError(CodeInvalidRequest, "invalid response: a result needs an id", nil)
		}
		m.Result = result
	case rawError != nil:
		var e Error
		if rawError[0] != '{' {
			return m, NewError(CodeInvalidRequest, "invalid response: error must be an object", nil)
		}
		if err := Unmarshal(rawError, &e); err != nil {
			return m, NewError(CodeInvalidRequest, "invalid response: malformed error object", nil)
		}
		m.Error = &e
	default:
		return m, NewError(CodeInvalidRequest, "invalid request: no method, result or error", nil)
	}
	return m, nil
}

// refused returns the error for data that jsonvalid.Check refused with e.
// Input that is not JSON text is a parse error. Input that is, but
// repeats a member name (JSON allows repeated names; mcpkit does not
// accept them), is answered with the message's id when its one "id"
// member is valid: as invalid params when the repeated name is inside the
// params, as an invalid request otherwise.
func refused(data, trimmed []byte, e *jsonvalid.Error) (*Message, error) {
	switch {
	case !jsonvalid.Valid(data):
		return nil, NewError(CodeParseError, "parse error: invalid JSON", nil)
	case !e.Duplicate, !utf8.Valid(data):
		// JSON text is UTF-8 (RFC 8259): a string with invalid bytes is
		// refused, not read with replacement characters.
		return nil, NewError(CodeParseError, "parse error: invalid UTF-8", nil)
	}
	var m *Message
	inParams := false
	if trimmed[0] == '{' {
		var rawID []byte
		ids := 0
		_ = RawMembers(trimmed, func(key, value []byte) bool {
			switch string(key) {
			case "id":
				rawID = value
				ids++
			case "params":
				// value lies within data: its offset there is where
				// their capacities differ.
				start := cap(data) - cap(value)
				inParams = inParams || (e.Offset >= start && e.Offset < start+len(value))
			}
			return true
		})
		var id ID
		if ids == 1 && id.UnmarshalJSON(rawID) == nil {
			m = &Message{ID: id}
		}
	}
	if inParams {
		return m, NewError(CodeInvalidParams, "invalid params: "+e.Msg, nil)
	}
	return m, NewError(CodeInvalidRequest, "invalid request: "+e.Msg, nil)
}

// wireNames are the members of a JSON-RPC message, in the order
// splitMembers stores them.
var wireNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// splitMembers stores the raw value of each JSON-RPC member of obj (valid
// JSON) and rejects names that differ from one only in case: encoding/json
// would let such a member silently replace the real one. It rejects a
// repeated name too, though Decode has refused those already.
func splitMembers(obj []byte, out *[len(wireNames)][]byte) error {
	var bad *Error
	err := RawMembers(obj, func(key, value []byte) bool {
		for i, name := range wireNames {
			switch {
			case string(key) == name && out[i] != nil:
				bad = NewError(CodeInvalidRequest, "invalid request: duplicate member "+quoteJSON(name), nil)
				return false
			case string(key) == name:
				out[i] = value
				return true
			case bytes.EqualFold(key, []byte(name)):
				bad = NewError(CodeInvalidRequest, "invalid request: member names are case-sensitive: "+quoteJSON(string(key)), nil)
				return false
			}
		}
		return true
	})
	if bad != nil {
		return bad
	}
	if err != nil {
		return NewError(CodeInvalidRequest, "invalid request: malformed object", nil)
	}
	return nil
}

// unquote returns the value of a raw JSON string; ok is false when raw is
// not a string.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Unquote returns the value of a raw JSON string value, as found by
// Member; ok is false when raw is not a JSON string.
func Unquote(raw []byte) (string, bool) { return unquote(raw) }

func quoteJSON(s string) string { return string(appendString(nil, s)) }

// AppendRequest appends the encoding of a request (or, with an absent id, a
// notification) to dst. params must be a JSON object or nil.
func AppendRequest(dst []byte, id ID, method string, params json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if id.IsValid() {
		dst = append(dst, `"id":`...)
		dst = append(dst, id.raw...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"method":`...)
	dst = appendString(dst, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendNotification appends the encoding of a notification to dst.
func AppendNotification(dst []byte, method string, params json.RawMessage) []byte {
	return AppendRequest(dst, ID{}, method, params)
}

// AppendResult appends a result response to dst; result must be valid JSON.
func AppendResult(dst []byte, id ID, result json.RawMessage) []byte {
	dst = slices.Grow(dst, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(id.raw)+4+len(result))
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = id.appendRaw(dst)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends an error response to dst. An absent id is encoded as
// null, as JSON-RPC requires when the request's id could not be read.
func AppendError(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = id.appendRaw(dst)
	dst = append(dst, `,"error":`...)
	dst = e.appendJSON(dst)
	return append(dst, '}')
}

// AppendErrorNoID appends an error response without an id member, the form
// MCP allows for transport-level rejections that concern no request.
func AppendErrorNoID(dst []byte, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","error":`...)
	dst = e.appendJSON(dst)
	return append(dst, '}')
}

// Response is the outcome of one request: exactly one of Result and Error is
// set.
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *Error
}

// Append appends the response's encoding to dst.
func (r *Response) Append(dst []byte) []byte {
	if r.Error != nil {
		return AppendError(dst, r.ID, r.Error)
	}
	return AppendResult(dst, r.ID, r.Result)
}

func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
