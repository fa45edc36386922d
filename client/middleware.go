package client

import (
	"context"
	"encoding/json"
	"runtime/debug"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// Call is one logical request of the application: every built-in method
// and Session.Call make one, and it covers all the request's input rounds.
// A middleware may change its members before passing it on.
type Call struct {
	// Method is the request's method.
	Method string
	// Params are the encoded params: a JSON object without _meta, or nil
	// for none.
	Params json.RawMessage
	// Meta holds the members added to the _meta of every round of the
	// request, beside those the client sets itself (see CallOptions.Meta).
	// It is the call's own copy, never nil: a middleware adds to it (trace
	// context, an extension's members) without touching the caller's.
	Meta map[string]json.RawMessage
	// Options are the call's options (a copy of the caller's, never nil).
	// Their Meta is not read: Meta above is.
	Options *CallOptions

	session *Session
}

// Session returns the session the call is made on (its era, transport and
// protocol version), for middleware that describes calls, such as tracing,
// or needs the session beyond next (to answer input requests with
// Session.Answer, for instance); nil for a Call a middleware made itself.
func (c *Call) Session() *Session { return c.session }

// CallFunc performs a Call and returns its raw result. The innermost one,
// the client's, sends the request, answers its input_required rounds, and
// returns the result of any other resultType as it came: complete, or one
// an extension defines (a middleware may turn it into a complete result,
// the way a task is polled to its end). After the middleware, a result
// whose resultType is neither complete nor absent fails the call with
// ErrUnknownResultType. A result the cache holds comes back without a
// request.
type CallFunc func(ctx context.Context, c *Call) (json.RawMessage, error)

// Incoming is a message the server sent that is not a response: a
// notification (progress, log messages, list changes, resource updates,
// subscription acknowledgements, elicitation completions), or a request
// for input (elicitation, sampling, roots, ping), whether a legacy server
// sent it as a request or a modern one listed it in an input_required
// result.
type Incoming struct {
	// Method is the message's method.
	Method string
	// Params are its params as received (nil for none).
	Params json.RawMessage
	// Request tells a request, which expects an answer, from a
	// notification.
	Request bool

	// Where the message was received, for the client's own handling:
	// a middleware passes on the Incoming it was given (changing its
	// members if it wishes); one it makes afresh is handled as a message
	// of the session, outside any request.
	from       inboundOrigin
	onProgress func(*protocol.ProgressParams)
	sub        *Subscription
}

// inboundOrigin is where an incoming message arrived.
type inboundOrigin uint8

const (
	fromSession inboundOrigin = iota // outside any request
	fromCall                         // on a call's stream, before its response
	fromListen                       // on a subscriptions/listen stream
)

// IncomingFunc handles an Incoming message. For a request it returns the
// result to answer with (encoded), or an error (a *jsonrpc.Error is sent as
// it is, any other as an internal error; in an input_required round it
// fails the call). For a notification the result is ignored: the client's
// own handling (Options.OnLog, CallOptions.OnProgress, subscriptions, the
// cache) happens in the innermost IncomingFunc, so a middleware that does
// not call next drops the notification, or answers the request itself.
type IncomingFunc func(ctx context.Context, m *Incoming) (json.RawMessage, error)

// Middleware wraps what a session sends and what it receives, the way
// transport.Middleware wraps what a server serves. Either field may be
// nil. Options.Middleware lists them, the first outermost; each session
// builds its chains once, when it is made, so the wrappers are called once
// per session. Functions they return run concurrently, for concurrent
// calls and for messages arriving on different streams.
type Middleware struct {
	// Call wraps every call: the built-in methods and Session.Call, each
	// with all its input rounds inside it. The connection's handshake
	// (server/discover probe, initialize) and subscriptions/listen streams
	// are not calls.
	Call func(next CallFunc) CallFunc
	// Incoming wraps the handling of every message the server sends that
	// is not a response.
	Incoming func(next IncomingFunc) IncomingFunc
}

// buildChains wraps the session's innermost functions in the client's
// middleware. With none, the chains stay nil and the session calls its
// own functions directly.
func (s *Session) buildChains() {
	var call CallFunc
	var in IncomingFunc
	mw := s.c.opts.Middleware
	for i := len(mw) - 1; i >= 0; i-- {
		if mw[i].Call != nil {
			if call == nil {
				call = s.do
			}
			call = mw[i].Call(complete(s, call))
		}
		if mw[i].Incoming != nil {
			if in == nil {
				in = s.dispatch
			}
			in = mw[i].Incoming(in)
		}
	}
	s.callChain, s.inChain = call, in
}

// complete returns next for a Call a middleware may have made itself
// (for an extension's own requests): its Meta and Options are made when
// nil, and its session set, so that the middleware further in can count
// on them.
func complete(s *Session, next CallFunc) CallFunc {
	return func(ctx context.Context, c *Call) (json.RawMessage, error) {
		if c.session == nil {
			c.session = s
		}
		if c.Meta == nil {
			c.Meta = make(map[string]json.RawMessage)
		}
		if c.Options == nil {
			c.Options = &CallOptions{}
		}
		return next(ctx, c)
	}
}

// receiveNotification handles a notification through the middleware.
// (Each branch has its own copy of m, so that only the one handed to the
// chain goes to the heap.)
func (s *Session) receiveNotification(ctx context.Context, m Incoming) {
	defer s.recovered("handling "+m.Method, nil)
	if s.inChain == nil {
		direct := m
		_, _ = s.dispatch(ctx, &direct)
		return
	}
	wrapped := m
	_, _ = s.inChain(ctx, &wrapped)
}

// receiveRequest answers a request of the server (a legacy request or an
// MRTR input request) through the middleware.
func (s *Session) receiveRequest(ctx context.Context, method string, params json.RawMessage) (res json.RawMessage, err error) {
	defer s.recovered("answering "+method, &err)
	if s.inChain == nil {
		return s.handleInput(ctx, method, params)
	}
	return s.inChain(ctx, &Incoming{Method: method, Params: params, Request: true})
}

// Answer answers a request for input (elicitation/create,
// sampling/createMessage, roots/list, ping) with the application's
// handlers (Options.Elicitation, Sampling, Roots), through the Incoming
// middleware, as for an input_required round. An extension uses it for
// input requests that reach it by other means: the Tasks extension's
// inputRequests of a task, answered with tasks/update.
func (s *Session) Answer(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return s.receiveRequest(ctx, method, params)
}

// dispatch is the innermost IncomingFunc: the client's own handling.
func (s *Session) dispatch(ctx context.Context, m *Incoming) (json.RawMessage, error) {
	if m.Request {
		return s.handleInput(ctx, m.Method, m.Params)
	}
	msg := jsonrpc.Message{Method: m.Method, Params: m.Params}
	switch m.from {
	case fromCall:
		switch m.Method {
		case protocol.NotificationProgress:
			if m.onProgress != nil {
				var p protocol.ProgressParams
				if jsonrpc.Unmarshal(m.Params, &p) == nil {
					m.onProgress(&p)
				}
			}
		case protocol.NotificationMessage:
			s.log(m.Params)
		default:
			s.notification(&msg)
		}
	case fromListen:
		if m.sub != nil {
			s.invalidate(&msg)
			m.sub.deliver(&msg)
		}
	default:
		s.notification(&msg)
	}
	return nil, nil
}

// recovered, deferred, turns a panic of an application's handler or
// middleware into a logged error (*err, when err is not nil: the server
// is answered -32603), so that it ends neither the session nor the
// process.
func (s *Session) recovered(what string, err *error) {
	p := recover()
	if p == nil {
		return
	}
	s.c.logger.Error("client: panic "+what, "panic", p, "stack", string(debug.Stack()))
	if err != nil {
		*err = errHandlerPanic
	}
}

// errHandlerPanic answers a server request whose handler panicked.
var errHandlerPanic = jsonrpc.NewError(protocol.CodeInternalError, "internal error", nil)
