package transport

import (
	"context"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
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

// LegacyHandler is implemented by handlers that also serve the legacy era
// (revisions up to 2025-11-25): initialize opens a session, and later
// requests of that client are served within it.
type LegacyHandler interface {
	Handler
	// Initialize answers an initialize request. It opens a session unless
	// the response is an error, in which case the session is nil.
	Initialize(ctx context.Context, msg *jsonrpc.Message) (Session, *jsonrpc.Response)
	// Session returns the open session with the id.
	Session(id string) (Session, bool)
	// Versions returns the legacy revisions served, newest first.
	Versions() []string
}

// Session is one legacy-era client's session.
type Session interface {
	// ID is the session id (the Mcp-Session-Id header on HTTP).
	ID() string
	// Version is the negotiated protocol revision.
	Version() string
	// Handle answers a request of the session. Requests the session sends
	// to the client (sampling, elicitation, roots) and notifications that
	// belong to the request go through n; the client's answers come back
	// through HandleResponse.
	Handle(ctx context.Context, msg *jsonrpc.Message, n Notifier) *jsonrpc.Response
	// HandleNotification receives a client notification of the session.
	HandleNotification(ctx context.Context, msg *jsonrpc.Message)
	// HandleResponse receives the client's response to a request the
	// session sent it.
	HandleResponse(ctx context.Context, msg *jsonrpc.Message)
	// Next blocks until the session has a message that belongs to no
	// request (a list change, a resource update), for the standalone stream
	// (the GET stream on HTTP). It fails when ctx ends or the session closes.
	Next(ctx context.Context) ([]byte, error)
	// Close ends the session and releases what it holds.
	Close()
	// Done is closed once the session has ended.
	Done() <-chan struct{}
	// Attachment returns the value a transport keeps with the session
	// (its event log, for instance), creating it with create on first use.
	// It is released with the session.
	Attachment(create func() any) any
}

// AsyncHandler is implemented by handlers that can serve a request without
// holding the caller's goroutine for its whole life: subscriptions/listen,
// which lasts as long as its client stays. HandleAsync calls done exactly
// once with the response (nil when none must be sent), before it returns or
// later from another goroutine. Until then notifications go to n, possibly
// from other goroutines (a change feed's publisher): n.Notify must not block.
type AsyncHandler interface {
	HandleAsync(ctx context.Context, msg *jsonrpc.Message, n Notifier, done func(*jsonrpc.Response))
}

// RequestCanceller is implemented by notifiers whose transport gave the
// request a context of its own: CancelRequest cancels that context. A
// handler that must be able to cancel the request itself (a legacy session,
// on notifications/cancelled or when it ends) uses it rather than deriving
// another cancellable context per request.
type RequestCanceller interface {
	CancelRequest()
}

// StreamCloser is implemented by notifiers whose stream a handler may close
// without ending the request: a legacy-era (2025-11-25) SSE response, which
// the client resumes with Last-Event-ID to receive the rest. Modern streams
// do not implement it, since closing them cancels the request.
type StreamCloser interface {
	CloseStream()
}

// IsModern reports whether a message carries the per-request _meta of a
// modern revision (2026-07-28 and later). A dual-era server serves such
// messages statelessly, whatever their method — initialize included, which
// the modern era does not define.
func IsModern(msg *jsonrpc.Message) bool {
	if len(msg.Params) == 0 || msg.Params[0] != '{' {
		return false
	}
	meta := jsonrpc.Member(msg.Params, "_meta")
	if len(meta) == 0 || meta[0] != '{' {
		return false
	}
	v, _ := jsonrpc.Unquote(jsonrpc.Member(meta, protocol.MetaProtocolVersion))
	return protocol.IsModern(v)
}
