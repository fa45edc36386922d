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
// serves the handler shuts down, so that Shutdown does not wait for them.
type Shutdown struct {
	ctx    context.Context
	cancel context.CancelFunc
	hooked sync.Map // *http.Server → true once the hook is registered
}

// NewShutdown returns a Shutdown whose context no server has ended yet.
func NewShutdown() *Shutdown {
	s := &Shutdown{}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Watch makes the http.Server serving r (once per server) end the
// returned context when it shuts down.
func (s *Shutdown) Watch(r *http.Request) context.Context {
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok {
		if _, loaded := s.hooked.LoadOrStore(srv, true); !loaded {
			srv.RegisterOnShutdown(s.cancel)
		}
	}
	return s.ctx
}
