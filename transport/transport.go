// Package transport holds the small interfaces that connect MCP transports
// (transport/stdio, transport/streamable) to whatever serves the messages,
// the way net/http connects a server to an http.Handler. A transport depends
// on these interfaces only, never on the server or client packages.
package transport

import (
	"context"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Handler serves MCP messages arriving on a transport. *server.Server is one.
type Handler interface {
	// Handle answers one request. Before returning it may send notifications
	// that belong to the request through n. It returns nil when no response
	// must be sent, as when ctx was cancelled.
	Handle(ctx context.Context, req *jsonrpc.Message, n Notifier) *jsonrpc.Response

	// HandleNotification receives a client notification. Transports handle
	// notifications/cancelled themselves and do not pass it on.
	HandleNotification(ctx context.Context, msg *jsonrpc.Message)
}

// Notifier sends messages that belong to one request (progress, log
// messages, subscription notifications) ahead of its response.
type Notifier interface {
	// Notify sends one encoded JSON-RPC notification. It fails once the
	// request is finished or its stream is gone.
	Notify(msg []byte) error
}

// NotifierFunc adapts a function to Notifier.
type NotifierFunc func(msg []byte) error

// Notify calls f(msg).
func (f NotifierFunc) Notify(msg []byte) error { return f(msg) }

// HeaderParam is a tool parameter that clients mirror into an
// Mcp-Param-{Name} HTTP header (the x-mcp-header schema annotation).
type HeaderParam struct {
	Name string   // the {Name} part of the header
	Path []string // property names from the argument object's root
	Type string   // "string", "integer" or "boolean"
}

// ParamHeaders is implemented by handlers whose tools mirror parameters into
// headers, so that the HTTP transport can check the headers against the body.
type ParamHeaders interface {
	// ParamHeaders returns the mirrored parameters of the named tool, or nil.
	ParamHeaders(tool string) []HeaderParam
}

// ResponseHandler is implemented by handlers that send requests of their own
// to the client (the legacy era's server-to-client requests) and so need
// the client's responses.
type ResponseHandler interface {
	HandleResponse(ctx context.Context, msg *jsonrpc.Message)
}
