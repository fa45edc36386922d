package server

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Request is what a handler knows about the request it serves: its id, its
// _meta (protocol version, client capabilities, client info) and the
// principal, with the means to report progress, send log messages and, on
// tools/call, prompts/get and resources/read, ask the client for input.
type Request struct {
	// ID is the JSON-RPC id of the request.
	ID jsonrpc.ID
	// Method is the request's method.
	Method string
	// Meta is the request's _meta; never nil once the request is served.
	Meta *protocol.RequestMeta
	// Principal identifies the authenticated caller, as set on the context
	// with WithPrincipal; "" when unknown.
	Principal string

	server *Server
	params json.RawMessage
	raw    rawParams
	out    *requestNotifier
	input  *inputState // nil where MRTR is not allowed

	// session is the legacy session the request belongs to (rewritten
	// into the modern form by the legacy adapter); nil in the modern era.
	session transport.Session

	granted []string // the caller's scopes (WithScopes), read-only
	authz   bool     // scopes were set: authorization is in force

	// Storage for the pointers above, so that a request is one allocation.
	metaMem  protocol.RequestMeta
	outMem   requestNotifier
	inputMem inputState
	callMem  CallRequest // a tools/call's
}

// ClientCapabilities returns the capabilities the client declared on this
// request.
func (r *Request) ClientCapabilities() *protocol.ClientCapabilities { return r.Meta.ClientCapabilities }

// Legacy reports whether the request comes from a legacy-era session (a
// handshake revision, rewritten into the modern form by server/legacy):
// its _meta then stands for the session's, and a result reaches the
// client in that revision's shape, without resultType. An extension whose
// results exist only in the modern era (the Tasks extension's tasks)
// serves them to modern requests only.
func (r *Request) Legacy() bool { return r.session != nil }

// SessionID returns the id of the legacy session the request belongs to,
// or "" in the modern era. An extension keeps it to reach the session's
// client later (Server.QueueLegacy).
func (r *Request) SessionID() string {
	if r.session == nil {
		return ""
	}
	return r.session.ID()
}

// WithPrincipal returns a context carrying the authenticated principal, for
// authentication middleware in front of the transport. MRTR requestState is
// bound to it. It is transport.WithPrincipal.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return transport.WithPrincipal(ctx, principal)
}

// PrincipalFrom returns the principal set with WithPrincipal, or "".
func PrincipalFrom(ctx context.Context) string { return transport.PrincipalFrom(ctx) }

func (s *Server) newRequest(ctx context.Context, req *transport.Request) (*Request, error) {
	msg, n := req.Message, req.Notifier
	r := &Request{ID: msg.ID, Method: msg.Method, server: s, params: msg.Params, Principal: PrincipalFrom(ctx), session: req.Session}
	r.granted, r.authz = grantedScopes(ctx)
	if len(msg.Params) > 0 {
		if firstByte(msg.Params) != '{' {
			return nil, invalidMeta("params must be an object")
		}
		raw, err := scanParams(msg)
		if err != nil {
			return nil, err
		}
		r.raw = raw
	}
	rawMeta := r.raw.meta
	meta := &r.metaMem
	switch {
	case rawMeta == nil && req.Meta != nil:
		req.Meta.CopyTo(meta) // a legacy session's, given as a value
	case rawMeta == nil:
		return nil, invalidMeta("missing required _meta (" + protocol.MetaProtocolVersion + ", " + protocol.MetaClientCapabilities + ")")
	default:
		if err := meta.UnmarshalJSON(rawMeta); err != nil {
			return nil, invalidMeta("malformed _meta: " + err.Error())
		}
	}
	if meta.ProtocolVersion == "" {
		return nil, invalidMeta("missing required _meta field " + protocol.MetaProtocolVersion)
	}
	if !s.supports(meta.ProtocolVersion) {
		return nil, protocol.UnsupportedVersion(meta.ProtocolVersion, s.versions)
	}
	if meta.ClientCapabilities == nil {
		return nil, invalidMeta("missing required _meta field " + protocol.MetaClientCapabilities)
	}
	if meta.LogLevel != "" && meta.LogLevel.Severity() < 0 {
		return nil, protocol.InvalidParams("invalid log level " + clip(string(meta.LogLevel)))
	}
	r.Meta = meta
	r.outMem.n = n
	r.out = &r.outMem
	return r, nil
}

func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

// finish stops the request's notifications: nothing more is sent for it.
func (r *Request) finish() { r.out.close() }

// DecodeParams decodes the request's params (its _meta included, which v
// may leave out) into v with the one reading policy for peer input
// (jsonrpc.Unmarshal: exact member names, no repeated member); a failure
// is an invalid-params error (-32602) to return as it is.
func (r *Request) DecodeParams(v any) error {
	if len(r.params) == 0 {
		return nil
	}
	if err := jsonrpc.Unmarshal(r.params, v); err != nil {
		return protocol.InvalidParams("invalid params: " + err.Error())
	}
	return nil
}

// ErrRequestFinished is returned by notification methods once the request
// has been answered or cancelled.
var ErrRequestFinished = errors.New("server: request finished")

type requestNotifier struct {
	mu           sync.Mutex
	n            transport.Notifier
	done         bool
	lastProgress float64
	sentProgress bool
}

func (o *requestNotifier) send(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done || o.n == nil {
		return ErrRequestFinished
	}
	return o.n.Notify(msg)
}

func (o *requestNotifier) close() {
	o.mu.Lock()
	o.done = true
	o.mu.Unlock()
}

func (r *Request) notify(method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return r.out.send(jsonrpc.AppendNotification(nil, method, b))
}

// Progress sends a notifications/progress for this request, if the client
// asked for progress with a progressToken; otherwise it does nothing.
// progress must increase from one call to the next; total <= 0 means
// unknown.
func (r *Request) Progress(progress, total float64, message string) error {
	if r.Meta.ProgressToken == nil {
		return nil
	}
	if math.IsNaN(progress) || math.IsInf(progress, 0) {
		return errors.New("server: progress must be a finite number")
	}
	r.out.mu.Lock()
	if r.out.sentProgress && progress <= r.out.lastProgress {
		r.out.mu.Unlock()
		return errors.New("server: progress must increase")
	}
	r.out.sentProgress, r.out.lastProgress = true, progress
	r.out.mu.Unlock()
	p := protocol.ProgressParams{ProgressToken: *r.Meta.ProgressToken, Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	return r.notify(protocol.NotificationProgress, p)
}

// Log sends a notifications/message for this request if the client set a
// log level on it and level is at or above that level; otherwise it does
// nothing.
func (r *Request) Log(level protocol.LoggingLevel, logger string, data any) error {
	want := r.Meta.LogLevel
	if want == "" || level.Severity() < want.Severity() {
		return nil
	}
	return r.notify(protocol.NotificationMessage, protocol.LoggingMessageParams{Level: level, Logger: logger, Data: data})
}
