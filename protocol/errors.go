package protocol

import (
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

// ResourceNotFound returns the -32602 error modern servers answer for an
// unknown resource URI.
func ResourceNotFound(uri string) *Error {
	return jsonrpc.NewError(CodeInvalidParams, MessageResourceNotFound, ResourceNotFoundData{URI: uri})
}
