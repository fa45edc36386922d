package streamable

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// serveGet serves a session's GET: the stream that Last-Event-ID names,
// resumed after that event; without Last-Event-ID, the standalone stream.
//
// A Last-Event-ID that names no stream the session keeps (it was never
// issued, or the store no longer keeps it: evicted, expired, or kept by a
// replica that shares no event store) is refused with 400, not answered
// with a new standalone stream: the stream the client resumes may be a
// request's, whose response a new stream would never carry, and the client
// would wait for it in silence. Not 404 either, which tells a 2025-11-25
// client its session is gone: the session goes on, and a GET without
// Last-Event-ID opens its standalone stream. A store that fails answers
// 503.
func (x *Handler) serveGet(w http.ResponseWriter, r *http.Request, sess transport.Session) {
	ctx := r.Context()
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		es, err := x.events.Resume(ctx, sess, last)
		switch {
		case err == nil:
			x.follow(w, r, sess, es, last, false)
		case errors.Is(err, ErrUnknownEvent):
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest,
				"Bad Request: Last-Event-ID names no stream this session keeps (it ended or expired); GET without Last-Event-ID opens the session's stream", nil))
		default:
			x.logger.Warn("streamable: resuming a stream", "err", err)
			w.Header().Set("Retry-After", retryAfter)
			httpguard.WriteError(w, http.StatusServiceUnavailable, nil, jsonrpc.NewError(protocol.CodeInternalError, "Service Unavailable: the event store failed; try again later", nil))
		}
		return
	}
	es, err := x.events.Open(ctx, sess, true)
	if err != nil {
		x.logger.Warn("streamable: opening a stream", "err", err)
		w.Header().Set("Retry-After", retryAfter)
		httpguard.WriteError(w, http.StatusServiceUnavailable, nil, jsonrpc.NewError(protocol.CodeInternalError, "Service Unavailable: the event store failed; try again later", nil))
		return
	}
	x.follow(w, r, sess, es, es.Start(), true)
}

// follow writes es to the connection from after the event after: the
// recorded events, then live ones — pulled from the session for the
// standalone stream — until the stream ends, the client goes, the session
// ends or the http.Server shuts down. The client holds the session while
// it follows.
func (x *Handler) follow(w http.ResponseWriter, r *http.Request, sess transport.Session, es EventStream, after string, prime bool) {
	defer sess.Hold()()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(x.shutdown.Watch(r), cancel)()
	go func() {
		// The session's end ends the stream.
		select {
		case <-sess.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	defer rc.SetWriteDeadline(time.Time{})
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(x.opts.WriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if prime && !write(primingFrame(es.Start(), x.retry())) {
		return
	}
	if es.Standalone() {
		// Pull the session's messages into the stream as they come, until
		// this connection ends.
		pulled := make(chan struct{})
		defer func() {
			cancel()
			<-pulled
		}()
		go func() {
			defer close(pulled)
			for {
				m, err := sess.Next(ctx)
				if err != nil {
					return
				}
				// m has left the session's outbox: it goes into the event
				// log even when the client has just left, for the stream
				// that resumes with Last-Event-ID.
				actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
				_, err = es.Append(actx, m, false)
				cancel()
				if err != nil {
					x.logger.Warn("streamable: recording a session's message", "err", err)
					return
				}
			}
		}()
	}
	for {
		wait := ctx
		var stop context.CancelFunc = func() {}
		if x.opts.KeepAlive > 0 {
			wait, stop = context.WithTimeout(ctx, x.opts.KeepAlive)
		}
		events, ended, err := es.Next(wait, after)
		stop()
		for _, e := range events {
			if !write(eventFrame(e.ID, e.Data)) {
				return
			}
			after = e.ID
		}
		switch {
		case ended, ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			if !write([]byte(":\n\n")) {
				return
			}
		case err != nil:
			x.logger.Warn("streamable: reading the event store", "err", err)
			return
		}
	}
}

func (x *Handler) retry() int {
	if x.opts.RetryInterval > 0 {
		return int(x.opts.RetryInterval / time.Millisecond)
	}
	return 1000
}
