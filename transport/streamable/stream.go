package streamable

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// stream is the response of one request: it starts as a plain JSON answer
// and turns into an SSE stream at the first notification.
type stream struct {
	mu           sync.Mutex
	ctx          context.Context // the request's; done once the client is gone
	w            http.ResponseWriter
	rc           *http.ResponseController
	sseAllowed   bool
	sse          bool
	done         bool
	broken       bool
	writeTimeout time.Duration
	keepAlive    time.Duration
	timer        *time.Timer
	challenge    string // WWW-Authenticate of the answer, if any
}

var errStreamClosed = errors.New("streamable: stream closed")

// Notify implements transport.Notifier. Without SSE (the client accepts
// JSON only) notifications cannot be delivered and are dropped. Nothing is
// sent once the request is cancelled.
func (s *stream) Notify(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.broken || s.ctx.Err() != nil {
		return errStreamClosed
	}
	if !s.sse {
		if !s.sseAllowed {
			return nil
		}
		if err := s.startLocked(); err != nil {
			return err
		}
	}
	return s.eventLocked(msg)
}

// startLocked sends the SSE response header.
func (s *stream) startLocked() error {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.sse = true
	if err := s.flushLocked(); err != nil {
		return err
	}
	if s.keepAlive > 0 {
		s.timer = time.AfterFunc(s.keepAlive, s.ping)
	}
	return nil
}

func (s *stream) eventLocked(msg []byte) error {
	if err := s.writeLocked(sseEvent(msg)); err != nil {
		return err
	}
	if s.timer != nil {
		s.timer.Reset(s.keepAlive)
	}
	return nil
}

func sseEvent(msg []byte) []byte {
	out := make([]byte, 0, len(msg)+24)
	out = append(out, "event: message\ndata: "...)
	out = append(out, msg...)
	return append(out, '\n', '\n')
}

// ping writes a keep-alive comment on a quiet stream.
func (s *stream) ping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.broken || s.ctx.Err() != nil {
		return
	}
	if s.writeLocked([]byte(":\n\n")) == nil {
		s.timer.Reset(s.keepAlive)
	}
}

func (s *stream) writeLocked(b []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	if _, err := s.w.Write(b); err != nil {
		s.breakLocked()
		return err
	}
	return s.flushLocked()
}

func (s *stream) flushLocked() error {
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.breakLocked()
		return err
	}
	return nil
}

// breakLocked marks the client gone. The failed write has cancelled the
// request's context already (net/http does on a connection write error).
func (s *stream) breakLocked() {
	s.broken = true
}

// finish writes the encoded response (nil: none), with the HTTP status when it is
// plain JSON, and ends the stream.
func (s *stream) finish(body []byte, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
	}

	defer func() { s.done = true }()
	if s.broken || s.ctx.Err() != nil {
		// The client is gone (or the request was cancelled): nothing
		// more is sent for it.
		return
	}
	if body == nil {
		if !s.sse {
			// Cancelled before anything was written: the client is gone.
			s.w.WriteHeader(http.StatusNoContent)
		}
		return
	}
	if s.sse {
		_ = s.eventLocked(body)
		return
	}
	s.w.Header().Set("Content-Type", "application/json")
	if status == http.StatusServiceUnavailable {
		s.w.Header().Set("Retry-After", retryAfter)
	}
	if s.challenge != "" {
		s.w.Header().Set("WWW-Authenticate", s.challenge)
	}
	s.w.WriteHeader(status)
	if len(body) <= smallAnswer {
		// net/http writes it once the handler returns; it fits the
		// socket's buffer, so it needs no deadline (a client that stops
		// reading while pipelining holds only its own connection, as an
		// idle one does; http.Server.WriteTimeout bounds that too).
		_, _ = s.w.Write(body)
		return
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	_, _ = s.w.Write(body)
}

// smallAnswer is the size up to which a JSON answer is written without a
// write deadline.
const smallAnswer = 16 << 10
