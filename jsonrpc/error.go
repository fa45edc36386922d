package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// The error codes JSON-RPC 2.0 defines.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object. It implements error, so handlers can
// return one and callers can inspect it with errors.As.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewError returns an Error with the given code and message; data, when not
// nil, is encoded as the error's data member.
func NewError(code int64, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		if raw, ok := data.(json.RawMessage); ok {
			e.Data = raw
		} else if b, err := json.Marshal(data); err == nil {
			e.Data = b
		}
	}
	return e
}

// Error returns the message with its code.
func (e *Error) Error() string {
	return "jsonrpc error " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
}

func (e *Error) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, e.Code, 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
	if len(e.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}')
}
