package legacy

import (
	"context"
	"log/slog"
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
	// stream while no client reads them, in the default store (a Store of
	// your own has its own bound); the oldest are dropped beyond it. 0
	// means 256.
	QueueSize int

	// Store keeps the sessions' records, outboxes and elicitationIds: the
	// truth every replica serving the same sessions reads. The default is
	// an in-process MemoryStore; replicas share one (store/redis).
	Store SessionStore
	// Bus carries clients' answers, cancellations and sessions' ends to
	// the replica they concern; replicas that share a Store share a Bus.
	// The default serves one process.
	Bus Bus
	// Replica names this replica on the Bus; the default is random. With
	// a Bus, the ids of the requests the replica sends clients carry it
	// ("mcpkit-<replica>-<n>"), so that no two replicas' ids collide and an
	// answer reaching another replica finds the one waiting for it;
	// without, they are "mcpkit-<n>".
	Replica string

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
	core    Core
	opts    Options
	store   SessionStore
	bus     Bus
	replica string // this replica's name on the bus
	logger  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*Session
	closed   bool

	// catchUps are the sessions whose outbox the feed follower is to
	// bring up to date (a reader attached, the feed came back); kick wakes
	// it for them.
	catchMu  sync.Mutex
	catchUps map[*Session]bool
	kick     chan struct{}

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
	a := &Adapter{core: core, sessions: map[string]*Session{}, catchUps: map[*Session]bool{}, kick: make(chan struct{}, 1)}
	if opts != nil {
		a.opts = *opts
	}
	a.replica = a.opts.Replica
	if a.replica == "" && a.opts.Bus != nil {
		a.replica = newReplicaID()
	}
	if a.replica != "" && !validReplica(a.replica) {
		panic("legacy: Options.Replica must be 1 to 64 letters, digits, '_' or '.'")
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
		a.store = &MemoryStore{MaxOutbox: a.opts.QueueSize, recs: map[string]*memRecord{}, elicit: map[string][]string{}, now: time.Now}
	}
	a.bus = a.opts.Bus
	if a.bus == nil {
		a.bus = NewMemoryBus()
	}
	return a
}

// Replica returns this adapter's name among the replicas sharing its
// Bus ("" without a Bus): the ids of the requests it sends clients carry
// it, so that their answers find it.
func (a *Adapter) Replica() string { return a.replica }

// Store returns the session store the adapter reads.
func (a *Adapter) Store() SessionStore { return a.store }

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
	s.handleNotification(ctx, msg)
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
