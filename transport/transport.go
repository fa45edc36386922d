package transport

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// Request is one message a transport hands its Handler: a request (Serve)
// or, for middleware, a notification or client response (Receive).
type Request struct {
	// Message is the JSON-RPC message.
	Message *jsonrpc.Message
	// Kind is the message's era, which the transport decides once, with
	// Classify; nothing downstream decides it again.
	Kind Kind
	// Tracked reports that the transport itself finds the request for a
	// notifications/cancelled naming it and cancels it when its session
	// ends (stdio, whose connection is the session): a legacy session then
	// keeps no record of it.
	Tracked bool
	// Session is the legacy-era session of a KindSession message; nil
	// otherwise.
	Session Session
	// Notifier sends the messages that belong to the request ahead of its
	// response (progress, log messages, the legacy era's server-to-client
	// requests); nil when none can be sent.
	Notifier Notifier
	// Meta, when not nil, stands for the _meta of params that have none:
	// a legacy session's (its revision, the client's capabilities and
	// information, the log level), which the core copies instead of
	// reading them from params. Params with _meta are read as they are.
	Meta *protocol.RequestMeta
	// Cancel cancels the context the request is served with; transports
	// always set it for requests. A legacy session calls it on
	// notifications/cancelled and when it ends.
	Cancel context.CancelFunc
}

// Kind is what a message is to the eras, decided once by its transport
// with Classify.
type Kind uint8

const (
	// KindModern is a message of the modern era: served from itself alone.
	KindModern Kind = iota
	// KindInitialize is initialize of a legacy-era client: it opens a
	// session (Serve returns *Opened).
	KindInitialize
	// KindSession is a message of the legacy session it is classified
	// with.
	KindSession
)

// Classify decides the era of msg, which arrived on a connection or with
// a session id naming sess (nil when none): a message that carries modern
// per-request _meta is modern whatever else is there; otherwise initialize
// (with no session) opens a session, and anything else belongs to sess
// when there is one and is modern when there is not (the core then
// refuses it for its missing _meta). Transports call it once per message;
// nothing downstream decides again.
func Classify(msg *jsonrpc.Message, sess Session) Kind {
	if IsModern(msg) {
		return KindModern
	}
	if sess != nil {
		return KindSession
	}
	if msg.Method == protocol.MethodInitialize && msg.IsRequest() {
		return KindInitialize
	}
	return KindModern
}

// Opened is what Serve returns for initialize when it opened a session:
// the initialize result, to send, and the session, for the transport to
// serve the client's next messages in.
type Opened struct {
	protocol.Result
	Session Session
}

// Handler serves the MCP messages arriving on a transport. Every request of
// either era goes through Serve; everything else a handler offers is stated
// by its other methods, so a wrapper that embeds a Handler (see Use) keeps
// all of it. *server.Server is one.
type Handler interface {
	// Serve answers one request with a result or an error. The transport
	// encodes them and chooses the HTTP status of an error; it sends
	// nothing when the request's context was cancelled or the error is
	// ErrNoResponse.
	Serve(ctx context.Context, req *Request) (protocol.Result, error)
	// Receive takes a message of the client that is not a request: a
	// notification, or a response to a request the server sent (legacy
	// era). sess is the message's legacy session, or nil. Transports handle
	// the modern era's notifications/cancelled themselves.
	Receive(ctx context.Context, msg *jsonrpc.Message, sess Session)
	// ParamHeaders returns the parameters the named tool mirrors into
	// Mcp-Param-* headers (the x-mcp-header annotation), or nil; the HTTP
	// transport checks the headers against the body with them.
	ParamHeaders(tool string) []HeaderParam
	// Legacy returns the handler's legacy-era sessions, or nil when it
	// serves the modern era only. Initialize itself comes through Serve.
	Legacy() Legacy
}

// ErrNoSession is returned by Legacy.Session for an id that names no open
// session.
var ErrNoSession = errors.New("transport: no such session")

// ErrNoResponse is returned by Serve for a request that gets no response:
// a subscriptions/listen stream whose client went away or that the change
// feed ended.
var ErrNoResponse = errors.New("transport: no response")

// ServeFunc is the type of Handler.Serve.
type ServeFunc func(ctx context.Context, req *Request) (protocol.Result, error)

// Middleware wraps the handling of every message of both eras: requests
// (Serve), whose answer it sees and may replace, and notifications and
// client responses (Receive: req.Message.IsRequest() is false, and what
// the chain returns for them is ignored). req.Session tells the era;
// initialize returns *Opened.
//
// The request's principal is the transport's, set before any middleware
// runs (by the HTTP handler chain: auth/resource, or transport.WithPrincipal
// in an http.Handler): a transport finds a legacy session by its id and
// that principal (Legacy.Session) before the middleware sees the request,
// so a principal a middleware sets reaches handlers but does not change
// whose sessions a request may use.
type Middleware func(next ServeFunc) ServeFunc

// Use returns h with its messages handled through the middleware, the
// first outermost. Everything else h offers (legacy sessions, header
// parameters) is kept.
func Use(h Handler, middleware ...Middleware) Handler {
	serve := h.Serve
	receive := func(ctx context.Context, req *Request) (protocol.Result, error) {
		h.Receive(ctx, req.Message, req.Session)
		return nil, nil
	}
	for i := len(middleware) - 1; i >= 0; i-- {
		serve = middleware[i](serve)
		receive = middleware[i](receive)
	}
	return &wrapped{Handler: h, serve: serve, receive: receive}
}

type wrapped struct {
	Handler
	serve, receive ServeFunc
}

func (w *wrapped) Serve(ctx context.Context, req *Request) (protocol.Result, error) {
	return w.serve(ctx, req)
}

func (w *wrapped) Receive(ctx context.Context, msg *jsonrpc.Message, sess Session) {
	req := &Request{Message: msg}
	if sess != nil {
		req.Kind, req.Session = KindSession, sess
	}
	_, _ = w.receive(ctx, req)
}

// Notifier sends messages that belong to one request (progress, log
// messages, subscription notifications) ahead of its response.
type Notifier interface {
	// Notify sends one encoded JSON-RPC message. It fails once the request
	// is finished or its stream is gone.
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

// Legacy is the legacy era (revisions up to 2025-11-25) of a handler: the
// sessions initialize opened.
type Legacy interface {
	// Session returns the open session with the id for the request of
	// ctx. It fails with ErrNoSession when no session has the id (it never
	// existed, ended or expired), and with an error marked
	// protocol.ErrForbidden when the session belongs to a principal other
	// than the request's (HTTP 403: the session goes on for its owner).
	Session(ctx context.Context, id string) (Session, error)
	// Versions returns the legacy revisions served, newest first.
	Versions() []string
}

// Session is one legacy-era client's session.
type Session interface {
	// ID is the session id (the Mcp-Session-Id header on HTTP).
	ID() string
	// Version is the negotiated protocol revision.
	Version() string
	// Next blocks until the session has a message that belongs to no
	// request (a list change, a resource update), for the standalone stream
	// (the GET stream on HTTP). It fails when ctx ends or the session closes.
	Next(ctx context.Context) ([]byte, error)
	// Close ends the session and releases what it holds.
	Close()
	// Done is closed once the session has ended.
	Done() <-chan struct{}
	// Hold marks a client attached to the session — a connection that
	// waits for a response or for the standalone stream — until release is
	// called: a held session never expires for idleness. A request whose
	// client went away without coming back does not keep its session; the
	// idle timeout then ends it, cancelling the request.
	Hold() (release func())
	// Attachment returns the value a transport keeps with the session
	// (its event log, for instance), creating it with create on first use.
	// It is released with the session.
	Attachment(create func() any) any
}

type principalKey struct{}

// WithPrincipal returns a context carrying the authenticated principal, for
// authentication middleware in front of a transport. Legacy sessions, MRTR
// requestState and HTTP+SSE streams are bound to it.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFrom returns the principal set with WithPrincipal, or "".
func PrincipalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// Respond makes the JSON-RPC response to the request id from what Serve
// returned: nil when nothing must be sent (ctx cancelled, ErrNoResponse).
func Respond(ctx context.Context, id jsonrpc.ID, res protocol.Result, err error) *jsonrpc.Response {
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) || errors.Is(err, ErrNoResponse) {
			return nil
		}
		return &jsonrpc.Response{ID: id, Error: protocol.WireError(err)}
	}
	b, err := EncodeResult(res)
	if err != nil {
		return &jsonrpc.Response{ID: id, Error: protocol.InternalError("internal error: the result could not be encoded")}
	}
	return &jsonrpc.Response{ID: id, Result: b}
}

// AppendResponse appends to dst the response Respond makes, and reports
// whether there is one. A tool's result is encoded straight into dst.
func AppendResponse(ctx context.Context, dst []byte, id jsonrpc.ID, res protocol.Result, err error) ([]byte, bool) {
	if r, ok := res.(*protocol.CallToolResult); ok && r != nil && err == nil {
		// The response's head is AppendResult's without its closing brace.
		head := jsonrpc.AppendResult(dst, id, nil)
		if out, aerr := r.AppendJSON(head[:len(head)-1]); aerr == nil {
			return append(out, '}'), true
		}
	}
	resp := Respond(ctx, id, res, err)
	if resp == nil {
		return dst, false
	}
	return resp.Append(dst), true
}

// EncodeResult encodes a result; types that encode themselves by hand are
// not re-validated.
func EncodeResult(res protocol.Result) ([]byte, error) {
	if o, ok := res.(*Opened); ok {
		res = o.Result
	}
	if res == nil {
		return []byte("{}"), nil
	}
	if m, ok := res.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(res)
}

// IsModern reports whether a message carries the per-request _meta of a
// modern revision (2026-07-28 and later). A dual-era server serves such
// messages statelessly, whatever their method — initialize included, which
// the modern era does not define.
func IsModern(msg *jsonrpc.Message) bool {
	if len(msg.Params) == 0 || msg.Params[0] != '{' {
		return false
	}
	// The params of a decoded message were checked whole, so the first
	// _meta and version met are the only ones: the reading stops there
	// (whoever serves the message reads the rest).
	var version string
	_ = msg.EachParam(func(k []byte, meta jsontext.Value) error {
		if string(k) != "_meta" {
			return nil
		}
		version = protocol.MetaVersion(meta)
		return errStop
	})
	return protocol.IsModern(version)
}

// errStop ends a reading that has found what it looked for.
var errStop = errors.New("stop")
