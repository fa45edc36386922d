package jsonrpc

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
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

	// split is where Decode found the params object it split into
	// spans (nspans of them): EachParam reads the spans instead of Params
	// while Params is still that object.
	split  *byte
	nsplit int
	nspans uint8
	spans  [maxSpans]span
}

// maxSpans is how many members of a params object Decode keeps the place
// of; params with more are read again by EachParam.
const maxSpans = 6

// A span locates a member of an object in its text: the name between its
// quotes (escaped when it has escapes) and the value.
type span struct {
	nameStart, nameEnd, valueStart, valueEnd int32
	escaped                                  bool
}

// EachParam calls fn with the name and value of each member of the params
// object, in order, and returns the first error fn returns; absent params
// have none. For the Params of a message from Decode, which split them as
// it checked them, it reads nothing again; otherwise it reads Params with
// EachMember, under the same policy (params that are not an object are a
// *SyntaxError). name and value alias Params (but for a name with
// escapes) and must not be modified.
func (m *Message) EachParam(fn func(name []byte, value jsontext.Value) error) error {
	if len(m.Params) == 0 {
		return nil
	}
	if m.nspans == 0 || m.nsplit != len(m.Params) || m.split != &m.Params[0] {
		return EachMember(m.Params, fn)
	}
	for _, sp := range m.spans[:m.nspans] {
		name := []byte(m.Params[sp.nameStart:sp.nameEnd])
		if sp.escaped {
			var err error
			if name, err = jsontext.AppendUnquote(nil, m.Params[sp.nameStart-1:sp.nameEnd+1]); err != nil {
				return syntaxError(err)
			}
		}
		if err := fn(name, jsontext.Value(m.Params[sp.valueStart:sp.valueEnd])); err != nil {
			return err
		}
	}
	return nil
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

// Decode decodes exactly one JSON-RPC message, reading data once (with
// jsontext, under the policy of Unmarshal). Input that is not JSON text is
// a *Error with CodeParseError: malformed JSON, and invalid UTF-8 in a
// string (refused, not read with replacement characters). Valid JSON
// that is not a JSON-RPC 2.0 message (including a batch array) is a
// *Error with CodeInvalidRequest, and so is a message in which an object
// outside the params repeats a member name, as in "invalid request:
// duplicate member \"x\""; a repeated name at any depth of the params is
// a *Error with CodeInvalidParams ("invalid params: duplicate member
// \"x\""). In short, Decode accepts what Unmarshal accepts, and the
// Params it returns need no further checking. When the message's id
// could be read it is returned in the Message even on error, so the
// caller can answer with it.
//
// Member names are matched exactly: besides repeated names, a name
// differing from a JSON-RPC name only in case is rejected, so that every
// reader of the message (a proxy, the server) sees the same members. The
// Message does not alias data.
func Decode(data []byte) (*Message, error) {
	trimmed := trimSpace(data)
	if len(trimmed) == 0 {
		return nil, NewError(CodeParseError, "parse error: empty message", nil)
	}
	// One copy, which every raw member of the Message slices into.
	buf := append([]byte(nil), trimmed...)
	d := newByteDecoder(buf)
	defer d.release()
	if buf[0] != '{' {
		if _, err := d.ReadValue(); err != nil {
			return refused(buf, err)
		}
		if err := d.atEOF(); err != nil {
			return refused(buf, err)
		}
		if buf[0] == '[' {
			return nil, NewError(CodeInvalidRequest, "invalid request: batches are not supported", nil)
		}
		return nil, NewError(CodeInvalidRequest, "invalid request: a message must be a JSON object", nil)
	}
	var members [len(wireNames)]jsontext.Value
	var spans [maxSpans]span
	nspans := 0
	var caseErr *Error
	if _, err := d.ReadToken(); err != nil {
		return refused(buf, err)
	}
	for d.PeekKind() != '}' {
		name, err := d.readName()
		if err != nil {
			return refused(buf, err)
		}
		var value jsontext.Value
		if string(name) == "params" && d.PeekKind() == '{' {
			// Read member by member, so that EachParam need not read
			// them again.
			value, nspans, err = d.readObject(buf, &spans)
		} else {
			value, err = d.ReadValue()
		}
		if err != nil {
			return refused(buf, err)
		}
		if i := wireIndex(name); i >= 0 {
			members[i] = value
		} else if caseErr == nil && foldsToWireName(name) {
			// encoding/json would let such a member replace the real one.
			caseErr = NewError(CodeInvalidRequest, "invalid request: member names are case-sensitive: "+quoteJSON(string(name)), nil)
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return refused(buf, err)
	}
	if err := d.atEOF(); err != nil {
		return refused(buf, err)
	}
	if caseErr != nil {
		return nil, caseErr
	}
	rawVersion, rawID, rawMethod := members[0], members[1], members[2]
	params, result, rawError := members[3], members[4], members[5]

	m := &Message{}
	idNull := false
	if rawID != nil {
		if string(rawID) == "null" {
			idNull = true
		} else if err := m.ID.set(rawID); err != nil {
			return m, NewError(CodeInvalidRequest, "invalid request: "+err.Error(), nil)
		}
	}
	if string(rawVersion) != `"2.0"` {
		if v, ok := StringValue(rawVersion); !ok || v != Version {
			return m, NewError(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`, nil)
		}
	}
	if rawMethod != nil {
		method, ok := StringValue(rawMethod)
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
			if k := params.Kind(); k != '{' && k != '[' {
				return m, NewError(CodeInvalidRequest, "invalid request: params must be an object or an array", nil)
			}
			m.Params = json.RawMessage(params)
			if params.Kind() == '{' && nspans > 0 {
				m.split, m.nsplit, m.nspans, m.spans = &m.Params[0], len(m.Params), uint8(nspans), spans
			}
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
		m.Result = json.RawMessage(result)
	case rawError != nil:
		var e Error
		if rawError.Kind() != '{' {
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

// lax reads JSON that may repeat names or hold invalid UTF-8, to tell why
// a message was refused.
var (
	laxNames = jsontext.AllowDuplicateNames(true)
	laxUTF8  = jsontext.AllowInvalidUTF8(true)
)

// refused returns the error for buf (the trimmed message), which Decode
// stopped reading with err. Input that is not JSON text is a parse error.
// Input that is, but repeats a member name (JSON allows repeated names;
// mcpkit does not accept them), is answered with the message's id when
// its one "id" member is valid: as invalid params when the repeated name
// is inside the params, as an invalid request otherwise.
func refused(buf []byte, err error) (*Message, error) {
	se, _ := syntaxError(err).(*SyntaxError)
	switch {
	case se == nil || !jsontext.Value(buf).IsValid(laxNames, laxUTF8):
		return nil, NewError(CodeParseError, "parse error: invalid JSON", nil)
	case !se.Duplicate || !jsontext.Value(buf).IsValid(laxNames):
		// JSON text is UTF-8 (RFC 8259): a string with invalid bytes is
		// refused, not read with replacement characters.
		return nil, NewError(CodeParseError, "parse error: invalid UTF-8", nil)
	}
	var m *Message
	if buf[0] == '{' {
		if id, ok := onlyID(buf); ok {
			m = &Message{ID: id}
		}
	}
	if strings.HasPrefix(se.Pointer, "/params/") {
		return m, NewError(CodeInvalidParams, "invalid params: "+se.Msg, nil)
	}
	return m, NewError(CodeInvalidRequest, "invalid request: "+se.Msg, nil)
}

// onlyID returns the id of obj, a JSON object that may repeat names, when
// it has exactly one "id" member and that member is a valid id.
func onlyID(obj []byte) (ID, bool) {
	d := newByteDecoder(obj, laxNames)
	defer d.release()
	var id ID
	ids := 0
	if _, err := d.ReadToken(); err != nil {
		return id, false
	}
	for d.PeekKind() != '}' {
		name, err := d.readName()
		if err != nil {
			return id, false
		}
		value, err := d.ReadValue()
		if err != nil {
			return id, false
		}
		if string(name) == "id" {
			ids++
			if id.set(value) != nil {
				return id, false
			}
		}
	}
	return id, ids == 1 && id.IsValid()
}

// wireNames are the members of a JSON-RPC message, in the order Decode
// keeps them.
var wireNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

func wireIndex(name []byte) int {
	for i, w := range wireNames {
		if string(name) == w {
			return i
		}
	}
	return -1
}

// foldsToWireName reports whether name is a JSON-RPC name in another case.
func foldsToWireName(name []byte) bool {
	for _, w := range wireNames {
		if len(name) == len(w) && bytes.EqualFold(name, []byte(w)) {
			return true
		}
	}
	return false
}

// trimSpace returns b without JSON white space around it.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

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

// ParamsWriter writes a params object member by member and keeps the place
// of each, as Decode does for the params it reads: a Message given the
// object with SetParams has EachParam go through the members without
// reading the text again. The writer vouches for what it writes: each
// value one JSON value valid under the policy of Unmarshal (a value of a
// decoded message, or one encoded by mcpkit) and no name twice. The zero
// value is ready; Reset reuses a buffer.
type ParamsWriter struct {
	buf   []byte
	n     int
	spans [maxSpans]span
}

// Reset starts a new object in buf's storage.
func (w *ParamsWriter) Reset(buf []byte) {
	w.buf, w.n = buf[:0], 0
}

// Add appends a member.
func (w *ParamsWriter) Add(name, value []byte) {
	if len(w.buf) == 0 {
		w.buf = append(w.buf, '{')
	} else {
		w.buf = append(w.buf, ',')
	}
	sp := span{nameStart: int32(len(w.buf)) + 1}
	plain := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, name...)
		w.buf = append(w.buf, '"')
	} else {
		w.buf, _ = jsontext.AppendQuote(w.buf, name)
		sp.escaped = bytes.IndexByte(w.buf[sp.nameStart:], '\\') >= 0
	}
	sp.nameEnd = int32(len(w.buf)) - 1
	w.buf = append(w.buf, ':')
	sp.valueStart = int32(len(w.buf))
	w.buf = append(w.buf, value...)
	sp.valueEnd = int32(len(w.buf))
	if w.n < maxSpans {
		w.spans[w.n] = sp
	}
	w.n++
}

// SetParams makes the object w wrote m's params. The object shares w's
// buffer; w must not be reused while m is.
func (m *Message) SetParams(w *ParamsWriter) {
	if len(w.buf) == 0 {
		w.buf = append(w.buf, '{')
	}
	w.buf = append(w.buf, '}')
	m.Params = w.buf
	m.split, m.nsplit, m.nspans = nil, 0, 0
	if w.n > 0 && w.n <= maxSpans {
		m.split, m.nsplit, m.nspans, m.spans = &m.Params[0], len(m.Params), uint8(w.n), w.spans
	}
}
