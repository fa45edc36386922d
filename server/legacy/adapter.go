package legacy

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/feed"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Core is the modern-era server the adapter runs the requests of legacy
// sessions on, rewritten: *server.Server is one.
type Core interface {
	// ServeModern answers one request of the modern era.
	ServeModern(ctx context.Context, req *transport.Request) (protocol.Result, error)
	// Info, Instructions and Capabilities make the initialize result.
	Info() protocol.Implementation
	Instructions() string
	Capabilities() protocol.ServerCapabilities
	// Versions returns the modern revisions served, newest first.
	Versions() []string
	// ParamHeaders returns a tool's x-mcp-header parameters.
	ParamHeaders(tool string) []transport.HeaderParam
	// Feed is the change feed sessions' notifications come from.
	Feed() feed.Feed
	// ResourceAccess refuses, with the insufficient-scope error, a
	// subscription to uri by a caller (the principal and scopes on ctx)
	// who may not read it; nil otherwise.
	ResourceAccess(ctx context.Context, uri string) error
}

// Options configure an Adapter. The zero value serves every legacy revision.
type Options struct {
	// Versions lists the legacy revisions served, newest first; nil means
	// protocol.LegacyVersions. Disabled turns the legacy era off: initialize
	// is then refused with an error naming the versions served.
	Versions []string
	Disabled bool
	// ModernDisabled turns the modern era off: requests with per-request
	// _meta are refused with a (non-modern) error that tells the client to
	// initialize, so that dual-era clients fall back to the handshake.
	ModernDisabled bool

	// InputTimeout bounds the wait for the client's answer to a request the
	// server sends it (sampling, elicitation, roots); 0 means 5 minutes.
	InputTimeout time.Duration
	// MaxRounds bounds the input rounds of one request; 0 means 16.
	MaxRounds int

	// IdleTimeout ends sessions unused for this long; 0 means 30 minutes.
	IdleTimeout time.Duration
	// MaxSessions bounds the open sessions; initialize is refused beyond
	// it. 0 means 100,000.
	MaxSessions int
	// QueueSize bounds the messages a session holds for its standalone
	// stream while no client reads them; the oldest are dropped beyond it.
	// 0 means 256.
	QueueSize int

	// Store keeps session records, for replicas that share sessions; the
	// default is an in-process store.
	Store SessionStore

	// Logger receives diagnostics; the default discards them.
	Logger *slog.Logger

	// Principal returns the authenticated caller of a request from its
	// context ("" when unknown); server.New sets server.PrincipalFrom. A
	// session is bound to the principal of its initialize: a request of
	// the session from another principal is refused with -32600, marked
	// protocol.ErrForbidden (HTTP 403). nil binds sessions to no one.
	Principal func(ctx context.Context) string
}

// Adapter serves both eras in front of a core server. It implements
// transport.Handler; server.New makes one for every Server, so that a
// Server serves both eras by itself.
type Adapter struct {
	core   Core
	opts   Options
	store  SessionStore
	logger *slog.Logger

	mu       sync.Mutex
	sessions map[string]*Session
	closed   bool

	// elicitations maps the elicitationIds of URL elicitations to the
	// sessions that were sent them.
	elicitMu     sync.Mutex
	elicitations map[string][]*Session

	stop     context.CancelFunc
	bg       sync.WaitGroup // the background goroutines
	startBG  sync.Once
	closeOne sync.Once
}

var (
	_ transport.Handler = (*Adapter)(nil)
	_ transport.Legacy  = (*Adapter)(nil)
)

// New returns an Adapter serving core in both eras.
func New(core Core, opts *Options) *Adapter {
	a := &Adapter{core: core, sessions: map[string]*Session{}, elicitations: map[string][]*Session{}}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.Versions == nil {
		a.opts.Versions = protocol.LegacyVersions
	}
	if a.opts.InputTimeout <= 0 {
		a.opts.InputTimeout = 5 * time.Minute
	}
	if a.opts.MaxRounds <= 0 {
		a.opts.MaxRounds = 16
	}
	if a.opts.IdleTimeout <= 0 {
		a.opts.IdleTimeout = 30 * time.Minute
	}
	if a.opts.MaxSessions <= 0 {
		a.opts.MaxSessions = 100000
	}
	if a.opts.QueueSize <= 0 {
		a.opts.QueueSize = 256
	}
	a.logger = a.opts.Logger
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	a.store = a.opts.Store
	if a.store == nil {
		a.store = NewMemoryStore()
	}
	return a
}

// Serve answers a request of either era, as its transport classified it
// (req.Kind): initialize opens a session (the result is a
// *transport.Opened), a session's requests are served through the
// session, modern requests by the core. It implements transport.Handler.
func (a *Adapter) Serve(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	switch req.Kind {
	case transport.KindSession:
		s := a.own(req.Session)
		if s == nil {
			// Ended (closed, expired) since the transport found it.
			return nil, errSessionClosed
		}
		if a.principal(ctx) != s.principal {
			return nil, errOtherPrincipal
		}
		return s.serve(ctx, req)
	case transport.KindInitialize:
		return a.initialize(ctx, req)
	}
	if a.opts.ModernDisabled {
		return nil, jsonrpc.NewError(protocol.CodeInvalidRequest,
			"this server serves the initialize handshake only (protocol versions "+strings.Join(a.opts.Versions, ", ")+"); send initialize first", nil)
	}
	return a.core.ServeModern(ctx, req)
}

// Receive takes a session's notifications and its responses to the
// requests the session sent. The modern era defines no client
// notification beyond cancellation, which transports handle. Messages
// from a principal other than the session's are dropped. It implements
// transport.Handler.
func (a *Adapter) Receive(ctx context.Context, msg *jsonrpc.Message, sess transport.Session) {
	s := a.own(sess)
	if s == nil || a.principal(ctx) != s.principal {
		return
	}
	if msg.IsResponse() {
		s.handleResponse(msg)
		return
	}
	s.handleNotification(msg)
}

// Legacy returns the adapter, or nil when the legacy era is off. It
// implements transport.Handler.
func (a *Adapter) Legacy() transport.Legacy {
	if a.opts.Disabled || len(a.opts.Versions) == 0 {
		return nil
	}
	return a
}

// ParamHeaders returns the core's x-mcp-header parameters of a tool. It
// implements transport.Handler.
func (a *Adapter) ParamHeaders(tool string) []transport.HeaderParam { return a.core.ParamHeaders(tool) }

// Versions returns the legacy revisions served (none when disabled).
func (a *Adapter) Versions() []string {
	if a.opts.Disabled {
		return nil
	}
	return a.opts.Versions
}

func (a *Adapter) refuseInitialize() error {
	vs := a.core.Versions()
	return jsonrpc.NewError(protocol.CodeInvalidRequest,
		"this server does not serve the initialize handshake; it serves protocol versions "+strings.Join(vs, ", ")+" with per-request _meta",
		map[string][]string{"supported": vs})
}

type initializeParams struct {
	ProtocolVersion string                       `json:"protocolVersion"`
	Capabilities    *protocol.ClientCapabilities `json:"capabilities"`
	ClientInfo      *protocol.Implementation     `json:"clientInfo"`
}

type initializeResult struct {
	protocol.ResultHeader
	ProtocolVersion string                      `json:"protocolVersion"`
	Capabilities    protocol.ServerCapabilities `json:"capabilities"`
	ServerInfo      protocol.Implementation     `json:"serverInfo"`
	Instructions    string                      `json:"instructions,omitempty"`
}

// initialize answers initialize with version negotiation and opens a
// session, which it returns with the result.
func (a *Adapter) initialize(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	if a.Legacy() == nil {
		return nil, a.refuseInitialize()
	}
	msg := req.Message
	var p initializeParams
	if len(msg.Params) > 0 {
		if err := jsonrpc.Unmarshal(msg.Params, &p); err != nil {
			return nil, protocol.InvalidParams("invalid initialize params: " + err.Error())
		}
	}
	if p.ProtocolVersion == "" {
		return nil, protocol.InvalidParams("initialize needs a protocolVersion")
	}
	version := a.opts.Versions[0]
	for _, v := range a.opts.Versions {
		if v == p.ProtocolVersion {
			version = v
		}
	}
	caps := p.Capabilities
	if caps == nil {
		caps = &protocol.ClientCapabilities{}
	}
	s := a.newSession(version, caps, p.ClientInfo)
	s.principal = a.principal(ctx)
	if err := a.add(s); err != nil {
		return nil, err
	}
	s.save()
	a.startBG.Do(a.background)
	res := &initializeResult{ProtocolVersion: version, Capabilities: s.rev.serverCapabilities(a.core.Capabilities()), ServerInfo: s.rev.implementation(a.core.Info()), Instructions: a.core.Instructions()}
	return &transport.Opened{Result: res, Session: s}, nil
}

// principal returns the authenticated caller of the request of ctx.
func (a *Adapter) principal(ctx context.Context) string {
	if a.opts.Principal == nil {
		return ""
	}
	return a.opts.Principal(ctx)
}

// errOtherPrincipal refuses a session's request from a principal other
// than the one that opened the session. It is 403 over HTTP, not the 404
// of an unknown session: the session exists and goes on for its owner,
// and a 404 would tell a legacy client to initialize again, hiding a
// client that mixes up its tokens.
var errOtherPrincipal = protocol.Mark(jsonrpc.NewError(protocol.CodeInvalidRequest, "session belongs to another principal", nil), protocol.ErrForbidden)

// Session returns the open session with the id, for the request of ctx.
// It fails with transport.ErrNoSession when none is open, and with the
// refusal of another principal (marked protocol.ErrForbidden) when the
// session was opened by a principal other than the request's; that
// lookup does not count as a use of the session. It implements
// transport.Legacy.
func (a *Adapter) Session(ctx context.Context, id string) (transport.Session, error) {
	a.mu.Lock()
	s, ok := a.sessions[id]
	a.mu.Unlock()
	if !ok {
		// Opened on another replica, perhaps.
		rec, err := a.store.Load(ctx, id)
		if err != nil {
			return nil, transport.ErrNoSession
		}
		s = a.restore(rec)
		if a.add(s) != nil {
			return nil, transport.ErrNoSession
		}
		a.startBG.Do(a.background)
		ok = true
	}
	select {
	case <-s.done:
		// Closed, and about to leave the map.
		return nil, transport.ErrNoSession
	default:
	}
	if s.expired(time.Now()) {
		if ok {
			s.Close()
		}
		return nil, transport.ErrNoSession
	}
	if a.principal(ctx) != s.principal {
		return nil, errOtherPrincipal
	}
	s.touch()
	return s, nil
}

// own returns the open session of this adapter that sess is, or nil: the
// session a transport hands back is looked up, never converted.
func (a *Adapter) own(sess transport.Session) *Session {
	if sess == nil {
		return nil
	}
	a.mu.Lock()
	s := a.sessions[sess.ID()]
	a.mu.Unlock()
	if s == nil || transport.Session(s) != sess {
		return nil
	}
	return s
}

// Sessions returns the number of open sessions.
func (a *Adapter) Sessions() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sessions)
}

// errTooManySessions refuses a session when MaxSessions are open and none
// can make room; over HTTP it is a 503 with Retry-After.
var errTooManySessions = protocol.Mark(protocol.InternalError("too many open sessions; try again later"), protocol.ErrUnavailable)

func (a *Adapter) add(s *Session) error {
	for attempt := 0; ; attempt++ {
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			return protocol.InternalError("server is shutting down")
		}
		if len(a.sessions) < a.opts.MaxSessions {
			a.sessions[s.id] = s
			a.mu.Unlock()
			return nil
		}
		var victims []*Session
		if attempt == 0 {
			victims = a.unusedLocked()
		}
		a.mu.Unlock()
		if len(victims) == 0 {
			return errTooManySessions
		}
		for _, v := range victims {
			v.Close()
		}
	}
}

// unusedLocked picks the sessions to end to make room: those that saw no
// request after initialize and are not busy, the longest idle first, a
// hundredth of MaxSessions (at least one) at a time. A client that opens
// sessions and does nothing with them cannot lock others out.
func (a *Adapter) unusedLocked() []*Session {
	var unused []*Session
	for _, s := range a.sessions {
		if !s.used.Load() && !s.busy() {
			unused = append(unused, s)
		}
	}
	sort.Slice(unused, func(i, j int) bool { return unused[i].lastUsed.Load() < unused[j].lastUsed.Load() })
	return unused[:min(len(unused), max(1, a.opts.MaxSessions/100))]
}

func (a *Adapter) remove(s *Session, forget bool) {
	// The record goes first: once the session has left the map, Session
	// would restore it from a record still in the store.
	if forget {
		if err := a.store.Delete(context.Background(), s.id); err != nil {
			a.logger.Warn("deleting session", "session", s.id, "err", err)
		}
	}
	a.mu.Lock()
	if a.sessions[s.id] == s {
		delete(a.sessions, s.id)
	}
	a.mu.Unlock()
	a.elicitMu.Lock()
	for _, id := range s.elicitations {
		a.dropElicitationLocked(id, s)
	}
	s.elicitations = nil
	a.elicitMu.Unlock()
}

// Close ends every session on this replica and stops the adapter's
// background work; session records stay in the store for other replicas.
// It does not close the core.
func (a *Adapter) Close() error {
	a.closeOne.Do(func() {
		a.mu.Lock()
		a.closed = true
		sessions := make([]*Session, 0, len(a.sessions))
		for _, s := range a.sessions {
			sessions = append(sessions, s)
		}
		stop := a.stop
		a.mu.Unlock()
		for _, s := range sessions {
			s.end(false)
		}
		if stop != nil {
			stop()
		}
		a.bg.Wait()
	})
	return nil
}

// background subscribes to the core's change feed, before the first
// session's initialize is answered so that no change after it is missed,
// and starts the two goroutines that fan the feed out to sessions and
// expire idle ones. Close stops them.
func (a *Adapter) background() {
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		cancel()
		return
	}
	a.stop = cancel
	a.bg.Add(2)
	a.mu.Unlock()
	events, err := feed.Events(ctx, a.core.Feed(), feedBuffer)
	go func() {
		defer a.bg.Done()
		a.sweep(ctx)
	}()
	go func() {
		defer a.bg.Done()
		a.follow(ctx, events, err)
	}()
}

// sweep expires idle sessions until ctx ends, whatever the feed does.
func (a *Adapter) sweep(ctx context.Context) {
	t := time.NewTicker(sweepInterval(a.opts.IdleTimeout))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			a.expire(now)
		}
	}
}

// follow delivers the feed's events from the subscription background
// made. When the feed drops the subscription (it fell behind, the broker
// went away) or refuses one, it subscribes again, waiting longer after
// each failure (up to maxBackoff); once subscribed again it tells every
// session that anything may have changed meanwhile.
func (a *Adapter) follow(ctx context.Context, events <-chan feed.Event, err error) {
	backoff := minBackoff
	lost := false
	for {
		if err == nil {
			if lost {
				a.resync()
				lost = false
			}
			for e := range events {
				a.deliver(e)
				backoff = minBackoff
			}
			if ctx.Err() != nil {
				return
			}
			a.logger.Warn("the change feed ended the sessions' subscription; subscribing again")
		} else {
			a.logger.Error("subscribing to the change feed", "err", err, "retry", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, maxBackoff)
		}
		lost = true
		events, err = feed.Events(ctx, a.core.Feed(), feedBuffer)
	}
}

// Waits between attempts to subscribe to the change feed again.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// snapshot returns the open sessions.
func (a *Adapter) snapshot() []*Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	sessions := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	return sessions
}

// resync tells every session that changes may have been missed while the
// feed's subscription was lost: every list may have changed, and so may
// every resource it subscribed to.
func (a *Adapter) resync() {
	for _, k := range []feed.EventKind{feed.ToolsListChanged, feed.PromptsListChanged, feed.ResourcesListChanged} {
		a.deliver(feed.Event{Kind: k})
	}
	for _, s := range a.snapshot() {
		for _, uri := range s.subscriptions() {
			b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: uri})
			s.enqueue(jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b))
		}
	}
}

// feedBuffer is how many change events may wait for the fan-out to
// sessions before the adapter counts as fallen behind and subscribes again.
const feedBuffer = 256

func sweepInterval(idle time.Duration) time.Duration {
	d := idle / 4
	if d < 10*time.Millisecond {
		d = 10 * time.Millisecond
	}
	if d > time.Minute {
		d = time.Minute
	}
	return d
}

// expire closes sessions idle past the timeout.
func (a *Adapter) expire(now time.Time) {
	a.mu.Lock()
	var stale []*Session
	for _, s := range a.sessions {
		if s.expired(now) {
			stale = append(stale, s)
		}
	}
	a.mu.Unlock()
	for _, s := range stale {
		s.Close()
	}
}

// deliver queues a change notification on every session it concerns.
func (a *Adapter) deliver(e feed.Event) {
	var msg []byte
	switch e.Kind {
	case feed.ToolsListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationToolListChanged, nil)
	case feed.PromptsListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationPromptListChanged, nil)
	case feed.ResourcesListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationResourceListChanged, nil)
	case feed.ResourceUpdated:
		b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: e.URI})
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b)
	default:
		return
	}
	for _, s := range a.snapshot() {
		if e.Kind == feed.ResourceUpdated && !s.subscribed(e.URI) {
			continue
		}
		s.enqueue(msg)
	}
}

func newSessionID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(b)*2)
	for _, c := range b {
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}
