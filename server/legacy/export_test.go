package legacy

import (
	"context"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// QueueLen returns how many messages s's outbox holds in a MemoryStore
// (-1 for another store).
func QueueLen(s *Session) int {
	m, ok := s.a.store.(*MemoryStore)
	if !ok {
		return -1
	}
	return len(m.Outbox(s.id))
}

// LastQueued returns the newest message of s's outbox in a MemoryStore
// ("" for none).
func LastQueued(s *Session) string {
	m, _ := s.a.store.(*MemoryStore)
	if m == nil {
		return ""
	}
	out := m.Outbox(s.id)
	if len(out) == 0 {
		return ""
	}
	return string(out[len(out)-1])
}

// Subscribed reports whether s subscribed to uri.
func Subscribed(s *Session, uri string) bool { return s.subscribed(uri) }

// TestSession is a session with the calls a transport makes on its behalf.
type TestSession interface {
	transport.Session
	Handle(ctx context.Context, msg *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response
	HandleNotification(ctx context.Context, msg *jsonrpc.Message)
	HandleResponse(ctx context.Context, msg *jsonrpc.Message)
}

// serveAs serves req as a transport does and makes the response.
func serveAs(ctx context.Context, h transport.Handler, req *transport.Request) *jsonrpc.Response {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req.Cancel = cancel
	res, err := h.Serve(ctx, req)
	return transport.Respond(ctx, req.Message.ID, res, err)
}

// Handle serves a request of the session, held meanwhile as transports
// hold it while their client waits.
func (s *Session) Handle(ctx context.Context, msg *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
	defer s.Hold()()
	return serveAs(ctx, s.a, &transport.Request{Message: msg, Kind: transport.Classify(msg, s), Session: s, Notifier: n})
}

// HandleNotification passes a notification of the session.
func (s *Session) HandleNotification(ctx context.Context, msg *jsonrpc.Message) {
	s.a.Receive(ctx, msg, s)
}

// HandleResponse passes a response of the session's client.
func (s *Session) HandleResponse(ctx context.Context, msg *jsonrpc.Message) { s.a.Receive(ctx, msg, s) }

// Handle serves a request that belongs to no session.
func (a *Adapter) Handle(ctx context.Context, msg *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
	return serveAs(ctx, a, &transport.Request{Message: msg, Kind: transport.Classify(msg, nil), Notifier: n})
}

// Initialize serves initialize, returning the session it opened (nil when
// none) and the response.
func (a *Adapter) Initialize(ctx context.Context, msg *jsonrpc.Message) (TestSession, *jsonrpc.Response) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := a.Serve(ctx, &transport.Request{Message: msg, Kind: transport.KindInitialize, Cancel: cancel})
	resp := transport.Respond(ctx, msg.ID, res, err)
	o, ok := res.(*transport.Opened)
	if !ok {
		return nil, resp
	}
	return a.own(o.Session), resp
}

// InitializeErr serves initialize and returns its error.
func (a *Adapter) InitializeErr(ctx context.Context, msg *jsonrpc.Message) error {
	_, err := a.Serve(ctx, &transport.Request{Message: msg, Kind: transport.KindInitialize, Cancel: func() {}})
	return err
}
