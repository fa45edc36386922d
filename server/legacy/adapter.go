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

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

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
}

// Adapter serves both eras in front of a core server. It implements
// transport.Handler (modern requests) and transport.LegacyHandler.
type Adapter struct {
	core   *server.Server
	opts   Options
	store  SessionStore
	logger *slog.Logger

	mu       sync.Mutex
	sessions map[string]*Session
	closed   bool

	stop     context.CancelFunc
	done     chan struct{}
	startBG  sync.Once
	closeOne sync.Once

	// completeHeads are how the core's complete results begin when their
	// _meta is the server's alone (see legacyResult).
	completeHeads [][]byte
}

var (
	_ transport.Handler       = (*Adapter)(nil)
	_ transport.LegacyHandler = (*Adapter)(nil)
	_ transport.ParamHeaders  = (*Adapter)(nil)
)

// New returns an Adapter serving core in both eras.
func New(core *server.Server, opts *Options) *Adapter {
	a := &Adapter{core: core, sessions: map[string]*Session{}, done: make(chan struct{})}
	info := core.Info()
	if meta, err := (&protocol.ResultMeta{ServerInfo: &info}).MarshalJSON(); err == nil {
		head := append([]byte(`{"resultType":"complete","_meta":`), meta...)
		a.completeHeads = append(a.completeHeads, append(head, ','))
	}
	a.completeHeads = append(a.completeHeads, []byte(`{"resultType":"complete",`))
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

// Core returns the core server.
func (a *Adapter) Core() *server.Server { return a.core }

// Handle serves a modern request with the core. It implements
// transport.Handler.
func (a *Adapter) Handle(ctx context.Context, msg *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
	if msg.Method == protocol.MethodInitialize && a.opts.Disabled {
		return a.refuseInitialize(msg)
	}
	if a.opts.ModernDisabled {
		return &jsonrpc.Response{ID: msg.ID, HTTPStatus: 400, Error: jsonrpc.NewError(protocol.CodeInvalidRequest,
			"this server serves the initialize handshake only (protocol versions "+strings.Join(a.opts.Versions, ", ")+"); send initialize first", nil)}
	}
	return a.core.Handle(ctx, msg, n)
}

// HandleAsync serves a modern request with the core's HandleAsync. It
// implements transport.AsyncHandler.
func (a *Adapter) HandleAsync(ctx context.Context, msg *jsonrpc.Message, n transport.Notifier, done func(*jsonrpc.Response)) {
	if (msg.Method == protocol.MethodInitialize && a.opts.Disabled) || a.opts.ModernDisabled {
		done(a.Handle(ctx, msg, n))
		return
	}
	a.core.HandleAsync(ctx, msg, n, done)
}

// HandleNotification passes modern notifications to the core.
func (a *Adapter) HandleNotification(ctx context.Context, msg *jsonrpc.Message) {
	a.core.HandleNotification(ctx, msg)
}

// ParamHeaders returns the core's x-mcp-header parameters of a tool.
func (a *Adapter) ParamHeaders(tool string) []transport.HeaderParam { return a.core.ParamHeaders(tool) }

// Versions returns the legacy revisions served (none when disabled).
func (a *Adapter) Versions() []string {
	if a.opts.Disabled {
		return nil
	}
	return a.opts.Versions
}

func (a *Adapter) refuseInitialize(msg *jsonrpc.Message) *jsonrpc.Response {
	vs := a.core.Versions()
	return &jsonrpc.Response{ID: msg.ID, HTTPStatus: 400, Error: jsonrpc.NewError(protocol.CodeInvalidRequest,
		"this server does not serve the initialize handshake; it serves protocol versions "+strings.Join(vs, ", ")+" with per-request _meta",
		map[string][]string{"supported": vs})}
}

type initializeParams struct {
	ProtocolVersion string                       `json:"protocolVersion"`
	Capabilities    *protocol.ClientCapabilities `json:"capabilities"`
	ClientInfo      *protocol.Implementation     `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string                      `json:"protocolVersion"`
	Capabilities    protocol.ServerCapabilities `json:"capabilities"`
	ServerInfo      protocol.Implementation     `json:"serverInfo"`
	Instructions    string                      `json:"instructions,omitempty"`
}

// Initialize answers initialize with version negotiation and opens a
// session. It implements transport.LegacyHandler.
func (a *Adapter) Initialize(ctx context.Context, msg *jsonrpc.Message) (transport.Session, *jsonrpc.Response) {
	if a.opts.Disabled || len(a.opts.Versions) == 0 {
		return nil, a.refuseInitialize(msg)
	}
	var p initializeParams
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return nil, errorResponse(msg.ID, protocol.InvalidParams("invalid initialize params: "+err.Error()))
		}
	}
	if p.ProtocolVersion == "" {
		return nil, errorResponse(msg.ID, protocol.InvalidParams("initialize needs a protocolVersion"))
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
	if err := a.add(s); err != nil {
		resp := errorResponse(msg.ID, err)
		if err == errTooManySessions {
			resp.HTTPStatus = 503
		}
		return nil, resp
	}
	s.save()
	a.startBG.Do(a.background)
	res := initializeResult{ProtocolVersion: version, Capabilities: a.legacyCapabilities(), ServerInfo: a.core.Info(), Instructions: a.core.Instructions()}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, errorResponse(msg.ID, protocol.InternalError(err.Error()))
	}
	return s, &jsonrpc.Response{ID: msg.ID, Result: b}
}

// legacyCapabilities are the core's capabilities as a legacy client reads
// them.
func (a *Adapter) legacyCapabilities() protocol.ServerCapabilities {
	caps := a.core.Capabilities()
	caps.Extensions = nil // a 2026-07-28 member
	return caps
}

// Session returns the open session with the id. It implements
// transport.LegacyHandler.
func (a *Adapter) Session(id string) (transport.Session, bool) {
	a.mu.Lock()
	s, ok := a.sessions[id]
	a.mu.Unlock()
	if !ok {
		// Opened on another replica, perhaps.
		rec, err := a.store.Load(context.Background(), id)
		if err != nil {
			return nil, false
		}
		s = a.restore(rec)
		if a.add(s) != nil {
			return nil, false
		}
		a.startBG.Do(a.background)
		ok = true
	}
	select {
	case <-s.done:
		// Closed, and about to leave the map.
		return nil, false
	default:
	}
	if s.expired(time.Now()) {
		if ok {
			s.Close()
		}
		return nil, false
	}
	s.touch()
	return s, true
}

// Sessions returns the number of open sessions.
func (a *Adapter) Sessions() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sessions)
}

// errTooManySessions refuses a session when MaxSessions are open and none
// can make room; over HTTP it is a 503.
var errTooManySessions = jsonrpc.NewError(protocol.CodeInternalError, "too many open sessions; try again later", nil)

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
			<-a.done
		}
	})
	return nil
}

// background subscribes to the core's change feed, before the first
// session's initialize is answered so that no change after it is missed,
// and starts the goroutine that fans the feed out to sessions and expires
// idle ones. Close stops it.
func (a *Adapter) background() {
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		cancel()
		close(a.done)
		return
	}
	a.stop = cancel
	a.mu.Unlock()
	events, err := server.FeedEvents(ctx, a.core.Feed(), feedBuffer)
	go func() {
		defer close(a.done)
		a.run(ctx, events, err)
	}()
}

// run delivers the feed's events from the subscription background made,
// subscribing again whenever the feed drops it.
func (a *Adapter) run(ctx context.Context, events <-chan server.Event, err error) {
	sweep := time.NewTicker(sweepInterval(a.opts.IdleTimeout))
	defer sweep.Stop()
	for {
		if err != nil {
			a.logger.Error("subscribing to the change feed", "err", err)
			return
		}
	loop:
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-sweep.C:
				a.expire(now)
			case e, ok := <-events:
				if !ok {
					break loop // dropped by the feed: subscribe again
				}
				a.deliver(e)
			}
		}
		events, err = server.FeedEvents(ctx, a.core.Feed(), feedBuffer)
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
func (a *Adapter) deliver(e server.Event) {
	var msg []byte
	switch e.Kind {
	case server.ToolsListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationToolListChanged, nil)
	case server.PromptsListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationPromptListChanged, nil)
	case server.ResourcesListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationResourceListChanged, nil)
	case server.ResourceUpdated:
		b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: e.URI})
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b)
	default:
		return
	}
	a.mu.Lock()
	sessions := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	a.mu.Unlock()
	for _, s := range sessions {
		if e.Kind == server.ResourceUpdated && !s.subscribed(e.URI) {
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

func errorResponse(id jsonrpc.ID, err error) *jsonrpc.Response {
	e, ok := err.(*jsonrpc.Error)
	if !ok {
		e = protocol.InternalError(err.Error())
	}
	return &jsonrpc.Response{ID: id, Error: e}
}
