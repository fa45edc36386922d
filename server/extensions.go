package server

import (
	"context"
	"errors"
	"maps"

	"github.com/mcpkit/mcpkit/protocol"
)

// An Extension adds to a server what an MCP extension defines, through the
// same API the built-in features use: methods (HandleMethod), a part in
// every tools/call (UseToolCalls), features, and its entry in the
// capabilities' extensions map. Its requests' _meta keys are in
// Request.Meta.Extra; its results may carry a resultType of its own.
// Install it with Server.Install.
type Extension interface {
	// ID is the extension identifier, the key it is advertised under in
	// capabilities.extensions (for instance io.modelcontextprotocol/tasks).
	ID() string
	// Register adds the extension to s and returns the settings it
	// advertises (nil means none, sent as {}). It is called once, by
	// Install; an error leaves the extension unadvertised.
	Register(s *Server) (settings protocol.Object, err error)
}

// Install registers ext on the server and advertises it in the
// capabilities' extensions map (server/discover). Legacy sessions are
// served the methods it registers for EraLegacy; their initialize result
// advertises no extension, as no legacy revision defines the map.
func (s *Server) Install(ext Extension) error {
	if ext == nil || ext.ID() == "" {
		return errors.New("server: Install needs an extension with an identifier")
	}
	settings, err := ext.Register(s)
	if err != nil {
		return err
	}
	s.AddExtension(ext.ID(), settings)
	return nil
}

// AddExtension advertises the extension id, with its settings (nil means
// none, sent as {}), in the capabilities' extensions map beside
// Options.Extensions, replacing an earlier entry for id. Install calls it
// for an Extension; call it directly for an extension that adds nothing
// the server serves (one whose features are ordinary tools and resources
// with _meta of its own, for instance).
func (s *Server) AddExtension(id string, settings protocol.Object) {
	if id == "" {
		panic("server: AddExtension needs an extension identifier")
	}
	if settings == nil {
		settings = protocol.Object{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A new map: Capabilities hands out the current one, and Options'
	// belongs to the caller.
	ext := make(map[string]protocol.Object, len(s.opts.Extensions)+1)
	maps.Copy(ext, s.opts.Extensions)
	ext[id] = settings
	s.opts.Extensions = ext
}

// ToolCallFunc runs one tools/call whose tool was found, whose caller may
// use it and whose arguments were validated against its input schema. The
// innermost one runs the tool's handler and returns a
// *protocol.CallToolResult, or a *protocol.InputRequiredResult when the
// handler asked for input; a middleware may return a result of its own
// resultType instead (an extension's), which the client must have
// declared the extension for.
type ToolCallFunc func(ctx context.Context, call *CallRequest) (protocol.Result, error)

// ToolCallMiddleware wraps the running of every tools/call.
type ToolCallMiddleware func(next ToolCallFunc) ToolCallFunc

// UseToolCalls wraps every tools/call in mw, the first outermost, inside
// the middleware already installed. Call it before serving.
func (s *Server) UseToolCalls(mw ...ToolCallMiddleware) {
	s.methodsMu.Lock()
	defer s.methodsMu.Unlock()
	run := *s.runTool.Load()
	for i := len(mw) - 1; i >= 0; i-- {
		run = mw[i](run)
	}
	s.runTool.Store(&run)
}

// QueueLegacy queues msg, an encoded JSON-RPC notification, for the
// standalone stream of the legacy session id (Request.SessionID), on
// whichever replica its client follows that stream. An extension sends
// through it what concerns a session outside its requests, such as the
// status notifications of the tasks it created. It fails when the session
// is gone or the legacy era is off.
func (s *Server) QueueLegacy(ctx context.Context, sessionID string, msg []byte) error {
	return s.front.Queue(ctx, sessionID, msg)
}

// SetLegacyTasks sets the tasks capability of revision 2025-11-25 (its
// list, cancel and requests members) that the initialize result of a
// 2025-11-25 legacy session advertises; nil advertises none. An extension
// that serves that revision's tasks methods to legacy sessions sets it in
// Register. server/discover never carries it.
func (s *Server) SetLegacyTasks(caps protocol.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.legacyTasks = caps
}
