package client

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Era is the protocol era a session speaks.
type Era int

// Eras.
const (
	EraAuto   Era = iota // detect (the default)
	EraModern            // revision 2026-07-28 and later: per-request _meta
	EraLegacy            // the initialize handshake (2025-11-25 and earlier)
)

func (e Era) String() string {
	switch e {
	case EraModern:
		return "modern"
	case EraLegacy:
		return "legacy"
	}
	return "auto"
}

// Options configure a Client. The zero value is usable: a client with no
// capabilities that detects the era.
type Options struct {
	// Elicitation, Sampling and Roots answer the server's requests for
	// input. A capability is declared only when its handler is set.
	Elicitation func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error)
	Sampling    func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error)
	Roots       func(ctx context.Context) (*protocol.ListRootsResult, error)
	// ElicitationModes lists the elicitation modes declared ("form",
	// "url"); nil means form only.
	ElicitationModes []string
	// OnElicitationComplete, when set, learns that the out-of-band
	// interaction of a URL elicitation has completed: a legacy (2025-11-25)
	// server's notifications/elicitation/complete, with the elicitationId
	// its elicitation/create carried (ElicitParams.ElicitationID). The
	// modern era has no such notification: the client's retry carries the
	// outcome.
	OnElicitationComplete func(elicitationID string)
	// Extensions declares the extensions the client supports, by
	// identifier (such as "io.modelcontextprotocol/ui"), each with its
	// settings object (nil or empty for none), in the capabilities of
	// every request (modern era) or of initialize (legacy era).
	Extensions map[string]protocol.Object

	// Era pins the era; EraAuto detects it. ProtocolVersion pins the
	// revision (of the pinned or detected era); "" picks the newest both
	// sides speak.
	Era             Era
	ProtocolVersion string

	// LogLevel, when set, asks the server for log messages at or above it;
	// they go to OnLog.
	LogLevel protocol.LoggingLevel
	OnLog    func(*protocol.LoggingMessageParams)

	// ProbeTimeout bounds the server/discover probe on stdio; a server
	// silent that long is taken for a legacy one. 0 means 5 seconds.
	ProbeTimeout time.Duration
	// MaxRounds bounds the input rounds of one request; 0 means 16.
	MaxRounds int

	// DisableCache turns result caching off. CacheKey names the
	// authorization context (a user or token id): results the server marks
	// private are cached under it and never served for another.
	DisableCache bool
	CacheKey     string

	// Middleware wraps every call the client's sessions make and every
	// message their servers send outside a response (see Middleware), the
	// first outermost.
	Middleware []Middleware

	// Logger receives warnings (tools rejected for invalid x-mcp-header
	// annotations, for instance); the default discards them.
	Logger *slog.Logger
}

// Client holds what is common to a client's sessions: its identity, its
// handlers, the eras it detected per target, and the result cache.
type Client struct {
	info   protocol.Implementation
	opts   Options
	logger *slog.Logger
	cache  *cache

	mu   sync.Mutex
	eras map[string]detected // per target key
}

// detected is what Connect learned about a target.
type detected struct {
	era       Era
	transport string
}

// New returns a client that identifies itself with info.
func New(info protocol.Implementation, opts *Options) *Client {
	c := &Client{info: info, eras: map[string]detected{}}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.ProbeTimeout <= 0 {
		c.opts.ProbeTimeout = 5 * time.Second
	}
	if c.opts.MaxRounds <= 0 {
		c.opts.MaxRounds = 16
	}
	c.logger = c.opts.Logger
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if !c.opts.DisableCache {
		c.cache = newCache()
	}
	return c
}

// Capabilities returns the capabilities the client declares: those whose
// handlers are set.
func (c *Client) Capabilities() *protocol.ClientCapabilities {
	caps := &protocol.ClientCapabilities{}
	if c.opts.Elicitation != nil {
		caps.Elicitation = &protocol.ElicitationCapability{}
		for _, m := range c.opts.ElicitationModes {
			switch m {
			case "form":
				caps.Elicitation.Form = protocol.Object{}
			case "url":
				caps.Elicitation.URL = protocol.Object{}
			}
		}
	}
	if c.opts.Sampling != nil {
		caps.Sampling = &protocol.SamplingCapability{}
	}
	if c.opts.Roots != nil {
		caps.Roots = &protocol.RootsCapability{}
	}
	if len(c.opts.Extensions) > 0 {
		caps.Extensions = make(map[string]protocol.Object, len(c.opts.Extensions))
		for id, settings := range c.opts.Extensions {
			if settings == nil {
				settings = protocol.Object{}
			}
			caps.Extensions[id] = settings
		}
	}
	return caps
}

// Transport names, as Session.Transport reports them.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "http+sse" // the 2024-11-05 HTTP+SSE transport
	TransportInMemory       = "in-memory"
)

// ConnectOptions adjust one Connect.
type ConnectOptions struct {
	// Key names the target (a command line, an HTTP endpoint) under which
	// the detected era and transport are remembered; "" remembers nothing.
	Key string
	// Transport names the transport for Session.Transport and for what is
	// remembered under Key (one of the Transport constants, or a name of
	// the caller's); "" names mcpkit's own transports by their type.
	Transport string
	// Era, when set, pins the era of this connection over Options.Era
	// (a transport that has one era only, such as HTTP+SSE).
	Era Era
}

// Connect speaks to the server behind conn, detecting its era (unless
// pinned), and returns the session. The session owns conn and closes it.
func (c *Client) Connect(ctx context.Context, conn transport.ClientConn, opts *ConnectOptions) (*Session, error) {
	var o ConnectOptions
	if opts != nil {
		o = *opts
	}
	s := newSession(c, conn, o.Key)
	s.transport = o.Transport
	if s.transport == "" {
		s.transport = transportOf(conn)
	}
	pinned := o.Era
	if pinned == EraAuto {
		pinned = c.opts.Era
	}
	era := pinned
	remembered := false
	if era == EraAuto && o.Key != "" {
		var d detected
		c.mu.Lock()
		d, remembered = c.eras[o.Key]
		c.mu.Unlock()
		era = d.era
	}
	var err error
	switch era {
	case EraModern:
		err = s.startModern(ctx, false)
	case EraLegacy:
		err = s.startLegacy(ctx, "")
	default:
		err = s.detect(ctx)
	}
	if err != nil && remembered && ctx.Err() == nil {
		// The remembered era no longer holds (the server was replaced):
		// probe again.
		c.Forget(o.Key)
		err = s.detect(ctx)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	if o.Key != "" && c.opts.Era == EraAuto {
		c.mu.Lock()
		c.eras[o.Key] = detected{era: s.era, transport: s.transport}
		c.mu.Unlock()
	}
	return s, nil
}

// remembered returns what an earlier Connect detected for key.
func (c *Client) remembered(key string) (detected, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.eras[key]
	return d, ok
}

// Forget drops the era remembered for a target, so that the next Connect
// probes again (a server upgraded in place, for instance).
func (c *Client) Forget(key string) {
	c.mu.Lock()
	delete(c.eras, key)
	c.mu.Unlock()
}

// isModernError reports whether a JSON-RPC error is one only a modern
// server sends: an era-detection signal.
func isModernError(e *jsonrpc.Error) bool {
	switch e.Code {
	case protocol.CodeHeaderMismatch, protocol.CodeMissingRequiredClientCapability, protocol.CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// supportedFrom returns the versions an UnsupportedProtocolVersion error
// lists.
func supportedFrom(e *jsonrpc.Error) []string {
	var d protocol.UnsupportedVersionData
	if e.Code != protocol.CodeUnsupportedProtocolVersion || jsonrpc.Unmarshal(e.Data, &d) != nil {
		return nil
	}
	return d.Supported
}

// ErrNoCommonVersion is returned when client and server share no revision.
var ErrNoCommonVersion = errors.New("client: no protocol version in common with the server")
