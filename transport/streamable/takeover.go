package streamable

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// A subscriptions/listen stream lasts as long as the client stays; most of
// its life it is idle. Served like other requests it would keep net/http's
// connection goroutine, its background reader and the connection's 8 KiB
// of buffers. On HTTP/1.x the handler takes such a stream over instead
// (http.Hijacker): it answers on the raw connection itself. With a handler
// that implements transport.AsyncHandler (the core does) an idle stream
// then holds no goroutine at all: its subscription, a keep-alive timer and
// the socket. A client that goes away is noticed at once on Linux (while
// streams are open one goroutine per handler watches their sockets with
// epoll), elsewhere when a write to it fails: at the latest with the next
// keep-alive comment.

// takeOver serves a listen request on the hijacked connection. It returns
// false, having done nothing, when the connection cannot be hijacked
// (HTTP/2, a ResponseWriter without Hijack) or keep-alive comments are
// disabled (they are how a departed client is noticed).
func (x *Handler) takeOver(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
	if r.ProtoMajor != 1 || x.opts.KeepAlive <= 0 {
		return false
	}
	// Headers a middleware set (CORS, for instance) go out with the stream.
	hdr := w.Header().Clone()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	_ = conn.SetDeadline(time.Time{})
	// The request's context ends when ServeHTTP returns; the stream's
	// ends when its client goes or the handler closes its streams.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	st := &rawStream{set: &x.streams, conn: conn, hdr: hdr, ctx: ctx, cancel: cancel, chunked: r.ProtoAtLeast(1, 1),
		writeTimeout: x.opts.WriteTimeout, keepAlive: x.opts.KeepAlive}
	x.streams.add(st)
	st.unwatch = x.hangups.watch(conn, st.hangup)
	x.hookShutdown(r)
	if ah, ok := x.h.(transport.AsyncHandler); ok {
		// No goroutine waits for the stream: the feed's deliveries
		// write it, and done ends it.
		ah.HandleAsync(ctx, msg, st, st.finish)
		return true
	}
	go func() {
		st.finish(x.h.Handle(ctx, msg, st))
	}()
	return true
}

// hookShutdown makes the http.Server serving r end the taken-over streams
// when it shuts down (Shutdown does not know hijacked connections).
func (x *Handler) hookShutdown(r *http.Request) {
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	if !ok {
		return
	}
	if _, loaded := x.hooked.LoadOrStore(srv, true); !loaded {
		srv.RegisterOnShutdown(x.CloseStreams)
	}
}

// CloseStreams ends the subscriptions/listen streams the handler took over
// from net/http and waits for them to finish. http.Server.Shutdown calls
// it for the servers the handler was served by; a program serving the
// handler otherwise calls it when it stops. Streams opened later are
// served as usual.
func (x *Handler) CloseStreams() {
	x.streams.closeAll()
}

// streamSet tracks the taken-over streams.
type streamSet struct {
	mu   sync.Mutex
	live map[*rawStream]struct{}
	wg   sync.WaitGroup
}

func (s *streamSet) add(st *rawStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		s.live = make(map[*rawStream]struct{})
	}
	s.live[st] = struct{}{}
	s.wg.Add(1)
}

func (s *streamSet) remove(st *rawStream) {
	s.mu.Lock()
	delete(s.live, st)
	s.mu.Unlock()
	s.wg.Done()
}

func (s *streamSet) closeAll() {
	s.mu.Lock()
	for st := range s.live {
		st.cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// rawStream is a listen response written on a hijacked connection: SSE
// in chunked transfer coding (close-delimited for HTTP/1.0), or a plain
// JSON answer when the request fails before its stream started. Writes
// are queued and made by a goroutine that runs only while there is
// something to write, so Notify never blocks (a change feed's publisher
// calls it) and an idle stream holds no goroutine.
type rawStream struct {
	set          *streamSet
	mu           sync.Mutex
	conn         net.Conn
	hdr          http.Header
	ctx          context.Context
	cancel       context.CancelFunc
	chunked      bool
	started      bool
	done         bool // finish was called: nothing more is queued
	broken       bool // a write failed: the client is gone
	writing      bool // a writer goroutine is running
	pending      net.Buffers
	pendingBytes int
	writeTimeout time.Duration
	keepAlive    time.Duration
	timer        *time.Timer
	unwatch      func() // stops the hang-up watch
}

// hangup is called when the client closed its connection.
func (s *rawStream) hangup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.broken {
		s.breakLocked()
	}
	if s.done && !s.writing {
		s.writing = true
		go s.write()
	}
}

// maxPending bounds what may wait to be written to a listen stream; a
// client that does not read that much is dropped.
const maxPending = 1 << 20

var errSlowClient = errors.New("streamable: the client does not read its stream")

// Notify implements transport.Notifier; it queues the event.
func (s *rawStream) Notify(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.broken || s.ctx.Err() != nil {
		return errStreamClosed
	}
	if !s.started {
		s.startLocked()
	}
	if err := s.queueLocked(s.chunk(sseEvent(msg))); err != nil {
		return err
	}
	if s.timer != nil {
		s.timer.Reset(s.keepAlive)
	}
	return nil
}

// startLocked queues the response head of the event stream.
func (s *rawStream) startLocked() {
	h := s.hdr
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.started = true
	_ = s.queueLocked(s.head(http.StatusOK, h, -1))
	s.hdr = nil // not needed again
	s.timer = time.AfterFunc(s.keepAlive, s.ping)
}

// queueLocked adds b to what the writer sends, starting the writer.
func (s *rawStream) queueLocked(b []byte) error {
	if s.pendingBytes+len(b) > maxPending {
		s.breakLocked()
		return errSlowClient
	}
	s.pending = append(s.pending, b)
	s.pendingBytes += len(b)
	if !s.writing {
		s.writing = true
		go s.write()
	}
	return nil
}

// write sends what is queued until nothing is; once the stream is
// finished it closes the connection.
func (s *rawStream) write() {
	for {
		s.mu.Lock()
		if s.broken || len(s.pending) == 0 {
			s.writing = false
			closing := s.done || s.broken
			s.pending, s.pendingBytes = nil, 0
			s.mu.Unlock()
			if closing {
				s.close()
			}
			return
		}
		batch, conn := s.pending, s.conn
		s.pending, s.pendingBytes = nil, 0
		s.mu.Unlock()
		_ = conn.SetWriteDeadline(time.Now().Add(s.writeTimeout))
		if _, err := batch.WriteTo(conn); err != nil {
			s.mu.Lock()
			s.breakLocked()
			s.mu.Unlock()
		}
	}
}

// breakLocked marks the client gone and cancels the request.
func (s *rawStream) breakLocked() {
	s.broken = true
	s.cancel()
}

// close closes the connection and releases the stream, once finished (or
// broken and finished).
func (s *rawStream) close() {
	s.mu.Lock()
	conn := s.conn
	if !s.done || conn == nil {
		// Broken before the handler finished (finish closes it), or
		// closed already.
		s.mu.Unlock()
		return
	}
	s.conn = nil
	s.mu.Unlock()
	s.unwatch()
	conn.Close()
	s.cancel()
	s.set.remove(s)
}

// head encodes a response's status line and header, for a body of length
// bytes or, when length is negative, a stream.
func (s *rawStream) head(status int, h http.Header, length int) []byte {
	for _, k := range []string{"Content-Length", "Transfer-Encoding", "Connection", "Trailer", "Upgrade", "Keep-Alive"} {
		h.Del(k)
	}
	h.Set("Connection", "close")
	switch {
	case length >= 0:
		h.Set("Content-Length", strconv.Itoa(length))
	case s.chunked:
		h.Set("Transfer-Encoding", "chunked")
	}
	if h.Get("Date") == "" {
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	var b bytes.Buffer
	proto := "HTTP/1.0 "
	if s.chunked {
		proto = "HTTP/1.1 "
	}
	b.WriteString(proto)
	b.WriteString(strconv.Itoa(status))
	b.WriteByte(' ')
	b.WriteString(http.StatusText(status))
	b.WriteString("\r\n")
	_ = h.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

// chunk frames p for the transfer coding.
func (s *rawStream) chunk(p []byte) []byte {
	if !s.chunked {
		return p
	}
	out := make([]byte, 0, len(p)+16)
	out = strconv.AppendInt(out, int64(len(p)), 16)
	out = append(out, '\r', '\n')
	out = append(out, p...)
	return append(out, '\r', '\n')
}

// ping queues a keep-alive comment on a quiet stream; the write failing is
// how a departed client is noticed.
func (s *rawStream) ping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.broken || s.ctx.Err() != nil {
		return
	}
	if len(s.pending) == 0 && s.queueLocked(s.chunk([]byte(":\n\n"))) != nil {
		return
	}
	s.timer.Reset(s.keepAlive)
}

// finish queues the response, if any, and the end of the stream; the
// writer closes the connection after it. It is called once.
func (s *rawStream) finish(resp *jsonrpc.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.done = true
	switch {
	case s.broken:
	case resp == nil:
		if s.started && s.chunked {
			_ = s.queueLocked([]byte("0\r\n\r\n"))
		}
	case s.started:
		body := resp.Append(make([]byte, 0, 256+len(resp.Result)))
		if s.queueLocked(s.chunk(sseEvent(body))) == nil && s.chunked {
			_ = s.queueLocked([]byte("0\r\n\r\n"))
		}
	default:
		body := resp.Append(make([]byte, 0, 256+len(resp.Result)))
		status := http.StatusOK
		if resp.Error != nil && resp.HTTPStatus != 0 {
			status = resp.HTTPStatus
		}
		h := s.hdr
		h.Set("Content-Type", "application/json")
		_ = s.queueLocked(append(s.head(status, h, len(body)), body...))
	}
	if !s.writing {
		// Nothing left to write: close now.
		s.writing = true
		go s.write()
	}
}
