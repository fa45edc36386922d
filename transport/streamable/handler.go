package streamable

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/bufpool"
	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Options configure the HTTP handler. The zero value is usable.
type Options struct {
	// AllowedOrigins lists origins (scheme://host[:port]) whose browser
	// requests are accepted, in addition to loopback origins. "*" accepts
	// every origin (not recommended). The listed origins also get CORS:
	// preflights are answered and their pages may read the responses
	// (loopback origins only when listed). Without a list CORS is off.
	AllowedOrigins []string
	// CORSMaxAge is how long browsers may cache a preflight's answer; 0
	// means two hours, a negative value leaves it to the browser.
	CORSMaxAge time.Duration
	// AllowedHosts lists Host header values (host or host:port) accepted on
	// loopback listeners in addition to localhost, 127.0.0.1 and [::1].
	// Requests arriving on non-loopback listeners are not Host-checked.
	AllowedHosts []string
	// MaxBodyBytes limits a request body; 0 means 4 MiB.
	MaxBodyBytes int64
	// KeepAlive is the interval of SSE comment lines on a quiet stream; 0
	// means 15 seconds, a negative value disables them.
	KeepAlive time.Duration
	// WriteTimeout bounds each write to a client, so a client that stops
	// reading cannot hold a stream; 0 means 30 seconds. A JSON answer of
	// up to 16 KiB is written without one: it fits the socket's buffer.
	WriteTimeout time.Duration
	// ReadTimeout bounds reading a request body, so a client that sends it
	// slowly cannot hold a handler; 0 means 30 seconds.
	ReadTimeout time.Duration
	// RetryInterval is the reconnection delay legacy-era SSE streams
	// announce in their retry field; 0 means one second.
	RetryInterval time.Duration
	// Events keeps the events of legacy sessions' SSE streams for
	// resumption with Last-Event-ID; nil means NewMemoryEventStore, which
	// keeps them on this process. Replicas that share sessions share one.
	Events EventStore
	// Logger receives transport diagnostics, the panics of handlers
	// (answered with -32603) and, at Debug level, requests refused for
	// their headers; the default discards them.
	Logger *slog.Logger
}

// Handler is the Streamable HTTP endpoint. Create it with NewHandler.
type Handler struct {
	h      transport.Handler
	legacy transport.Legacy // nil when h serves the modern era only
	opts   Options
	guard  httpguard.Guard
	logger *slog.Logger
	bufs   sync.Pool

	events   EventStore          // legacy sessions' SSE events
	shutdown *httpguard.Shutdown // ends streams when an http.Server serving x shuts down
	runner   runner              // the goroutines legacy requests run on
}

// NewHandler returns an http.Handler serving h at whatever path it is
// mounted on.
func NewHandler(h transport.Handler, opts *Options) *Handler {
	x := &Handler{h: h, legacy: h.Legacy()}
	x.shutdown = httpguard.NewShutdown()
	if opts != nil {
		x.opts = *opts
	}
	if x.opts.MaxBodyBytes <= 0 {
		x.opts.MaxBodyBytes = 4 << 20
	}
	if x.opts.KeepAlive == 0 {
		x.opts.KeepAlive = 15 * time.Second
	}
	if x.opts.WriteTimeout <= 0 {
		x.opts.WriteTimeout = 30 * time.Second
	}
	if x.opts.ReadTimeout <= 0 {
		x.opts.ReadTimeout = 30 * time.Second
	}
	x.logger = x.opts.Logger
	if x.logger == nil {
		x.logger = slog.New(slog.DiscardHandler)
	}
	x.events = x.opts.Events
	if x.events == nil {
		x.events = NewMemoryEventStore()
	}
	x.guard = httpguard.NewGuard(x.opts.AllowedOrigins, x.opts.AllowedHosts, x.opts.CORSMaxAge)
	x.bufs.New = func() any { return new(bytes.Buffer) }
	x.runner.jobs = make(chan func())
	return x
}

// ServeHTTP implements http.Handler.
func (x *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if refusal, handled := x.guard.Check(w, r); handled {
		return
	} else if refusal != "" {
		httpguard.WriteError(w, http.StatusForbidden, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, refusal, nil))
		return
	}
	var sess transport.Session
	if sid := r.Header.Get(HeaderSessionID); sid != "" && x.legacy != nil {
		var ok bool
		if sess, ok = x.lookupSession(w, r, sid); !ok {
			return
		}
	}
	switch {
	case r.Method == http.MethodPost:
		x.servePost(w, r, sess)
	case sess != nil && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		x.serveSessionStream(w, r, sess)
	case sess != nil:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpguard.WriteError(w, http.StatusMethodNotAllowed, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Method Not Allowed", nil))
	default:
		w.Header().Set("Allow", http.MethodPost)
		httpguard.WriteError(w, http.StatusMethodNotAllowed, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Method Not Allowed: the MCP endpoint accepts POST only", nil))
	}
}

// servePost serves a POST: one message, or a batch of a 2025-03-26
// session. The message's era is decided here, once (transport.Classify),
// with the session its Mcp-Session-Id names, if any.
func (x *Handler) servePost(w http.ResponseWriter, r *http.Request, sess transport.Session) {
	accept, rc, buf, ok := x.readPost(w, r)
	if !ok {
		return
	}
	defer x.bufs.Put(buf)
	if sess != nil && jsonrpc.IsBatch(buf.Bytes()) {
		if !x.checkSessionVersion(w, r, sess) {
			return
		}
		if sess.Version() != protocol.Version2025_03_26 {
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: batches are not allowed in protocol version "+sess.Version(), nil))
			return
		}
		x.serveBatch(w, r, sess, buf.Bytes())
		return
	}
	msg, ok := decodeBody(w, buf.Bytes())
	if !ok {
		return
	}
	kind := transport.Classify(msg, sess)
	if kind == transport.KindSession && !x.checkSessionVersion(w, r, sess) {
		return
	}
	if !msg.IsRequest() {
		switch {
		case kind == transport.KindSession:
			x.h.Receive(r.Context(), msg, sess)
		case msg.IsResponse():
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: clients must not send responses", nil))
			return
		case msg.Method != protocol.NotificationCancelled:
			// A modern stream's cancellation is its closing.
			x.h.Receive(r.Context(), msg, nil)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch kind {
	case transport.KindInitialize:
		x.serveInitialize(w, r, msg)
	case transport.KindSession:
		x.serveLegacyRequest(w, r, rc, sess, msg, accept)
	default:
		if herr := x.checkHeaders(r.Header, msg); herr != nil {
			x.logger.Debug("streamable: request refused", "status", http.StatusBadRequest, "code", herr.Code,
				"reason", herr.Message, "method", msg.Method, "remote", r.RemoteAddr)
			httpguard.WriteError(w, http.StatusBadRequest, &msg.ID, herr)
			return
		}
		if msg.Method == protocol.MethodSubscriptionsListen && !accept.SSE {
			// A listen stream is an SSE stream; a client that cannot take
			// one would wait forever for notifications that cannot reach it.
			httpguard.WriteError(w, http.StatusNotAcceptable, &msg.ID, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Acceptable: subscriptions/listen answers with text/event-stream", nil))
			return
		}
		x.serve(w, r, rc, msg, accept)
	}
}

// readPost checks a POST's Content-Type and Accept and reads its body into a
// pooled buffer, which the caller returns to x.bufs; rc is w's controller,
// for the rest of the request. On failure it has answered and ok is false.
func (x *Handler) readPost(w http.ResponseWriter, r *http.Request) (accept httpguard.Acceptance, rc *http.ResponseController, buf *bytes.Buffer, ok bool) {
	if !httpguard.IsJSONContentType(r.Header.Get("Content-Type")) {
		httpguard.WriteError(w, http.StatusUnsupportedMediaType, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json", nil))
		return accept, nil, nil, false
	}
	accept = httpguard.Negotiate(r.Header.Values("Accept"))
	if !accept.JSON && !accept.SSE {
		httpguard.WriteError(w, http.StatusNotAcceptable, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Acceptable: accept application/json or text/event-stream", nil))
		return accept, nil, nil, false
	}
	rc = http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(x.opts.ReadTimeout))
	buf = x.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, x.opts.MaxBodyBytes))
	if err != nil {
		// The body did not arrive whole in time: the connection ends with
		// the answer. The lapsed deadline stays, so that net/http does not
		// wait on to drain the rest of a body that may never come.
		w.Header().Set("Connection", "close")
		x.bufs.Put(buf)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpguard.WriteError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "request body too large", nil))
			return accept, nil, nil, false
		}
		httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeParseError, "reading request body: "+err.Error(), nil))
		return accept, nil, nil, false
	}
	// Lift the deadline: net/http keeps reading the connection to notice a
	// client going away, and a lapsed deadline would end long streams.
	_ = rc.SetReadDeadline(time.Time{})
	return accept, rc, buf, true
}

// serve runs the request and writes its response: JSON unless notifications
// (or the client's preference) call for SSE.
func (x *Handler) serve(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, msg *jsonrpc.Message, accept httpguard.Acceptance) {
	// The request's own context: net/http cancels it when the client goes
	// away and when a write to the connection fails (a stream's write
	// deadline passing included), so the stream needs no cancel of its own.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if msg.Method == protocol.MethodSubscriptionsListen {
		// A listen stream lasts as long as its client stays: it ends when
		// the http.Server shuts down, so that Shutdown does not wait for it.
		defer context.AfterFunc(x.shutdown.Watch(r), cancel)()
	}
	st := &stream{ctx: ctx, w: w, rc: rc, sseAllowed: accept.SSE, writeTimeout: x.opts.WriteTimeout, keepAlive: x.opts.KeepAlive}
	if accept.PreferSSE || !accept.JSON {
		st.mu.Lock()
		err := st.startLocked()
		st.mu.Unlock()
		if err != nil {
			return
		}
	}
	res, err := x.serveRecovered(ctx, &transport.Request{Message: msg, Notifier: st, Cancel: cancel})
	st.challenge = challenge(ctx, err)
	// The answer is encoded into a pooled buffer, which finish writes
	// (or copies into an event) before it returns.
	bp := bufpool.Get()
	defer bufpool.Put(bp)
	var body []byte // nil: no answer
	if b, ok := transport.AppendResponse(ctx, (*bp)[:0], msg.ID, res, err); ok {
		body, *bp = b, b
	}
	st.finish(body, Status(err))
}

// Status is the HTTP status of a modern-era answer with the error err
// (200 when err is nil): the one table of them. Errors not named here are
// answered with 200, the JSON-RPC error in the body. Legacy-era session
// requests are answered with 200 too, but for the 403 refusals of
// authorization (see sessionStatus). A 403 of an
// *protocol.InsufficientScopeError carries the Challenge.
func Status(err error) int {
	if err == nil {
		return http.StatusOK
	}
	switch {
	case errors.Is(err, protocol.ErrInvalidMeta):
		return http.StatusBadRequest
	case errors.Is(err, protocol.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, protocol.ErrInsufficientScope), errors.Is(err, protocol.ErrForbidden):
		return http.StatusForbidden
	}
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		return http.StatusOK
	}
	switch e.Code {
	case protocol.CodeMethodNotFound:
		return http.StatusNotFound
	case protocol.CodeHeaderMismatch, protocol.CodeMissingRequiredClientCapability,
		protocol.CodeUnsupportedProtocolVersion, protocol.CodeParseError, protocol.CodeInvalidRequest:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// sessionStatus is the HTTP status of a legacy-era session request's
// answer with the error err: 200, the error in the body, as the legacy
// revisions have it, except the refusals of authorization, which Status
// answers with 403 (2025-11-25 defines the insufficient_scope challenge
// too).
func sessionStatus(err error) int {
	if st := Status(err); st == http.StatusForbidden {
		return st
	}
	return http.StatusOK
}

// Challenge returns the WWW-Authenticate value answered with err: for an
// *protocol.InsufficientScopeError, a Bearer challenge with
// error="insufficient_scope" and the scopes needed (RFC 6750, section
// 3.1); "" otherwise. The handler names the resource metadata first when
// the request's context has it (WithResourceMetadata).
func Challenge(err error) string {
	var ise *protocol.InsufficientScopeError
	if err == nil || !errors.As(err, &ise) {
		return ""
	}
	var b strings.Builder
	b.WriteString(`Bearer error="insufficient_scope"`)
	scopes := make([]string, 0, len(ise.Scopes))
	for _, sc := range ise.Scopes {
		if validScopeToken(sc) {
			scopes = append(scopes, sc)
		}
	}
	if len(scopes) > 0 {
		b.WriteString(`, scope="`)
		b.WriteString(strings.Join(scopes, " "))
		b.WriteByte('"')
	}
	return b.String()
}

type resourceMetadataKey struct{}

// WithResourceMetadata returns ctx carrying the URL of the protected
// resource metadata (RFC 9728) of the endpoint, for the authentication
// middleware in front of the handler (package auth/resource sets it). The
// insufficient_scope challenge of a refusal of the core then names it
// first, as resource_metadata="url", as the middleware's own challenges do.
func WithResourceMetadata(ctx context.Context, url string) context.Context {
	return context.WithValue(ctx, resourceMetadataKey{}, url)
}

// ResourceMetadata returns the URL WithResourceMetadata put on ctx, or "".
func ResourceMetadata(ctx context.Context) string {
	u, _ := ctx.Value(resourceMetadataKey{}).(string)
	return u
}

// challenge is Challenge(err) naming the resource metadata of ctx, if any,
// first.
func challenge(ctx context.Context, err error) string {
	c := Challenge(err)
	if c == "" {
		return ""
	}
	u := strings.Map(func(r rune) rune {
		// The characters of a quoted auth-param value (RFC 6750, section 3).
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, ResourceMetadata(ctx))
	if u == "" {
		return c
	}
	return `Bearer resource_metadata="` + u + `", ` + strings.TrimPrefix(c, "Bearer ")
}

// validScopeToken reports whether sc is a scope-token of RFC 6749 (section
// 3.3): printable ASCII but space, '"' and '\', so it needs no quoting.
func validScopeToken(sc string) bool {
	if sc == "" {
		return false
	}
	for i := 0; i < len(sc); i++ {
		c := sc[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// decodeBody decodes a POST body's one message; a malformed one is answered
// with 400 and the JSON-RPC error, with the id when it could be read.
func decodeBody(w http.ResponseWriter, body []byte) (*jsonrpc.Message, bool) {
	msg, err := jsonrpc.Decode(body)
	if err != nil {
		var id jsonrpc.ID
		if msg != nil {
			id = msg.ID
		}
		httpguard.WriteError(w, http.StatusBadRequest, &id, decodeError(err))
		return nil, false
	}
	return msg, true
}

// serveRecovered is x.h.Serve, with a panic of the handler (or of
// middleware) answered as an internal error, without its details, and
// logged: a request's fault never stops the server.
func (x *Handler) serveRecovered(ctx context.Context, req *transport.Request) (res protocol.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			x.logger.Error("streamable: panic serving a request", "method", req.Message.Method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, errPanic
		}
	}()
	return x.h.Serve(ctx, req)
}

// errPanic answers a request whose handler panicked.
var errPanic = jsonrpc.NewError(protocol.CodeInternalError, "internal error", nil)

// decodeError is the JSON-RPC error of a message jsonrpc.Decode refused.
func decodeError(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e
	}
	return jsonrpc.NewError(protocol.CodeParseError, "parse error: "+err.Error(), nil)
}
