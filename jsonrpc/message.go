package jsonrpc

import (
	"bytes"
	"encoding/json"
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

// wireMessage is the decoding shape; pointer and raw members tell absent from
// null.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// IsBatch reports whether data, after leading white space, is a JSON array:
// a JSON-RPC batch.
func IsBatch(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '['
}

// Decode decodes exactly one JSON-RPC message. Malformed JSON is a
// *Error with CodeParseError; valid JSON that is not a JSON-RPC 2.0 message
// (including a batch array) is a *Error with CodeInvalidRequest. When the
// message's id could be read it is returned in the Message even on error, so
// the caller can answer with it.
func Decode(data []byte) (*Message, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, NewError(CodeParseError, "parse error: empty message", nil)
	}
	if !json.Valid(trimmed) {
		return nil, NewError(CodeParseError, "parse error: invalid JSON", nil)
	}
	if trimmed[0] != '{' {
		if trimmed[0] == '[' {
			return nil, NewError(CodeInvalidRequest, "invalid request: batches are not supported", nil)
		}
		return nil, NewError(CodeInvalidRequest, "invalid request: a message must be a JSON object", nil)
	}
	var w wireMessage
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return nil, NewError(CodeInvalidRequest, "invalid request: "+err.Error(), nil)
	}
	if err := checkMemberNames(trimmed); err != nil {
		return nil, err
	}
	m := &Message{}
	idNull := false
	if w.ID != nil {
		if string(w.ID) == "null" {
			idNull = true
		} else if err := m.ID.UnmarshalJSON(w.ID); err != nil {
			return m, NewError(CodeInvalidRequest, "invalid request: "+err.Error(), nil)
		}
	}
	if w.JSONRPC == nil || *w.JSONRPC != Version {
		return m, NewError(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`, nil)
	}
	if w.Method != nil {
		if *w.Method == "" {
			return m, NewError(CodeInvalidRequest, "invalid request: method must not be empty", nil)
		}
		if idNull {
			return m, NewError(CodeInvalidRequest, "invalid request: id must not be null", nil)
		}
		if w.Result != nil || w.Error != nil {
			return m, NewError(CodeInvalidRequest, "invalid request: a request must not carry result or error", nil)
		}
		if w.Params != nil {
			if c := firstByte(w.Params); c != '{' && c != '[' {
				return m, NewError(CodeInvalidRequest, "invalid request: params must be an object or an array", nil)
			}
			m.Params = w.Params
		}
		m.Method = *w.Method
		return m, nil
	}
	// A response.
	switch {
	case w.Result != nil && w.Error != nil:
		return m, NewError(CodeInvalidRequest, "invalid response: both result and error", nil)
	case w.Result != nil:
		if !m.ID.IsValid() {
			return m, NewError(CodeInvalidRequest, "invalid response: a result needs an id", nil)
		}
		m.Result = w.Result
	case w.Error != nil:
		var e Error
		if firstByte(w.Error) != '{' {
			return m, NewError(CodeInvalidRequest, "invalid response: error must be an object", nil)
		}
		if err := json.Unmarshal(w.Error, &e); err != nil {
			return m, NewError(CodeInvalidRequest, "invalid response: malformed error object", nil)
		}
		m.Error = &e
	default:
		return m, NewError(CodeInvalidRequest, "invalid request: no method, result or error", nil)
	}
	return m, nil
}

// wireNames are the members of a JSON-RPC message.
var wireNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// checkMemberNames rejects a message whose member names differ from the
// JSON-RPC ones only in case, or repeat one. encoding/json matches keys to
// fields case-insensitively and lets the last duplicate win, so without this
// check "Method" or a second "id" would silently replace the real member,
// and Decode would read a different message than Member does.
func checkMemberNames(obj []byte) error {
	var seen [len(wireNames)]bool
	var bad *Error
	_ = rawMembers(obj, func(rawKey []byte, escaped bool, _ []byte) bool {
		key := rawKey[1 : len(rawKey)-1]
		if escaped {
			k, ok := decodeKey(rawKey, true)
			if !ok {
				return true
			}
			key = []byte(k)
		}
		for i, name := range wireNames {
			switch {
			case string(key) == name && seen[i]:
				bad = NewError(CodeInvalidRequest, "invalid request: duplicate member "+quoteJSON(name), nil)
				return false
			case string(key) == name:
				seen[i] = true
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
	return nil
}

func quoteJSON(s string) string { return string(appendString(nil, s)) }

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

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
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.Raw()...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends an error response to dst. An absent id is encoded as
// null, as JSON-RPC requires when the request's id could not be read.
func AppendError(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.Raw()...)
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
	// HTTPStatus, when not zero, is the status a transport with HTTP
	// semantics answers an error response with. It is not encoded.
	HTTPStatus int
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
