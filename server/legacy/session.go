package legacy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Session is one legacy client's session: the negotiated version, the
// client's identity and capabilities, its log level and subscriptions, the
// requests the server sent it that await answers, and the queue of
// messages for its standalone stream.
type Session struct {
	a       *Adapter
	id      string
	version string
	rev     revision
	caps    *protocol.ClientCapabilities
	info    *protocol.Implementation
	// principal is the caller that opened the session (Options.Principal
	// at initialize); requests from others are refused.
	principal string

	lastUsed atomic.Int64 // unix nanoseconds
	used     atomic.Bool  // a request came after initialize

	mu          sync.Mutex
	initialized bool
	logLevel    protocol.LoggingLevel
	subs        map[string]bool
	inflight    map[jsonrpc.ID]inflight
	pending     map[jsonrpc.ID]chan *jsonrpc.Message
	queue       [][]byte
	wake        chan struct{} // closed and replaced when the queue grows
	closed      bool
	done        chan struct{}
	nextID      atomic.Int64
	attachment  any
	readers     int // calls of Next waiting: the standalone stream is attached
	holds       int // clients attached (Hold)

	metaOnce  sync.Once
	metaCache []byte

	// elicitations are the elicitationIds of the URL elicitations the
	// session was sent, oldest first; Adapter.elicitMu guards them.
	elicitations []string
}

// Done is closed once the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// Attachment returns the transport's value kept with the session, creating
// it on first use.
func (s *Session) Attachment(create func() any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attachment == nil {
		s.attachment = create()
	}
	return s.attachment
}

var _ transport.Session = (*Session)(nil)

func (a *Adapter) newSession(version string, caps *protocol.ClientCapabilities, info *protocol.Implementation) *Session {
	s := &Session{
		a: a, id: newSessionID(), version: version, rev: revisionOf(version), caps: caps, info: info,
		subs: map[string]bool{}, inflight: map[jsonrpc.ID]inflight{},
		pending: map[jsonrpc.ID]chan *jsonrpc.Message{},
		wake:    make(chan struct{}), done: make(chan struct{}),
	}
	s.touch()
	return s
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Version returns the negotiated protocol revision.
func (s *Session) Version() string { return s.version }

// ClientCapabilities returns the capabilities the client declared in
// initialize.
func (s *Session) ClientCapabilities() *protocol.ClientCapabilities { return s.caps }

func (s *Session) touch() { s.lastUsed.Store(time.Now().UnixNano()) }

func (s *Session) expired(now time.Time) bool {
	return !s.busy() && now.Sub(time.Unix(0, s.lastUsed.Load())) > s.a.opts.IdleTimeout
}

// errSessionClosed answers a request of a session that has ended.
var errSessionClosed = jsonrpc.NewError(protocol.CodeInvalidRequest, "session closed", nil)

// inflight is a request of the session being served.
type inflight struct {
	cancel context.CancelFunc
}

// busy reports a client attached: the standalone stream read, or a
// connection held (Hold) — waiting for a response, following a stream. A
// request whose client went away (and did not come back for it) does not
// keep the session: it expires with the idle timeout, which cancels the
// request.
func (s *Session) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readers > 0 || s.holds > 0
}

// Hold marks a client attached until release is called; a held session
// does not expire. It implements transport.Session.
func (s *Session) Hold() (release func()) {
	s.mu.Lock()
	s.holds++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.holds--
			s.mu.Unlock()
			s.touch()
		})
	}
}

// Close ends the session: its requests are cancelled, its standalone stream
// ends and it is forgotten. Close is idempotent.
func (s *Session) Close() { s.end(true) }

// end closes the session; forget also deletes its record from the store
// (not so when this replica shuts down: others may go on serving it).
func (s *Session) end(forget bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for _, r := range s.inflight {
		r.cancel()
	}
	s.queue = nil
	close(s.done)
	s.mu.Unlock()
	s.a.remove(s, forget)
}

func (s *Session) subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[uri]
}

// enqueue adds a message for the standalone stream, dropping the oldest
// beyond the queue size.
func (s *Session) enqueue(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.initialized {
		return
	}
	if len(s.queue) >= s.a.opts.QueueSize {
		s.queue = s.queue[1:]
	}
	s.queue = append(s.queue, msg)
	close(s.wake)
	s.wake = make(chan struct{})
}

// ErrSessionClosed is returned by Next once the session has ended.
var ErrSessionClosed = errors.New("legacy: session closed")

// Next returns the next message for the standalone stream, waiting for one.
// While it waits the session counts as in use, so that a client that only
// listens (a stdio process's session, an open GET stream) is not expired.
func (s *Session) Next(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	s.readers++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.readers--
		s.mu.Unlock()
		s.touch()
	}()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrSessionClosed
		}
		if len(s.queue) > 0 {
			msg := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return msg, nil
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
		case <-wake:
		}
	}
}

// subscriptions returns the URIs the session subscribed to.
func (s *Session) subscriptions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	uris := make([]string, 0, len(s.subs))
	for u := range s.subs {
		uris = append(uris, u)
	}
	return uris
}

// handleNotification receives notifications/initialized,
// notifications/cancelled and the client's other notifications.
func (s *Session) handleNotification(msg *jsonrpc.Message) {
	s.touch()
	switch msg.Method {
	case protocol.MethodNotificationInitialized:
		s.mu.Lock()
		s.initialized = true
		s.mu.Unlock()
		s.save()
	case protocol.NotificationCancelled:
		var p protocol.CancelledParams
		if jsonrpc.Unmarshal(msg.Params, &p) != nil {
			return
		}
		s.mu.Lock()
		r, ok := s.inflight[p.RequestID]
		s.mu.Unlock()
		if ok {
			r.cancel()
		}
	}
}

// handleResponse routes the client's answer to the request awaiting it.
func (s *Session) handleResponse(msg *jsonrpc.Message) {
	s.touch()
	s.mu.Lock()
	ch := s.pending[msg.ID]
	delete(s.pending, msg.ID)
	s.mu.Unlock()
	if ch != nil {
		ch <- msg // buffered
	}
}

// serve answers a request of the session.
func (s *Session) serve(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	s.touch()
	s.used.Store(true)
	msg := req.Message
	// The session cancels its requests (notifications/cancelled, its
	// end) with the transport's cancel.
	cancel := req.Cancel
	if cancel == nil {
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errSessionClosed
	}
	s.inflight[msg.ID] = inflight{cancel: cancel}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, msg.ID)
		s.mu.Unlock()
		s.touch()
	}()
	res, err := s.handle(ctx, req)
	if ctx.Err() != nil {
		return nil, ctx.Err() // cancelled: nothing is sent for it
	}
	return res, err
}

func (s *Session) handle(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	msg := req.Message
	switch msg.Method {
	case protocol.MethodInitialize:
		return nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "the session is already initialized", nil)
	case protocol.MethodPing:
		return &protocol.EmptyResult{}, nil
	case protocol.MethodLoggingSetLevel:
		var p struct {
			Level protocol.LoggingLevel `json:"level"`
		}
		if err := jsonrpc.Unmarshal(orEmpty(msg.Params), &p); err != nil || p.Level.Severity() < 0 {
			return nil, protocol.InvalidParams("logging/setLevel needs a valid level")
		}
		s.mu.Lock()
		s.logLevel = p.Level
		s.mu.Unlock()
		s.save()
		return &protocol.EmptyResult{}, nil
	case protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
		var p struct {
			URI string `json:"uri"`
		}
		if err := jsonrpc.Unmarshal(orEmpty(msg.Params), &p); err != nil || p.URI == "" {
			return nil, protocol.InvalidParams(msg.Method + " needs a uri")
		}
		if msg.Method == protocol.MethodResourcesSubscribe {
			if err := s.a.core.ResourceAccess(ctx, p.URI); err != nil {
				return nil, err
			}
		}
		s.mu.Lock()
		if msg.Method == protocol.MethodResourcesSubscribe {
			s.subs[p.URI] = true
		} else {
			delete(s.subs, p.URI)
		}
		s.mu.Unlock()
		s.save()
		return &protocol.EmptyResult{}, nil
	}
	// Every other method is the core's: its method table says which it
	// serves to legacy sessions.
	return s.serveCore(ctx, req)
}

func orEmpty(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}
