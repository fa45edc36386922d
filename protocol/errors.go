package protocol

import (
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Error is a JSON-RPC error as MCP uses it. Handlers return one (or wrap one)
// to answer with a protocol error instead of a result.
type Error = jsonrpc.Error

// Error codes. The JSON-RPC codes are repeated here so MCP code needs one
// table; the -32020 to -32022 codes are MCP's own.
const (
	CodeParseError     = jsonrpc.CodeParseError
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc.CodeInvalidParams
	CodeInternalError  = jsonrpc.CodeInternalError

	// CodeHeaderMismatch: HTTP headers missing, malformed or not matching the body.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a capability
	// the client did not declare.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the requested revision is not served.
	CodeUnsupportedProtocolVersion = -32022

	// CodeResourceNotFoundLegacy is the resource-not-found code of revisions
	// up to 2025-11-25; modern servers answer CodeInvalidParams instead.
	CodeResourceNotFoundLegacy = -32002
	// CodeURLElicitationRequired is the 2025-11-25 URL elicitation code.
	CodeURLElicitationRequired = -32042
)

// InvalidParams returns a -32602 error with the message.
func InvalidParams(message string) *Error {
	return jsonrpc.NewError(CodeInvalidParams, message, nil)
}

// MethodNotFound returns a -32601 error naming the method.
func MethodNotFound(method string) *Error {
	return jsonrpc.NewError(CodeMethodNotFound, "method not found: "+method, nil)
}

// InternalError returns a -32603 error with the message.
func InternalError(message string) *Error {
	return jsonrpc.NewError(CodeInternalError, message, nil)
}

// HeaderMismatch returns a -32020 error with the message.
func HeaderMismatch(message string) *Error {
	return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: "+message, nil)
}

// UnsupportedVersionData is the data of an UnsupportedProtocolVersion error.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// UnsupportedVersion returns a -32022 error listing the supported revisions.
func UnsupportedVersion(requested string, supported []string) *Error {
	return jsonrpc.NewError(CodeUnsupportedProtocolVersion, "Unsupported protocol version",
		UnsupportedVersionData{Supported: supported, Requested: requested})
}

// MissingCapabilityData is the data of a MissingRequiredClientCapability error.
type MissingCapabilityData struct {
	RequiredCapabilities ClientCapabilities `json:"requiredCapabilities"`
}

// MissingCapability returns a -32021 error naming the capabilities required.
func MissingCapability(required ClientCapabilities) *Error {
	return jsonrpc.NewError(CodeMissingRequiredClientCapability, "Missing required client capability",
		MissingCapabilityData{RequiredCapabilities: required})
}

// ResourceNotFoundData is the data of a resource-not-found error.
type ResourceNotFoundData struct {
	URI string `json:"uri"`
}

// MessageResourceNotFound is the message of resource-not-found errors.
const MessageResourceNotFound = "Resource not found"

// ResourceNotFoundError is the error of an unknown resource URI. On the
// wire of revision 2026-07-28 it is -32602 with ResourceNotFoundData;
// revisions up to 2025-11-25 use CodeResourceNotFoundLegacy, which the
// legacy adapter chooses from the type, not from the message.
type ResourceNotFoundError struct {
	URI  string
	wire *Error
}

// Error returns the wire error's text.
func (e *ResourceNotFoundError) Error() string { return e.Wire().Error() }

// Unwrap returns the modern wire error, so errors.As finds an *Error.
func (e *ResourceNotFoundError) Unwrap() error { return e.Wire() }

// Wire returns the -32602 error modern servers answer.
func (e *ResourceNotFoundError) Wire() *Error {
	if e.wire == nil {
		e.wire = jsonrpc.NewError(CodeInvalidParams, MessageResourceNotFound, ResourceNotFoundData{URI: e.URI})
	}
	return e.wire
}

// ResourceNotFound returns the error of an unknown resource URI.
func ResourceNotFound(uri string) *ResourceNotFoundError {
	e := &ResourceNotFoundError{URI: uri}
	e.Wire()
	return e
}

// Conditions a transport may answer differently from other errors of the
// same JSON-RPC code (over HTTP, with another status). A handler marks an
// error with one through Mark; transports test for it with errors.Is.
var (
	// ErrInvalidMeta: the request's per-request _meta is missing or
	// malformed (HTTP 400).
	ErrInvalidMeta = errors.New("invalid request _meta")
	// ErrUnavailable: no room for the request now (too many streams or
	// sessions); the client may try again later (HTTP 503, Retry-After).
	ErrUnavailable = errors.New("temporarily unavailable")
	// ErrInsufficientScope: the caller's token lacks scopes the request
	// needs (HTTP 403 with a Bearer insufficient_scope challenge). The
	// error is an *InsufficientScopeError, which names the scopes.
	ErrInsufficientScope = errors.New("insufficient scope")
	// ErrForbidden: the caller may not make this request whatever its
	// scopes, e.g. on a legacy session another principal opened (HTTP 403).
	ErrForbidden = errors.New("forbidden")
)

// MessageInsufficientScope is the message of insufficient-scope errors.
const MessageInsufficientScope = "Insufficient scope"

// InsufficientScopeData is the data of an insufficient-scope error.
type InsufficientScopeData struct {
	// Scopes are the scopes the request needs (all of them, not only the
	// missing ones).
	Scopes []string `json:"scopes"`
}

// InsufficientScopeError refuses a request whose caller was not granted
// every scope it needs. The 2026-07-28 authorization spec answers it at
// the HTTP level only (403, WWW-Authenticate: Bearer
// error="insufficient_scope", scope="..."); it defines no JSON-RPC code,
// so the body carries -32600 (Invalid Request) with InsufficientScopeData.
// It matches ErrInsufficientScope with errors.Is, and errors.As finds its
// wire *Error.
type InsufficientScopeError struct {
	Scopes []string
	wire   *Error
}

// InsufficientScope returns the error of a request that needs scopes.
func InsufficientScope(scopes ...string) *InsufficientScopeError {
	scopes = append([]string(nil), scopes...)
	return &InsufficientScopeError{Scopes: scopes,
		wire: jsonrpc.NewError(CodeInvalidRequest, MessageInsufficientScope, InsufficientScopeData{Scopes: scopes})}
}

// Error returns the wire error's text.
func (e *InsufficientScopeError) Error() string { return e.Wire().Error() }

// Wire returns the JSON-RPC error answered.
func (e *InsufficientScopeError) Wire() *Error {
	if e.wire == nil {
		e.wire = jsonrpc.NewError(CodeInvalidRequest, MessageInsufficientScope, InsufficientScopeData{Scopes: e.Scopes})
	}
	return e.wire
}

// Unwrap returns the wire error and ErrInsufficientScope, as Mark does.
func (e *InsufficientScopeError) Unwrap() []error {
	return []error{e.Wire(), ErrInsufficientScope}
}

// Mark returns an error that is e on the wire and matches cond with
// errors.Is.
func Mark(e *Error, cond error) error { return &marked{wire: e, cond: cond} }

type marked struct {
	wire *Error
	cond error
}

func (m *marked) Error() string   { return m.wire.Error() }
func (m *marked) Unwrap() []error { return []error{m.wire, m.cond} }

// WireError returns the JSON-RPC error err stands for: the *Error it is or
// wraps, or an internal error with its text.
func WireError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return InternalError(err.Error())
}
