package tasks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// Mode is whether a tool runs as a task.
type Mode int

const (
	// Never: the tool always answers synchronously (the default).
	Never Mode = iota
	// May: the call becomes a task when it is still running after its
	// Policy's After (or when the handler calls Promote), for a client
	// that declared the extension on the request; otherwise it runs
	// synchronously.
	May
	// Must: as May, but a client that did not declare the extension is
	// refused with -32021 and the requiredCapabilities it needs.
	Must
)

// Policy is how one tool takes part in tasks.
type Policy struct {
	Mode Mode
	// After is how long a call may run before it becomes a task; 0
	// means Options.After.
	After time.Duration
}

// Options configure an Extension. The zero value is usable.
type Options struct {
	// Store keeps the task records; the default is a MemoryStore. Use
	// an SQLiteStore for tasks that survive a restart.
	Store Store
	// TTL is how long a task and its result are kept from its creation;
	// 0 means one hour. A task still running then is cancelled.
	TTL time.Duration
	// PollInterval is the pollIntervalMs suggested to clients; 0 means
	// one second.
	PollInterval time.Duration
	// After is how long a call of a May or Must tool runs before it
	// becomes a task, unless its Policy says; 0 means two seconds.
	After time.Duration
	// MaxRunning bounds the calls of task tools running or waiting for
	// input at once (each holds a goroutine or its call's params); 0
	// means 1,000. Beyond it a May tool's call runs synchronously and a
	// Must tool's is refused as busy (HTTP 503).
	MaxRunning int
	// MaxRunningPerPrincipal bounds those of one principal; 0 means a
	// tenth of MaxRunning (at least 1) for an authenticated principal,
	// and MaxRunning for callers without one.
	MaxRunningPerPrincipal int
	// MaxResultBytes bounds a task's encoded result; 0 means 16 MiB. A
	// larger result fails the task (-32603): the store keeps no more.
	MaxResultBytes int
	// MaxInputResponses bounds the inputResponses of one tasks/update;
	// 0 means 64. More is refused with -32602.
	MaxInputResponses int
	// Logger receives the extension's diagnostics; the default discards
	// them.
	Logger *slog.Logger
}

// Extension is the Tasks extension's server side: install it with
// server.Server.Install. It decides, per tools/call, whether the call
// becomes a task (Policy), runs it in the background, records it in its
// Store and serves tasks/get, tasks/update and tasks/cancel, and the
// status notifications of subscriptions/listen streams that ask for
// taskIds.
type Extension struct {
	opts  Options
	store Store
	log   *slog.Logger
	srv   atomic.Pointer[server.Server]

	mu          sync.Mutex
	policies    map[string]Policy
	runs        map[string]*run // task id → running or waiting for input
	running     int             // runs holding a slot (before and after promotion)
	byPrincipal map[string]int
	closed      bool
	lastSweep   time.Time
	changed     chan struct{}      // closed and replaced at each change of a task (notify)
	stopRelay   context.CancelFunc // ends the feed subscription of relay.go, if any
	wg          sync.WaitGroup
}

// New returns an Extension with the options given (nil for defaults).
func New(opts *Options) *Extension {
	x := &Extension{policies: map[string]Policy{}, runs: map[string]*run{}, byPrincipal: map[string]int{}, changed: make(chan struct{})}
	if opts != nil {
		x.opts = *opts
	}
	o := &x.opts
	if o.Store == nil {
		o.Store = NewMemoryStore()
	}
	if o.TTL <= 0 {
		o.TTL = time.Hour
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.After <= 0 {
		o.After = 2 * time.Second
	}
	if o.MaxRunning <= 0 {
		o.MaxRunning = 1000
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = 16 << 20
	}
	if o.MaxInputResponses <= 0 {
		o.MaxInputResponses = 64
	}
	x.store = o.Store
	x.log = o.Logger
	if x.log == nil {
		x.log = slog.New(slog.DiscardHandler)
	}
	return x
}

// ID implements server.Extension.
func (x *Extension) ID() string { return ID }

// Store returns the extension's store.
func (x *Extension) Store() Store { return x.store }

// SetTool sets the Policy of the named tool (registered before or after).
func (x *Extension) SetTool(name string, p Policy) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.policies[name] = p
}

func (x *Extension) policy(name string) Policy {
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.policies[name]
	if p.After <= 0 {
		p.After = x.opts.After
	}
	return p
}

// Register implements server.Extension: it adds tasks/get, tasks/update
// and tasks/cancel, the tools/call middleware and the taskIds member of
// the listen filter to s; and for 2025-11-25 legacy sessions that
// revision's tasks capability, tasks/get, tasks/result, tasks/list,
// tasks/cancel and the execution.taskSupport of tools/list (legacy.go).
func (x *Extension) Register(s *server.Server) (protocol.Object, error) {
	if !x.srv.CompareAndSwap(nil, s) {
		return nil, errors.New("tasks: the extension is installed on a server already")
	}
	both := server.EraModern | server.EraLegacy
	for _, m := range []server.Method{
		{Name: MethodGet, Handler: x.serveGet, Eras: both},
		{Name: MethodUpdate, Handler: x.serveUpdate, Eras: server.EraModern},
		{Name: MethodCancel, Handler: x.serveCancel, Eras: both},
		{Name: MethodResult, Handler: x.serveResult, Eras: server.EraLegacy},
		{Name: MethodList, Handler: x.serveList, Eras: server.EraLegacy},
	} {
		s.HandleMethod(m)
	}
	x.registerLegacy(s)
	s.UseToolCalls(x.middleware)
	s.HandleListen(server.ListenFilter{Key: "taskIds", Accept: x.acceptListen})
	x.startRelay(s)
	return nil, nil
}

// Close cancels every task still running or waiting for input (they
// end cancelled), ends its subscription to a shared feed (relay.go) and
// waits for their handlers to return. Calls that come after run
// synchronously.
func (x *Extension) Close() error {
	x.mu.Lock()
	x.closed = true
	stop := x.stopRelay
	runs := make([]*run, 0, len(x.runs))
	for _, t := range x.runs {
		runs = append(runs, t)
	}
	x.mu.Unlock()
	for _, t := range runs {
		x.cancelRun(context.Background(), t, "the server is shutting down")
	}
	if stop != nil {
		stop()
	}
	x.wg.Wait()
	return nil
}

// missing is the -32021 error of a client that did not declare the
// extension.
func missing() error {
	return protocol.MissingCapability(protocol.ClientCapabilities{Extensions: map[string]protocol.Object{ID: {}}})
}

// declared reports whether the request's client declared the extension
// on it, in the modern era: the 2025-11-25 form of tasks is another, and a
// legacy result cannot carry resultType task.
func declared(r *server.Request) bool {
	caps := r.ClientCapabilities()
	if caps == nil || r.Legacy() {
		return false
	}
	_, ok := caps.Extensions[ID]
	return ok
}

// newID returns a task handle: 128 random bits, base64url, never starting
// with "-" (a command line would read such an id as a flag: `mcpkit task
// wait URL ID`); one in 64 draws is drawn again.
func newID() string {
	for {
		var b [16]byte
		_, _ = rand.Read(b[:])
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id
		}
	}
}

// reserve takes a running slot for principal.
func (x *Extension) reserve(principal string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed || x.running >= x.opts.MaxRunning {
		return false
	}
	per := x.opts.MaxRunningPerPrincipal
	if per <= 0 {
		per = x.opts.MaxRunning
		if principal != "" {
			per = max(1, x.opts.MaxRunning/10)
		}
	}
	if x.byPrincipal[principal] >= per {
		return false
	}
	x.running++
	x.byPrincipal[principal]++
	return true
}

// release gives back t's slot, once, and forgets t.
func (x *Extension) release(t *run) {
	if !t.released.CompareAndSwap(false, true) {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.running--
	if x.byPrincipal[t.principal]--; x.byPrincipal[t.principal] <= 0 {
		delete(x.byPrincipal, t.principal)
	}
	if t.id != "" && x.runs[t.id] == t {
		delete(x.runs, t.id)
	}
}

var errBusy = protocol.Mark(protocol.InternalError("server busy: too many tasks are running; try again later"), protocol.ErrUnavailable)

// guarded runs next on call, turning a panic into an internal error.
func (x *Extension) guarded(ctx context.Context, next server.ToolCallFunc, call *server.CallRequest) (res protocol.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			x.log.Error("tasks: tool panicked", "tool", call.Name, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, protocol.InternalError("internal error in tool "+call.Name)
		}
	}()
	return next(ctx, call)
}

// statusError wraps an unexpected store failure.
func storeError(what string, err error) error {
	return protocol.InternalError(fmt.Sprintf("task store: %s: %v", what, err))
}
