package streamable

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// serveLegacyRequest runs a request of a legacy session. The request is
// not tied to its connection: in the legacy era a disconnect is no
// cancellation (the session's end or notifications/cancelled is). It runs
// on a goroutine of its own, so that its response can end early — the
// client left, or the handler closed the stream (CloseStream) — while it
// goes on, its events recorded in the EventStore for a client that
// resumes with Last-Event-ID. ServeHTTP returns when the response is
// complete or ended early; net/http ends the response then, on HTTP/1.x
// and HTTP/2 alike.
func (x *Handler) serveLegacyRequest(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, sess transport.Session, msg *jsonrpc.Message, accept httpguard.Acceptance) {
	out := &legacyStream{x: x, sess: sess, w: w, rc: rc, sseAllowed: accept.SSE, over: make(chan struct{}), release: sess.Hold()}
	if accept.PreferSSE || !accept.JSON {
		out.mu.Lock()
		err := out.startLocked(r.Context())
		out.mu.Unlock()
		if err != nil {
			out.detach()
			return
		}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	ctx = context.WithValue(ctx, controllerKey{}, out)
	req := &transport.Request{Message: msg, Kind: transport.KindSession, Session: sess, Notifier: out, Cancel: cancel}
	x.runner.run(func() {
		defer cancel()
		res, err := x.serveRecovered(ctx, req)
		out.finish(ctx, legacyAnswer{transport.Respond(ctx, msg.ID, res, err), sessionStatus(err), challenge(ctx, err)})
	})
	select {
	case <-out.over:
	case <-r.Context().Done():
		// The client left: what follows goes to the log only.
		out.detach()
	}
}

// legacyAnswer is a session request's outcome: its response, and the HTTP
// status and WWW-Authenticate challenge it has when answered as plain JSON.
type legacyAnswer struct {
	resp      *jsonrpc.Response
	status    int
	challenge string
}

// legacyStream is the response of one session request: JSON until the
// first message for the client, then an SSE stream whose events are
// recorded for resumption. Once detached (the client left, the handler
// closed the stream, a write failed) nothing more is written to w, and
// ServeHTTP may return.
type legacyStream struct {
	x          *Handler
	sess       transport.Session
	mu         sync.Mutex
	w          http.ResponseWriter
	rc         *http.ResponseController
	sseAllowed bool
	es         EventStream // set once SSE started
	detached   bool
	finished   bool
	over       chan struct{} // closed once ServeHTTP may return
	release    func()        // of the session's hold while the client waits
}

func (s *legacyStream) startLocked(ctx context.Context) error {
	es, err := s.x.events.Open(ctx, s.sess, false)
	if err != nil {
		return err
	}
	s.es = es
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	return s.writeLocked(primingFrame(es.Start(), s.x.retry()))
}

// Notify sends a notification or a request to the client on this stream.
func (s *legacyStream) Notify(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return errStreamClosed
	}
	ctx := context.Background()
	if s.es == nil {
		if !s.sseAllowed || s.detached {
			// JSON only, or the client left before the stream started:
			// the response can no longer become a stream.
			return errStreamClosed
		}
		if err := s.startLocked(ctx); err != nil {
			return err
		}
	}
	id, err := s.es.Append(ctx, msg, false)
	if err != nil {
		return err
	}
	if !s.detached {
		_ = s.writeLocked(eventFrame(id, msg))
	}
	return nil
}

func (s *legacyStream) writeLocked(b []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.x.opts.WriteTimeout))
	_, err := s.w.Write(b)
	if err == nil {
		err = s.rc.Flush()
	}
	if err != nil {
		s.detachLocked()
	}
	return err
}

// closeStream ends the response while the request goes on; the client
// resumes the stream with Last-Event-ID.
func (s *legacyStream) closeStream() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.es == nil && s.sseAllowed && !s.detached {
		// Nothing to resume from yet: start the stream so that the client
		// has an event id to resume with.
		if s.startLocked(context.Background()) != nil {
			return
		}
	}
	if s.es != nil {
		s.detachLocked()
	}
}

func (s *legacyStream) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.detachLocked()
}

// detachLocked stops writing to the connection and lets ServeHTTP return;
// the client no longer holds the session for this request.
func (s *legacyStream) detachLocked() {
	if s.detached {
		return
	}
	s.detached = true
	_ = s.rc.SetWriteDeadline(time.Time{})
	close(s.over)
	s.release()
}

// finish records the response and, while the client is there, writes it.
func (s *legacyStream) finish(ctx context.Context, a legacyAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	s.finished = true
	defer s.detachLocked()
	if a.resp == nil {
		if s.es != nil {
			_ = s.es.End(ctx)
		} else if !s.detached {
			s.w.WriteHeader(http.StatusNoContent)
		}
		return
	}
	body := a.resp.Append(nil)
	if s.es != nil {
		id, err := s.es.Append(ctx, body, true)
		if err == nil && !s.detached {
			_ = s.writeLocked(eventFrame(id, body))
		}
		return
	}
	if s.detached {
		return // the client left before anything was sent
	}
	s.w.Header().Set("Content-Type", "application/json")
	if a.challenge != "" {
		s.w.Header().Set("WWW-Authenticate", a.challenge)
	}
	s.w.WriteHeader(a.status)
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.x.opts.WriteTimeout))
	_, _ = s.w.Write(body)
}

// waits reports whether the client still waits for the response on this
// connection.
func (s *legacyStream) waits() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.detached
}

// primingFrame is a stream's first event: an id to resume from, the retry
// interval and empty data.
func primingFrame(id string, retryMs int) []byte {
	return []byte("id: " + id + "\nretry: " + strconv.Itoa(retryMs) + "\ndata: \n\n")
}

// eventFrame is a recorded event as sent.
func eventFrame(id string, msg []byte) []byte {
	frame := make([]byte, 0, len(msg)+len(id)+32)
	frame = append(frame, "id: "...)
	frame = append(frame, id...)
	frame = append(frame, "\nevent: message\ndata: "...)
	frame = append(frame, msg...)
	return append(frame, '\n', '\n')
}

type controllerKey struct{}

// ResponseController gives the handler of a request what only the
// Streamable HTTP transport can do with its response, in the spirit of
// net/http's ResponseController: get one with NewResponseController from
// the context the request is served with.
type ResponseController struct {
	s *legacyStream // nil: not a legacy-era request over this transport
}

// NewResponseController returns the controller of the response of the
// request served with ctx. Its methods return http.ErrNotSupported (or
// report the client waiting) when the request is not a legacy-era one
// served by a Handler.
func NewResponseController(ctx context.Context) *ResponseController {
	s, _ := ctx.Value(controllerKey{}).(*legacyStream)
	return &ResponseController{s: s}
}

// CloseStream ends the HTTP response carrying the request's SSE stream
// while the request goes on: the client (revision 2025-11-25) reconnects
// with Last-Event-ID and receives the rest (server-side polling). A
// response still plain JSON becomes a stream first, when the client
// accepts one, so that it has an event id to resume from. Modern requests
// have no such power — closing their stream cancels them — and get
// http.ErrNotSupported, as do requests served by other transports.
func (c *ResponseController) CloseStream() error {
	if c.s == nil {
		return http.ErrNotSupported
	}
	c.s.closeStream()
	return nil
}

// ClientWaits reports whether the client still waits for the response on
// its connection: false once it left, or the stream was closed or broke.
// A request served otherwise reports true.
func (c *ResponseController) ClientWaits() bool {
	return c.s == nil || c.s.waits()
}

// runner runs legacy requests on goroutines of their own, kept for the
// next request for keepIdle after one ends: a request handed to a waiting
// goroutine skips making one and growing its stack (growStack).
type runner struct {
	jobs chan func() // unbuffered: a send succeeds when a goroutine waits
}

// keepIdle is how long a runner's goroutine waits for the next request.
const keepIdle = 200 * time.Millisecond

// run runs f on a waiting goroutine, or a new one.
func (r *runner) run(f func()) {
	select {
	case r.jobs <- f:
	default:
		go r.work(f)
	}
}

func (r *runner) work(f func()) {
	growStack()
	t := time.NewTimer(keepIdle)
	defer t.Stop()
	for {
		f()
		t.Reset(keepIdle)
		select {
		case f = <-r.jobs:
		case <-t.C:
			return
		}
	}
}

// growStack grows the calling goroutine's stack to 32 KiB at once, while
// it is one frame deep: a runner's goroutine is new, and serving
// it grows a new goroutine's stack twice (8 to 32 KiB) deep in the core,
// where each copy walks every frame; that was a quarter of the CPU of a
// legacy tools/call (BenchmarkHTTP/mcpkit/legacy in bench/). Growing it
// here costs one copy of one frame.
//
//go:noinline
func growStack() byte {
	var b [20 << 10]byte
	b[stackProbe] = 1 // an index the compiler cannot know: b stays
	return b[len(b)-1-stackProbe]
}

// stackProbe is growStack's index; a variable, so that b is not elided.
var stackProbe = 0
