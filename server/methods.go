package server

import (
	"context"
	"maps"

	"github.com/mcpkit/mcpkit/protocol"
)

// Era is a set of protocol eras a method is served in.
type Era uint8

const (
	// EraModern is revision 2026-07-28 and later: requests that carry their
	// version and capabilities in _meta, answered from the request alone.
	EraModern Era = 1 << iota
	// EraLegacy is the handshake revisions (2025-11-25 and before): the
	// requests of legacy sessions, which the legacy adapter rewrites into
	// modern ones before the method sees them, and whose results it shapes
	// for the session's revision.
	EraLegacy
)

// MethodHandler answers one request of a method: a result (whose
// resultType and server _meta the server fills when the handler leaves
// them empty) or an error (a *protocol.Error keeps its code; any other
// error is -32603).
type MethodHandler func(ctx context.Context, r *Request) (protocol.Result, error)

// Method is how the server serves one JSON-RPC request method. The
// built-in methods (server/discover, tools/list, tools/call,
// resources/list, resources/templates/list, resources/read, prompts/list,
// prompts/get, completion/complete, subscriptions/listen) are Methods that
// New registers with HandleMethod, as an extension registers its own.
type Method struct {
	// Name is the method, as in the JSON-RPC request.
	Name string
	// Handler answers its requests.
	Handler MethodHandler
	// Eras are the eras the method is served in; 0 means EraModern. A
	// request of another era is answered as for an unknown method (-32601).
	Eras Era
	// Offered, when set, reports whether the server offers the method now:
	// the capability it belongs to has something in it. While it reports
	// false, the method is answered as unknown (-32601).
	Offered func() bool
}

// methodTable is the server's methods by name; it is replaced, never
// changed, so that a request looks a method up without a lock.
type methodTable map[string]*Method

// HandleMethod registers m, replacing a method of the same name (a
// built-in one included: replacing tools/call changes how every tool is
// called). It panics when m has no name or no handler, as net/http does
// on an invalid pattern. Methods may be registered before or while
// serving.
func (s *Server) HandleMethod(m Method) {
	if m.Name == "" || m.Handler == nil {
		panic("server: HandleMethod needs a method name and a handler")
	}
	if m.Eras == 0 {
		m.Eras = EraModern
	}
	s.methodsMu.Lock()
	defer s.methodsMu.Unlock()
	old := *s.methods.Load()
	next := make(methodTable, len(old)+1)
	maps.Copy(next, old)
	next[m.Name] = &m
	s.methods.Store(&next)
}

// LookupMethod returns the method registered under name (a built-in one
// included), whatever its eras, so that an extension can wrap it: register
// a Method of the same name whose handler calls the one found.
func (s *Server) LookupMethod(name string) (Method, bool) {
	m := (*s.methods.Load())[name]
	if m == nil {
		return Method{}, false
	}
	return *m, true
}

// method returns the method named name when it is served in era.
func (s *Server) method(name string, era Era) *Method {
	m := (*s.methods.Load())[name]
	if m == nil || m.Eras&era == 0 {
		return nil
	}
	return m
}

// offered reports whether the server offers m now.
func (m *Method) offered() bool { return m.Offered == nil || m.Offered() }

// HasMethod reports whether the server serves method in the modern era now.
func (s *Server) HasMethod(method string) bool {
	m := s.method(method, EraModern)
	return m != nil && m.offered()
}

// builtinMethods registers the methods of the specification's core.
func (s *Server) builtinMethods() {
	hasTools := func() bool { return s.tools.count() > 0 }
	hasResources := func() bool { return s.resources.count() > 0 || s.templates.count() > 0 }
	hasPrompts := func() bool { return s.prompts.count() > 0 }
	both := EraModern | EraLegacy
	for _, m := range []Method{
		{Name: protocol.MethodDiscover, Handler: s.serveDiscover},
		{Name: protocol.MethodSubscriptionsListen, Handler: s.serveListen},
		{Name: protocol.MethodToolsList, Handler: s.serveListTools, Eras: both, Offered: hasTools},
		{Name: protocol.MethodToolsCall, Handler: s.serveCallTool, Eras: both, Offered: hasTools},
		{Name: protocol.MethodResourcesList, Handler: s.serveListResources, Eras: both, Offered: hasResources},
		{Name: protocol.MethodResourceTemplatesList, Handler: s.serveListTemplates, Eras: both, Offered: hasResources},
		{Name: protocol.MethodResourcesRead, Handler: s.serveRead, Eras: both, Offered: hasResources},
		{Name: protocol.MethodPromptsList, Handler: s.serveListPrompts, Eras: both, Offered: hasPrompts},
		{Name: protocol.MethodPromptsGet, Handler: s.serveGetPrompt, Eras: both, Offered: hasPrompts},
		{Name: protocol.MethodComplete, Handler: s.serveComplete, Eras: both, Offered: func() bool { return s.has(s.hasCompletions) }},
	} {
		s.HandleMethod(m)
	}
}

// has reports what f reports with the registries read-locked.
func (s *Server) has(f func() bool) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return f()
}
