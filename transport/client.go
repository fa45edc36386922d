package transport

import (
	"context"
	"errors"
	"strconv"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Call is one request a client sends, with what a transport needs beside
// the message itself.
type Call struct {
	// Message is the JSON-RPC request.
	Message *jsonrpc.Message
	// ProtocolVersion is the revision the request speaks; HTTP sends it in
	// MCP-Protocol-Version ("" sends no header, as for initialize).
	ProtocolVersion string
	// Headers are further HTTP headers, such as the Mcp-Param-* mirrors of
	// tool arguments; other transports ignore them.
	Headers map[string]string
	// Modern marks a request of a modern revision: HTTP adds the Mcp-Method
	// and Mcp-Name headers.
	Modern bool
}

// ClientConn is the client side of a connection to a server: the
// transports' clients (stdio.Command, streamable.Client) implement it and
// package client drives it.
type ClientConn interface {
	// Call sends a request and returns the server's response to it.
	// Messages the server sends for the request before its response
	// (progress, log messages, legacy server-to-client requests) are passed
	// to onMessage, in order, on the calling goroutine or the connection's.
	// Cancelling ctx abandons the request: HTTP closes its stream, stdio
	// sends notifications/cancelled.
	Call(ctx context.Context, c *Call, onMessage func(*jsonrpc.Message)) (*jsonrpc.Message, error)
	// Send sends a notification, or a response to a request of the server.
	Send(ctx context.Context, msg []byte, protocolVersion string) error
	// Inbound sets the function receiving messages that belong to no call:
	// notifications of subscription streams on stdio, and, in the legacy
	// era, the server's standalone messages and requests.
	Inbound(func(*jsonrpc.Message))
	// CarriesHeaders reports whether the transport mirrors tool
	// parameters into HTTP headers (Mcp-Param-*), so that the client must
	// honour x-mcp-header annotations; and whether a legacy cancellation
	// must be sent as a message of its own (HTTP) rather than being implied
	// by the stream's close.
	CarriesHeaders() bool
	// Close ends the connection.
	Close() error
}

// StatusError is returned by an HTTP Call answered with an error status
// and no JSON-RPC body, and by an initialize answered with an error status
// whatever its body (the status decides whether the client falls back to
// the HTTP+SSE transport).
type StatusError struct {
	Status int
	Body   string
	// RPC is the JSON-RPC error the body carried, or nil.
	RPC *jsonrpc.Error
}

func (e *StatusError) Error() string {
	if e.RPC != nil {
		return "HTTP " + strconv.Itoa(e.Status) + ": " + e.RPC.Error()
	}
	return "HTTP " + strconv.Itoa(e.Status) + ": " + e.Body
}

// Unwrap returns the JSON-RPC error, if any.
func (e *StatusError) Unwrap() error {
	if e.RPC == nil {
		return nil
	}
	return e.RPC
}

// ErrStreamBroken is returned by a Call whose response stream ended before
// the response and could not be resumed; the request may be sent again.
var ErrStreamBroken = errors.New("transport: response stream ended before the response")

// ErrSessionExpired is returned by a Call whose legacy session the server
// no longer knows (HTTP 404): the client initializes again.
var ErrSessionExpired = errors.New("transport: session expired")

// ErrClosed is returned by a closed connection.
var ErrClosed = errors.New("transport: connection closed")
