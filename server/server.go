package server

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
)

// Options configure a Server. The zero value is usable: every field has a
// sensible default.
type Options struct {
	// Instructions is natural-language guidance returned by server/discover.
	Instructions string

	// Versions lists the protocol revisions served, newest first. The
	// default is protocol.ModernVersions.
	Versions []string

	// DiscoverCache and ListCache are the caching hints of server/discover
	// and of the four list methods. The defaults are a TTL of one minute,
	// public.
	DiscoverCache *protocol.CacheHints
	ListCache     *protocol.CacheHints
	// ReadCache is the default caching hint of resources/read, used when a
	// resource sets none. The default is a TTL of 0, private.
	ReadCache *protocol.CacheHints

	// PageSize is the most items one list page holds; 0 means 100.
	PageSize int

	// StateKey is the 32-byte key that seals MRTR requestState (AES-256-GCM).
	// Replicas serving the same clients must share it. When nil a random key
	// is made, so state survives only within this process.
	StateKey []byte
	// PreviousStateKeys still open requestState and sealed tokens (never
	// seal them), at most MaxPreviousStateKeys: to rotate the key, give
	// every replica the new StateKey with the old one here, and drop the
	// old one once StateTTL has passed; no state in flight is refused.
	PreviousStateKeys [][]byte
	// StateTTL bounds how long a requestState stays valid; 0 means 10 minutes.
	StateTTL time.Duration

	// MaxListenStreams caps the subscriptions/listen streams open at once;
	// 0 means 10,000. One more is refused (HTTP 503 over Streamable HTTP).
	MaxListenStreams int
	// MaxListenStreamsPerPrincipal caps the listen streams one principal
	// (PrincipalFrom) has open at once, so that one caller cannot take
	// them all. 0 means a hundredth of MaxListenStreams (100, at least 1)
	// for every authenticated principal, while callers without one (no
	// authentication in front: the "" principal, which nothing tells
	// apart) share MaxListenStreams; a value set applies to every
	// principal, "" included. One more is refused as beyond
	// MaxListenStreams.
	MaxListenStreamsPerPrincipal int
	// MaxListenURIs caps the resourceSubscriptions of one listen request;
	// 0 means 1,000. More is refused with -32602.
	MaxListenURIs int

	// OnceStore records the single-use requestStates (Request.SingleUse)
	// already presented. The default is an in-memory store; replicas that
	// share StateKey share a OnceStore too.
	OnceStore OnceStore

	// Feed carries change events to subscriptions/listen streams; the default
	// is an in-memory feed. Replicas share changes through a shared Feed.
	Feed Feed

	// OmitServerInfo leaves io.modelcontextprotocol/serverInfo out of result
	// _meta.
	OmitServerInfo bool

	// Extensions are advertised in the server capabilities' extensions map.
	Extensions map[string]protocol.Object

	// Legacy configures the legacy era (revisions up to 2025-11-25, the
	// initialize handshake and sessions), which the server serves beside
	// the modern era by default; Legacy.Disabled turns it off and
	// Legacy.ModernDisabled turns the modern era off.
	Legacy legacy.Options

	// Logger receives the server's own diagnostics (handler panics,
	// rejected state). The default discards them.
	Logger *slog.Logger
}

// Server is an MCP server: the stateless core (a method table, and the
// registries of tools, resources and prompts its built-in methods serve),
// which answers a modern request from the request alone, and the legacy
// adapter in front of it, which serves the sessions of handshake-era
// clients. Serve answers every request; it is safe for concurrent use.
// Register features before or while serving.
type Server struct {
	info     protocol.Implementation
	opts     Options
	versions []string
	meta     *protocol.ResultMeta // shared, read-only
	sealer   *sealer
	once     OnceStore
	listens  listenCount
	feed     Feed
	logger   *slog.Logger
	front    *legacy.Adapter // serves both eras in front of the core

	methodsMu sync.Mutex // serializes HandleMethod
	methods   atomic.Pointer[methodTable]
	runTool   atomic.Pointer[ToolCallFunc] // the tools/call middleware around runHandler
	// listenFilters are the extensions' members of the listen filter
	// (HandleListen), replaced, never changed.
	listenFilters atomic.Pointer[map[string]ListenFilter]

	mu          sync.RWMutex
	tools       registry[*toolEntry]
	resources   registry[*resourceEntry]
	templates   registry[*templateEntry]
	prompts     registry[*promptEntry]
	completions map[completionKey]CompleteHandler
	legacyTasks protocol.Object // the 2025-11-25 tasks capability (SetLegacyTasks)

	closeOnce sync.Once
	done      chan struct{}
	closed    context.Context // done once Close was called
	markClose context.CancelFunc
}

// New returns a Server that identifies itself with info.
func New(info protocol.Implementation, opts *Options) *Server {
	s := &Server{info: info, done: make(chan struct{})}
	s.closed, s.markClose = context.WithCancel(context.Background())
	if opts != nil {
		s.opts = *opts
	}
	s.versions = s.opts.Versions
	if len(s.versions) == 0 {
		s.versions = protocol.ModernVersions
	}
	if !s.opts.OmitServerInfo {
		s.meta = (&protocol.ResultMeta{ServerInfo: &s.info}).Freeze()
	}
	key := s.opts.StateKey
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	ttl := s.opts.StateTTL
	if ttl <= 0 {
		ttl = 10 * time.Minute
	}
	sl, err := newSealer(key, s.opts.PreviousStateKeys, ttl)
	if err != nil {
		panic("server: " + err.Error())
	}
	s.sealer = sl
	s.once = s.opts.OnceStore
	if s.once == nil {
		s.once = NewMemoryOnceStore()
	}
	s.feed = s.opts.Feed
	if s.feed == nil {
		s.feed = NewMemoryFeed()
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	lo := s.opts.Legacy
	if lo.Logger == nil {
		lo.Logger = s.logger
	}
	if lo.Principal == nil {
		lo.Principal = PrincipalFrom
	}
	s.front = legacy.New(s, &lo)
	s.methods.Store(&methodTable{})
	run := ToolCallFunc(s.runHandler)
	s.runTool.Store(&run)
	s.builtinMethods()
	return s
}

// Info returns the server's implementation info.
func (s *Server) Info() protocol.Implementation { return s.info }

// Instructions returns the server's instructions for models.
func (s *Server) Instructions() string { return s.opts.Instructions }

// Feed returns the change feed the server publishes to.
func (s *Server) Feed() Feed { return s.feed }

// Versions returns the protocol revisions the server serves.
func (s *Server) Versions() []string { return s.versions }

// Close ends every subscriptions/listen stream with its graceful closing
// result and every legacy session. Requests still running finish
// normally. Close is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.markClose()
		s.front.Close()
	})
	return nil
}

// Capabilities returns the capabilities the server advertises.
func (s *Server) Capabilities() protocol.ServerCapabilities {
	s.mu.RLock()
	defer s.mu.RUnlock()
	caps := protocol.ServerCapabilities{
		Logging:    protocol.Object{},
		Extensions: s.opts.Extensions,
		Tasks:      s.legacyTasks,
	}
	if s.tools.len() > 0 {
		caps.Tools = &protocol.ListChangedCapability{ListChanged: true}
	}
	if s.resources.len() > 0 || s.templates.len() > 0 {
		caps.Resources = &protocol.ResourcesCapability{Subscribe: true, ListChanged: true}
	}
	if s.prompts.len() > 0 {
		caps.Prompts = &protocol.ListChangedCapability{ListChanged: true}
	}
	if s.hasCompletions() {
		caps.Completions = protocol.Object{}
	}
	return caps
}

var (
	_ transport.Handler = (*Server)(nil)
	_ legacy.Core       = (*Server)(nil)
)

// Serve answers one request of either era: modern requests with the core,
// initialize and the requests of legacy sessions through the legacy
// adapter (Options.Legacy). It implements transport.Handler.
func (s *Server) Serve(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	if req.Kind == transport.KindModern && !s.opts.Legacy.ModernDisabled {
		return s.ServeModern(ctx, req)
	}
	return s.front.Serve(ctx, req)
}

// Receive takes the client's notifications and its responses to requests a
// legacy session sent. It implements transport.Handler.
func (s *Server) Receive(ctx context.Context, msg *jsonrpc.Message, sess transport.Session) {
	s.front.Receive(ctx, msg, sess)
}

// Legacy returns the legacy-era sessions, or nil when Options.Legacy
// turns the legacy era off. It implements transport.Handler.
func (s *Server) Legacy() transport.Legacy { return s.front.Legacy() }

// ServeModern answers one request of the modern era, from the request
// alone: the core. Serve uses it for modern requests, and the legacy
// adapter for the requests of legacy sessions, rewritten. It implements
// legacy.Core.
func (s *Server) ServeModern(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	msg := req.Message
	era := EraModern
	if req.Kind == transport.KindSession {
		era = EraLegacy
	}
	m := s.method(msg.Method, era)
	if m == nil {
		if msg.Method == protocol.MethodInitialize && era == EraModern {
			return nil, s.initializeRefusal()
		}
		return nil, protocol.MethodNotFound(msg.Method)
	}
	r, err := s.newRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	defer r.finish()
	if !m.offered() {
		return nil, protocol.MethodNotFound(msg.Method)
	}
	res, err := m.Handler(ctx, r)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &protocol.EmptyResult{}
	}
	s.fillHeader(res)
	return res, nil
}

// invalidMeta is the error of a missing or malformed per-request _meta,
// which the spec answers with HTTP 400 although its code is the generic
// -32602.
func invalidMeta(message string) error {
	return protocol.Mark(protocol.InvalidParams(message), protocol.ErrInvalidMeta)
}

// initializeRefusal answers an initialize that reached the core: one
// carrying modern _meta (the legacy adapter takes the others), which the
// modern era does not define. It names the versions served.
func (s *Server) initializeRefusal() error {
	return jsonrpc.NewError(protocol.CodeMethodNotFound,
		"method not found: initialize; this server does not support the initialize handshake, it serves protocol versions "+strings.Join(s.versions, ", ")+" with per-request _meta",
		struct {
			Supported []string `json:"supported"`
		}{s.versions})
}

// fillHeader sets resultType and the server's _meta on a result.
func (s *Server) fillHeader(res protocol.Result) {
	h := res.Header()
	if h.ResultType == "" {
		h.ResultType = protocol.ResultComplete
	}
	if s.meta == nil {
		return
	}
	if h.Meta == nil {
		h.Meta = s.meta
	} else if h.Meta.ServerInfo == nil {
		h.Meta.ServerInfo = &s.info
	}
}

func (s *Server) supports(version string) bool {
	for _, v := range s.versions {
		if v == version {
			return true
		}
	}
	return false
}
