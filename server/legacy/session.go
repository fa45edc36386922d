package legacy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Session is one legacy client's session as this replica serves it: the
// negotiated version, the client's identity and capabilities, and a copy
// of its log level and subscriptions, read again from the SessionStore on
// every request; the requests of the session this replica serves, and the
// requests it sent the client that await answers. The messages for its
// standalone stream wait in the store's outbox, for whichever replica the
// client follows that stream on.
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

	lastUsed atomic.Int64 // on this replica: nanoseconds since clockStart (monotonic)
	used     atomic.Bool  // a request came after initialize

	mu          sync.Mutex
	generation  int64 // of the record this copy knows
	initialized bool
	logLevel    atomic.Pointer[protocol.LoggingLevel] // nil until the client sets one
	subs        map[string]bool
	inflight    map[jsonrpc.ID]inflight
	pending     map[jsonrpc.ID]chan *jsonrpc.Message
	wake        chan struct{} // closed and replaced when the outbox may have grown
	closed      bool
	done        chan struct{}
	nextID      atomic.Int64
	attachment  any
	readers     int       // calls of Next waiting: the standalone stream is attached
	lastRead    time.Time // when the last call of Next returned
	holds       int       // clients attached (Hold)
	held        bool      // held at some time since the last sweep

	metaOnce  sync.Once
	metaCache []byte
	// leveled is metaCache read as the core reads it, with the log level
	// of when it was read (levelMeta).
	leveled atomic.Pointer[protocol.RequestMeta]
}

// Done is closed once the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// Attachment returns the transport's value kept with the session, creating
// it on first use. It lives with this replica's copy of the session.
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

// level returns the session's log level ("" when the client set none).
func (s *Session) level() protocol.LoggingLevel {
	if l := s.logLevel.Load(); l != nil {
		return *l
	}
	return ""
}

// clockStart is the origin of lastUsed: time.Since of it reads the
// monotonic clock only, once per request.
var clockStart = time.Now()

func (s *Session) touch() { s.lastUsed.Store(int64(time.Since(clockStart))) }

// idle reports whether this replica's copy can be let go: nothing of it
// runs here and it was not used here for the idle timeout. Its record
// stays; the copy is made again when the session comes back.
func (s *Session) idle(now time.Time) bool {
	return !s.busy() && now.Sub(clockStart)-time.Duration(s.lastUsed.Load()) > s.a.opts.IdleTimeout
}

// busy reports whether anything of the session runs on this replica: a
// client attached (the standalone stream read, a connection held), a
// request served, an answer awaited.
func (s *Session) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readers > 0 || s.holds > 0 || len(s.inflight) > 0 || len(s.pending) > 0
}

// maxSubscriptions bounds the resources one session subscribes to.
const maxSubscriptions = 1000

// errSessionClosed answers a request of a session that has ended.
var errSessionClosed = jsonrpc.NewError(protocol.CodeInvalidRequest, "session closed", nil)

// inflight is a request of the session being served.
type inflight struct {
	cancel context.CancelFunc
}

// Hold marks a client attached until release is called; a held session
// does not expire: the replica holding it marks it used in the store on
// every sweep. It implements transport.Session.
func (s *Session) Hold() (release func()) {
	s.mu.Lock()
	s.holds++
	s.held = true
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

// takeHeld reports whether a client held the session (or followed its
// standalone stream) since the last call.
func (s *Session) takeHeld() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := s.held || s.holds > 0 || s.readers > 0
	s.held = false
	return held
}

// Close ends the session on every replica: its record is deleted, its
// requests are cancelled, its standalone stream ends. Close is idempotent.
func (s *Session) Close() {
	if s.end(true) {
		s.a.sendBus(BusMessage{Kind: BusEnded, Session: s.id}, "")
	}
}

// end closes this replica's copy of the session; forget also deletes its
// record from the store (not so when the session is gone already, or
// this replica shuts down: others go on serving it). It reports whether
// this call ended it.
func (s *Session) end(forget bool) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.closed = true
	for _, r := range s.inflight {
		r.cancel()
	}
	close(s.done)
	s.mu.Unlock()
	s.a.remove(s, forget)
	return true
}

func (s *Session) subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[uri]
}

// signal wakes the readers of the standalone stream: the outbox may have a
// message.
func (s *Session) signal() {
	s.mu.Lock()
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
}

// ErrSessionClosed is returned by Next once the session has ended.
var ErrSessionClosed = errors.New("legacy: session closed")

// outboxPoll is how often a reader looks at the outbox without being
// woken, in case a wake-up from another replica was lost.
const outboxPoll = 5 * time.Second

// popTimeout bounds taking one message from the outbox, which the
// reader's context does not cut short.
const popTimeout = 10 * time.Second

// Next returns the next message for the standalone stream, taking it from
// the session's outbox in the store, and waits for one. While it waits the
// session counts as in use, so that a client that only listens (a stdio
// process's session, an open GET stream) is not expired, and this replica
// applies the change feed to the session's outbox (from where the
// session's cursor stands, so that what changed while no replica did is
// queued first). A store that fails is retried; Next fails only when ctx
// ends or the session closes.
//
// A message Next returns has left the outbox: the caller delivers it (a
// transport records it in its event log first) even when ctx ended
// meanwhile. Once it has begun taking a message, Next finishes taking it
// whatever ctx does: a store over the network may take it and then report
// only that ctx ended, and the message would be lost.
func (s *Session) Next(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	first := !s.attachedLocked()
	if first {
		// Marked before it counts as attached, so that the feed follower
		// never applies a live change to it ahead of the catch-up (which
		// would move its cursor past the changes it missed).
		s.a.markCatchUp(s)
	}
	s.readers++
	s.held = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.readers--
		s.lastRead = time.Now()
		s.mu.Unlock()
		s.touch()
	}()
	if first {
		s.a.kickCatchUp()
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrSessionClosed
		}
		wake := s.wake
		s.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), popTimeout)
		msg, err := s.a.store.Pop(pctx, s.id)
		cancel()
		if err == nil && msg != nil {
			return msg, nil
		}
		wait := outboxPoll
		if err != nil && ctx.Err() == nil {
			s.a.logger.Warn("legacy: reading a session's outbox", "session", s.id, "err", err)
			wait = time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-s.done:
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// attached reports whether a reader follows the standalone stream here:
// one waits in Next, or one returned from it within followGrace (a
// transport calls Next again once it has written the message). While the
// session is attached, this replica applies the change feed to its
// outbox; a reader attaching anew brings it up to date first.
func (s *Session) attached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attachedLocked()
}

func (s *Session) attachedLocked() bool {
	return !s.closed && (s.readers > 0 || !s.lastRead.IsZero() && time.Since(s.lastRead) < followGrace)
}

// followGrace is how long after its last reader returned a session's
// standalone stream still counts as followed on this replica.
const followGrace = 30 * time.Second

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
func (s *Session) handleNotification(ctx context.Context, msg *jsonrpc.Message) {
	s.touch()
	switch msg.Method {
	case protocol.MethodNotificationInitialized:
		// The session follows the change feed from here on.
		last, err := s.a.core.Feed().Last(ctx)
		if err != nil {
			s.a.logger.Warn("legacy: reading the change feed's position", "session", s.id, "err", err)
		}
		if err := s.update(ctx, func(r *SessionRecord) { r.Initialized, r.Cursor = true, last }, true); err != nil {
			s.a.logger.Warn("legacy: recording notifications/initialized", "session", s.id, "err", err)
		}
	case protocol.NotificationCancelled:
		var p protocol.CancelledParams
		if jsonrpc.Unmarshal(msg.Params, &p) != nil {
			return
		}
		if !s.cancel(p.RequestID) {
			// Served by another replica, perhaps.
			s.a.sendBus(BusMessage{Kind: BusCancel, Session: s.id, Message: jsonrpc.AppendNotification(nil, msg.Method, msg.Params)}, "")
		}
	}
}

// cancel cancels the request id of the session if this replica serves it.
func (s *Session) cancel(id jsonrpc.ID) bool {
	s.mu.Lock()
	r, ok := s.inflight[id]
	s.mu.Unlock()
	if ok {
		r.cancel()
	}
	return ok
}

// handleResponse routes the client's answer to the request awaiting it:
// here, or on the replica that sent the request (its id names it).
func (s *Session) handleResponse(msg *jsonrpc.Message) {
	s.touch()
	s.mu.Lock()
	ch := s.pending[msg.ID]
	delete(s.pending, msg.ID)
	s.mu.Unlock()
	if ch != nil {
		ch <- msg // buffered
		return
	}
	if replica, ok := replicaOf(msg.ID); ok && replica != s.a.replica {
		s.a.sendBus(BusMessage{Kind: BusAnswer, Session: s.id, Message: encodeResponse(msg)}, replica)
	}
}

// serve answers a request of the session.
func (s *Session) serve(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	// It is touched when done: until then it is busy (inflight), never idle.
	s.used.Store(true)
	if req.Tracked {
		// The transport cancels it (notifications/cancelled, the
		// session's end): nothing to record.
		select {
		case <-s.done:
			return nil, errSessionClosed
		default:
		}
	} else {
		// The session cancels its requests (notifications/cancelled, its
		// end) with the transport's cancel.
		cancel := req.Cancel
		if cancel == nil {
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
		}
		if !s.track(req.Message.ID, cancel) {
			return nil, errSessionClosed
		}
		defer s.untrack(req.Message.ID)
	}
	defer s.touch()
	res, err := s.handle(ctx, req)
	if ctx.Err() != nil {
		return nil, ctx.Err() // cancelled: nothing is sent for it
	}
	return res, err
}

// track records a request being served, unless the session has ended;
// untrack forgets it.
func (s *Session) track(id jsonrpc.ID, cancel context.CancelFunc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inflight[id] = inflight{cancel: cancel}
	return true
}

func (s *Session) untrack(id jsonrpc.ID) {
	s.mu.Lock()
	delete(s.inflight, id)
	s.mu.Unlock()
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
		if err := s.update(ctx, func(r *SessionRecord) { r.LogLevel = p.Level }, false); err != nil {
			return nil, err
		}
		return &protocol.EmptyResult{}, nil
	case protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
		var p struct {
			URI string `json:"uri"`
		}
		if err := jsonrpc.Unmarshal(orEmpty(msg.Params), &p); err != nil || p.URI == "" {
			return nil, protocol.InvalidParams(msg.Method + " needs a uri")
		}
		subscribe := msg.Method == protocol.MethodResourcesSubscribe
		if subscribe {
			if err := s.a.core.ResourceAccess(ctx, p.URI); err != nil {
				return nil, err
			}
			if n := len(s.subscriptions()); n >= maxSubscriptions && !s.subscribed(p.URI) {
				return nil, protocol.InvalidParams(fmt.Sprintf("resources/subscribe: the session has %d subscriptions, its most", n))
			}
		}
		err := s.update(ctx, func(r *SessionRecord) {
			kept := r.Subscriptions[:0:0]
			for _, u := range r.Subscriptions {
				if u != p.URI {
					kept = append(kept, u)
				}
			}
			if subscribe {
				kept = append(kept, p.URI)
			}
			r.Subscriptions = kept
		}, false)
		if err != nil {
			return nil, err
		}
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
