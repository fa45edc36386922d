package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Session is a connection to one server in the era detected for it. Its
// methods are safe for concurrent use.
type Session struct {
	c    *Client
	conn transport.ClientConn
	key  string
	// cacheNS scopes the session's cache entries: the target key, or, for
	// a session without one, a name of its own, so that sessions to
	// different servers never share results.
	cacheNS string

	era          Era
	transport    string
	version      string
	serverInfo   protocol.Implementation
	caps         protocol.ServerCapabilities
	instructions string
	supported    []string

	// callChain and inChain are the client's middleware around do and
	// dispatch; nil without middleware.
	callChain CallFunc
	inChain   IncomingFunc

	nextID atomic.Int64
	ctx    context.Context // ends with the session
	cancel context.CancelFunc
	wg     sync.WaitGroup // handlers of legacy server requests

	mu    sync.Mutex
	tools map[string][]transport.HeaderParam // x-mcp-header parameters by tool
	subs  map[string]*Subscription           // by subscription id (JSON text)
	// legacyWatch receives the legacy standalone notifications.
	legacyWatch []*Subscription
	closed      bool
}

// sessionSeq numbers the sessions without a target key.
var sessionSeq atomic.Int64

func newSession(c *Client, conn transport.ClientConn, key string) *Session {
	s := &Session{c: c, conn: conn, key: key, cacheNS: key, tools: map[string][]transport.HeaderParam{}, subs: map[string]*Subscription{}}
	if key == "" {
		s.cacheNS = "\x01" + strconv.FormatInt(sessionSeq.Add(1), 10)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.buildChains()
	conn.Inbound(s.inbound)
	return s
}

// Era returns the session's era.
func (s *Session) Era() Era { return s.era }

// Transport names the session's transport (see ConnectOptions.Transport).
func (s *Session) Transport() string { return s.transport }

// ProtocolVersion returns the revision the session speaks.
func (s *Session) ProtocolVersion() string { return s.version }

// ServerInfo returns the server's implementation info.
func (s *Session) ServerInfo() protocol.Implementation { return s.serverInfo }

// ServerCapabilities returns the server's capabilities.
func (s *Session) ServerCapabilities() protocol.ServerCapabilities { return s.caps }

// Instructions returns the server's instructions for models.
func (s *Session) Instructions() string { return s.instructions }

// SupportedVersions returns the revisions a modern server listed.
func (s *Session) SupportedVersions() []string { return s.supported }

// Close ends the session and its connection.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	subs := make([]*Subscription, 0, len(s.subs)+len(s.legacyWatch))
	for _, sub := range s.subs {
		subs = append(subs, sub)
	}
	subs = append(subs, s.legacyWatch...)
	s.mu.Unlock()
	for _, sub := range subs {
		sub.Close()
	}
	s.cancel()
	err := s.conn.Close()
	s.wg.Wait()
	return err
}

func (s *Session) newID() jsonrpc.ID { return jsonrpc.IntID(s.nextID.Add(1)) }

// detect finds the server's era: a server/discover probe. A result, or a
// modern error, names the revisions the server supports: the newest one
// the client speaks too is chosen, and the era follows from it (a server
// listing only handshake revisions gets initialize). Anything else
// (another error, silence, an HTTP error without a modern body) means a
// legacy server.
func (s *Session) detect(ctx context.Context) error {
	if v := s.c.opts.ProtocolVersion; v != "" && !protocol.IsModern(v) {
		return s.startLegacy(ctx, v) // a handshake revision is pinned
	}
	pctx, cancel := context.WithTimeout(ctx, s.c.opts.ProbeTimeout)
	defer cancel()
	s.era, s.version = EraModern, s.preferredModern()
	resp, err := s.roundTrip(pctx, protocol.MethodDiscover, s.withMeta(nil, nil), nil)
	switch {
	case err == nil && resp.Error == nil:
		return s.acceptDiscover(ctx, resp.Result, true)
	case err == nil && isModernError(resp.Error):
		supported := supportedFrom(resp.Error)
		if supported == nil {
			return resp.Error // a modern server refused the probe itself
		}
		switch v := s.pickVersion(supported, true); {
		case v == "":
			return fmt.Errorf("%w: %v", ErrNoCommonVersion, resp.Error)
		case protocol.IsModern(v):
			s.version = v
			return s.startModern(ctx, true)
		default:
			return s.startLegacy(ctx, v)
		}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return s.startLegacy(ctx, "")
}

func (s *Session) preferredModern() string {
	if v := s.c.opts.ProtocolVersion; v != "" && protocol.IsModern(v) {
		return v
	}
	return protocol.LatestVersion
}

// pickVersion returns the newest revision in supported that the client
// speaks: the pinned one only, when pinned; modern ones only unless
// legacy is true (the era is not pinned modern).
func (s *Session) pickVersion(supported []string, legacy bool) string {
	offered := protocol.ModernVersions
	if legacy {
		offered = append(append([]string(nil), protocol.ModernVersions...), protocol.LegacyVersions...)
	}
	for _, v := range offered {
		if p := s.c.opts.ProtocolVersion; p != "" && p != v {
			continue
		}
		if slices.Contains(supported, v) {
			return v
		}
	}
	return ""
}

// startModern begins a modern session with server/discover.
func (s *Session) startModern(ctx context.Context, versionChosen bool) error {
	s.era = EraModern
	if !versionChosen {
		s.version = s.preferredModern()
	}
	resp, err := s.roundTrip(ctx, protocol.MethodDiscover, s.withMeta(nil, nil), nil)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		// An unsupported-version answer names the versions to retry with;
		// retry once (the same version too: the server may have refused it
		// for a passing reason).
		if v := s.pickVersion(supportedFrom(resp.Error), false); v != "" && !versionChosen {
			s.version = v
			return s.startModern(ctx, true)
		}
		return resp.Error
	}
	return s.acceptDiscover(ctx, resp.Result, false)
}

// acceptDiscover takes a server/discover result. When legacy is true (the
// era is being detected) and the newest revision in common is a handshake
// one, the session goes on with initialize.
func (s *Session) acceptDiscover(ctx context.Context, raw json.RawMessage, legacy bool) error {
	var d protocol.DiscoverResult
	if err := jsonrpc.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("client: reading server/discover: %w", err)
	}
	if !slices.Contains(d.SupportedVersions, s.version) {
		v := s.pickVersion(d.SupportedVersions, legacy)
		if v == "" {
			return fmt.Errorf("%w: the server supports %v", ErrNoCommonVersion, d.SupportedVersions)
		}
		if !protocol.IsModern(v) {
			return s.startLegacy(ctx, v)
		}
		s.version = v
	}
	s.era = EraModern
	s.supported, s.caps, s.instructions = d.SupportedVersions, d.Capabilities, d.Instructions
	if d.Meta != nil && d.Meta.ServerInfo != nil {
		s.serverInfo = *d.Meta.ServerInfo
	}
	if s.c.cache != nil {
		s.c.cache.put(s.cacheKey(protocol.MethodDiscover, nil), raw)
	}
	return nil
}

type initializeResult struct {
	ProtocolVersion string                      `json:"protocolVersion"`
	Capabilities    protocol.ServerCapabilities `json:"capabilities"`
	ServerInfo      protocol.Implementation     `json:"serverInfo"`
	Instructions    string                      `json:"instructions"`
}

// standaloneOpener is implemented by HTTP connections with a legacy GET
// stream.
type standaloneOpener interface {
	OpenStandalone(version string)
	SetSessionVersion(version string)
}

// startLegacy begins a legacy session: initialize, proposing version (""
// proposes the pinned handshake revision, else the newest), then
// notifications/initialized. The server's answer names the revision it
// chose; any handshake revision the client speaks is accepted.
func (s *Session) startLegacy(ctx context.Context, version string) error {
	s.era = EraLegacy
	if version == "" {
		version = protocol.LegacyVersions[0]
		if v := s.c.opts.ProtocolVersion; v != "" && !protocol.IsModern(v) {
			version = v
		}
	}
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": version,
		"capabilities":    s.c.Capabilities(),
		"clientInfo":      s.c.info,
	})
	s.version = ""
	resp, err := s.roundTrip(ctx, protocol.MethodInitialize, params, nil)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return resp.Error
	}
	var r initializeResult
	if err := jsonrpc.Unmarshal(resp.Result, &r); err != nil {
		return fmt.Errorf("client: reading initialize: %w", err)
	}
	if !slices.Contains(protocol.LegacyVersions, r.ProtocolVersion) {
		return fmt.Errorf("%w: the server answered initialize with %q", ErrNoCommonVersion, r.ProtocolVersion)
	}
	s.version, s.caps, s.serverInfo, s.instructions = r.ProtocolVersion, r.Capabilities, r.ServerInfo, r.Instructions
	if err := s.conn.Send(ctx, jsonrpc.AppendNotification(nil, protocol.MethodNotificationInitialized, nil), s.version); err != nil {
		return err
	}
	if o, ok := s.conn.(standaloneOpener); ok {
		o.SetSessionVersion(s.version)
		o.OpenStandalone(s.version)
	}
	return nil
}

// inbound receives what belongs to no call: subscription notifications on
// stdio, and the legacy era's standalone messages and requests.
func (s *Session) inbound(msg *jsonrpc.Message) {
	switch {
	case msg.IsRequest():
		s.serveRequest(msg)
	case msg.IsNotification():
		s.receiveNotification(s.ctx, Incoming{Method: msg.Method, Params: msg.Params})
	}
}

// notification handles a notification outside any call's stream.
func (s *Session) notification(msg *jsonrpc.Message) {
	if msg.Method == protocol.NotificationMessage {
		s.log(msg.Params)
		return
	}
	if msg.Method == protocol.NotificationElicitationComplete {
		var p protocol.ElicitationCompleteParams
		if f := s.c.opts.OnElicitationComplete; f != nil && jsonrpc.Unmarshal(orEmpty(msg.Params), &p) == nil && p.ElicitationID != "" {
			f(p.ElicitationID)
		}
		return
	}
	if sub := s.subscriptionOf(msg); sub != nil {
		s.invalidate(msg)
		sub.deliver(msg)
		return
	}
	// A legacy server's standalone notification.
	s.invalidate(msg)
	s.mu.Lock()
	watchers := append([]*Subscription(nil), s.legacyWatch...)
	s.mu.Unlock()
	for _, w := range watchers {
		w.deliver(msg)
	}
}

func (s *Session) log(params json.RawMessage) {
	if s.c.opts.OnLog == nil {
		return
	}
	var p protocol.LoggingMessageParams
	if jsonrpc.Unmarshal(params, &p) == nil {
		s.c.opts.OnLog(&p)
	}
}

// serveRequest answers a legacy server's request with the client's
// handlers, in its own goroutine (a handler may wait for the user).
func (s *Session) serveRequest(msg *jsonrpc.Message) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		b := s.answer(s.ctx, msg)
		if err := s.conn.Send(s.ctx, b, s.version); err != nil {
			s.c.logger.Warn("answering a server request", "method", msg.Method, "err", err)
		}
	}()
}

// answer runs the handler for a server request (through the middleware)
// and encodes the response.
func (s *Session) answer(ctx context.Context, msg *jsonrpc.Message) []byte {
	res, err := s.receiveRequest(ctx, msg.Method, msg.Params)
	if err == nil {
		res, err = compactResult(res)
	}
	if err != nil {
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			e = jsonrpc.NewError(protocol.CodeInternalError, err.Error(), nil)
		}
		return jsonrpc.AppendError(nil, msg.ID, e)
	}
	return jsonrpc.AppendResult(nil, msg.ID, res)
}

// compactResult checks an answer to a server request (a middleware may
// have made it) and returns it on one line, as stdio needs.
func compactResult(res json.RawMessage) (json.RawMessage, error) {
	if len(res) == 0 || !json.Valid(res) {
		return nil, errors.New("client: no valid result for the server's request")
	}
	if !bytes.ContainsAny(res, "\r\n") {
		return res, nil
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, res)
	return buf.Bytes(), nil
}

// handleInput answers one input request (MRTR or legacy request) with the
// client's handlers.
func (s *Session) handleInput(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	o := s.c.opts
	var res any
	var err error
	switch method {
	case protocol.MethodPing:
		return json.RawMessage("{}"), nil
	case protocol.MethodElicit:
		if o.Elicitation == nil {
			return nil, jsonrpc.NewError(protocol.CodeMethodNotFound, "the client does not support elicitation", nil)
		}
		var p protocol.ElicitParams
		if err := jsonrpc.Unmarshal(orEmpty(params), &p); err != nil {
			return nil, protocol.InvalidParams("elicitation/create params: " + err.Error())
		}
		res, err = o.Elicitation(ctx, &p)
	case protocol.MethodCreateMessage:
		if o.Sampling == nil {
			return nil, jsonrpc.NewError(protocol.CodeMethodNotFound, "the client does not support sampling", nil)
		}
		var p protocol.CreateMessageParams
		if err := jsonrpc.Unmarshal(orEmpty(params), &p); err != nil {
			return nil, protocol.InvalidParams("sampling/createMessage params: " + err.Error())
		}
		res, err = o.Sampling(ctx, &p)
	case protocol.MethodListRoots:
		if o.Roots == nil {
			return nil, jsonrpc.NewError(protocol.CodeMethodNotFound, "the client does not support roots", nil)
		}
		res, err = o.Roots(ctx)
	default:
		return nil, protocol.MethodNotFound(method)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func orEmpty(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}
