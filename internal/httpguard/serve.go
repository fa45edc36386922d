package httpguard

import (
	"context"
	"net/http"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// WriteError answers with status and the JSON-RPC error e, for the
// request id (nil: the id could not be read).
func WriteError(w http.ResponseWriter, status int, id *jsonrpc.ID, e *jsonrpc.Error) {
	var b []byte
	if id == nil {
		b = jsonrpc.AppendErrorNoID(nil, e)
	} else {
		b = jsonrpc.AppendError(nil, *id, e)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Shutdown ends a handler's long-lived streams when an http.Server that
// serves them shuts down, so that Shutdown does not wait for them. Each
// server has its own context: one server shutting down ends its streams
// only, never those of another server (or a later one) serving the same
// handler.
type Shutdown struct {
	mu      sync.Mutex
	servers map[*http.Server]context.Context
}

// NewShutdown returns a Shutdown that watches no server yet.
func NewShutdown() *Shutdown {
	return &Shutdown{servers: map[*http.Server]context.Context{}}
}

// Watch returns a context that ends when the http.Server serving r shuts
// down (registering that once per server); a request served without an
// http.Server gets a context that never ends.
func (s *Shutdown) Watch(r *http.Request) context.Context {
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	if !ok {
		return context.Background()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx, ok := s.servers[srv]; ok {
		return ctx
	}
	// The entry stays after the server shut down, so that a stream it
	// still accepts ends at once.
	ctx, cancel := context.WithCancel(context.Background())
	srv.RegisterOnShutdown(cancel)
	s.servers[srv] = ctx
	return ctx
}
