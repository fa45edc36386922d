package streamable

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// The legacy era (revisions 2025-03-26 to 2025-11-25) of Streamable HTTP:
// sessions named by Mcp-Session-Id, a standalone GET stream, SSE event ids
// and resumption with Last-Event-ID, and server-initiated polling (closing a
// response's connection while its stream goes on).

// HeaderSessionID names the legacy session of a request.
const HeaderSessionID = "Mcp-Session-Id"

// serveInitialize answers initialize, which opens a session when the
// handler serves the legacy era.
func (x *Handler) serveInitialize(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	req := &transport.Request{Message: msg, Cancel: cancel}
	res, err := x.h.Serve(ctx, req)
	if req.Session != nil {
		w.Header().Set(HeaderSessionID, req.Session.ID())
	}
	code := http.StatusOK
	if err != nil {
		code = Status(err)
	}
	resp := transport.Respond(ctx, msg.ID, res, err)
	if resp == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	if c := challenge(ctx, err); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(resp.Append(nil))
}

// retryAfter is the Retry-After, in seconds, of a 503: a refusal for lack
// of room, which a moment may make.
const retryAfter = "5"

// serveSession serves a request that names a legacy session.
func (x *Handler) serveSession(w http.ResponseWriter, r *http.Request, sid string) {
	sess, err := x.legacy.Session(r.Context(), sid)
	if err != nil && errors.Is(err, protocol.ErrForbidden) {
		// Another principal's session: it exists and goes on for its
		// owner (a 404 would send the client to initialize again).
		httpguard.WriteError(w, http.StatusForbidden, nil, protocol.WireError(err))
		return
	}
	if err != nil {
		httpguard.WriteError(w, http.StatusNotFound, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Found: no such session (it ended or expired); initialize a new one", nil))
		return
	}
	v, ok := headerValue(r.Header, HeaderProtocolVersion)
	if !ok {
		// Only clients of revisions before 2025-06-18 omit the header.
		// Where one is served, the session's negotiated version tells the
		// revision (2025-11-25, Protocol Version Header); where none is, a
		// request without the header is rejected (2026-07-28, Protocol
		// Version Header).
		if !headerless(sess.Version()) && !x.servesLegacy(protocol.Version2025_03_26) {
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Bad Request: missing "+HeaderProtocolVersion+" header", nil))
			return
		}
		v = sess.Version()
	}
	if v != sess.Version() {
		httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Bad Request: "+HeaderProtocolVersion+" "+v+" does not match the session's "+sess.Version(), nil))
		return
	}
	switch r.Method {
	case http.MethodDelete:
		sess.Close()
		w.WriteHeader(http.StatusOK)
	case http.MethodGet:
		if !httpguard.Negotiate(r.Header.Values("Accept")).SSE {
			httpguard.WriteError(w, http.StatusNotAcceptable, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Acceptable: the GET stream is text/event-stream", nil))
			return
		}
		x.serveGet(w, r, sess)
	case http.MethodPost:
		x.servePostSession(w, r, sess)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpguard.WriteError(w, http.StatusMethodNotAllowed, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Method Not Allowed", nil))
	}
}

func (x *Handler) servePostSession(w http.ResponseWriter, r *http.Request, sess transport.Session) {
	accept, rc, body, ok := x.readPost(w, r)
	if !ok {
		return
	}
	defer x.bufs.Put(body)
	if jsonrpc.IsBatch(body.Bytes()) {
		if sess.Version() != protocol.Version2025_03_26 {
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: batches are not allowed in protocol version "+sess.Version(), nil))
			return
		}
		x.serveBatch(w, r, sess, body.Bytes())
		return
	}
	msg, ok := decodeBody(w, body.Bytes())
	if !ok {
		return
	}
	switch {
	case msg.IsNotification(), msg.IsResponse():
		x.h.Receive(r.Context(), msg, sess)
		w.WriteHeader(http.StatusAccepted)
	default:
		x.serveLegacyRequest(w, r, rc, sess, msg, accept)
	}
}

// serveBatch answers a 2025-03-26 batch with an array of responses.
func (x *Handler) serveBatch(w http.ResponseWriter, r *http.Request, sess transport.Session, body []byte) {
	var parts []json.RawMessage
	if err := jsonrpc.Unmarshal(body, &parts); err != nil || len(parts) == 0 {
		httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: malformed batch", nil))
		return
	}
	out := []byte{'['}
	n := 0
	for _, p := range parts {
		msg, err := jsonrpc.Decode(p)
		var resp []byte
		switch {
		case err != nil:
			var id jsonrpc.ID
			if msg != nil {
				id = msg.ID
			}
			resp = jsonrpc.AppendError(nil, id, err.(*jsonrpc.Error))
		case msg.IsNotification(), msg.IsResponse():
			x.h.Receive(r.Context(), msg, sess)
		case msg.Method == protocol.MethodInitialize:
			resp = jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(protocol.CodeInvalidRequest, "initialize must not be part of a batch", nil))
		default:
			ctx, cancel := context.WithCancel(r.Context())
			res, err := x.h.Serve(ctx, &transport.Request{Message: msg, Session: sess, Cancel: cancel})
			if r := transport.Respond(ctx, msg.ID, res, err); r != nil {
				resp = r.Append(nil)
			}
			cancel()
		}
		if resp != nil {
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, resp...)
			n++
		}
	}
	if n == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(out, ']'))
}

// serveLegacyRequest runs a session request. The request is not tied to the
// connection: it goes on when the client (or the handler, polling) closes
// it, its events are logged, and the client resumes with Last-Event-ID.
//
// On HTTP/1.x the request runs on the connection's goroutine: a client
// that leaves does not stop it (its events go to the log), and a handler
// that closes the stream (CloseStream) ends the response by taking the
// connection over from net/http. Elsewhere (HTTP/2) it runs on a worker so
// that the response can end while it goes on.
func (x *Handler) serveLegacyRequest(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, sess transport.Session, msg *jsonrpc.Message, accept httpguard.Acceptance) {
	log := sessionLog(sess)
	out := &legacyStream{x: x, log: log, w: w, rc: rc, sseAllowed: accept.SSE, detached: make(chan struct{}),
		inline: r.ProtoMajor == 1, chunked: r.ProtoAtLeast(1, 1)}
	if accept.PreferSSE || !accept.JSON {
		out.mu.Lock()
		err := out.startLocked()
		out.mu.Unlock()
		if err != nil {
			return
		}
	}
	// Not the connection's context: in the legacy era a disconnect is not
	// a cancellation. The session's end or notifications/cancelled cancels
	// the request.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	req := &transport.Request{Message: msg, Session: sess, Notifier: out, Cancel: cancel, CloseStream: out.CloseStream, Attached: out.clientWaits}
	serve := func() legacyAnswer {
		defer cancel()
		res, err := x.h.Serve(ctx, req)
		return legacyAnswer{transport.Respond(ctx, msg.ID, res, err), sessionStatus(err), challenge(ctx, err)}
	}
	if out.inline {
		// A client that leaves detaches the stream: what follows goes to
		// the log only, and a response that has not started cannot.
		stop := context.AfterFunc(r.Context(), out.detach)
		resp := serve()
		stop()
		out.finish(resp)
		return
	}
	done := make(chan legacyAnswer, 1)
	x.workers.run(func() {
		done <- serve()
	})
	select {
	case resp := <-done:
		out.finish(resp)
	case <-out.detached:
		// The connection is closed; the stream goes on in the log.
		x.finishDetached(out, done)
	case <-r.Context().Done():
		out.detach()
		x.finishDetached(out, done)
	}
}

// legacyAnswer is a session request's outcome: its response, and the HTTP
// status and WWW-Authenticate challenge it has when answered as plain JSON.
type legacyAnswer struct {
	resp      *jsonrpc.Response
	status    int
	challenge string
}

// finishDetached logs the response of a request whose connection is gone,
// once it comes, for a client that resumes with Last-Event-ID.
func (x *Handler) finishDetached(out *legacyStream, done <-chan legacyAnswer) {
	go func() {
		out.finish(<-done)
	}()
}

// serveGet serves the standalone stream, or resumes a stream named by
// Last-Event-ID.
func (x *Handler) serveGet(w http.ResponseWriter, r *http.Request, sess transport.Session) {
	log := sessionLog(sess)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		if es, seq, ok := log.find(last); ok {
			x.resume(w, r, sess, es, seq)
			return
		}
	}
	es := log.newStream(true)
	x.follow(w, r, sess, es, -1, true)
}

// resume replays a stream's events after seq and follows it.
func (x *Handler) resume(w http.ResponseWriter, r *http.Request, sess transport.Session, es *eventStream, seq int) {
	x.follow(w, r, sess, es, seq, false)
}

// follow writes es to the connection from after seq: the logged events,
// then live ones — pulled from the session for the standalone stream —
// until the stream ends or the client goes.
func (x *Handler) follow(w http.ResponseWriter, r *http.Request, sess transport.Session, es *eventStream, after int, prime bool) {
	es.followers.Add(1)
	defer es.followers.Add(-1)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	stopping := x.shutdown.Watch(r)
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(x.opts.WriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if prime && !write(es.priming(x.retry())) {
		return
	}
	ctx := r.Context()
	if es.standalone {
		// Pull the session's messages into the log as they come, until
		// this connection ends.
		pctx, cancel := context.WithCancel(ctx)
		pulled := make(chan struct{})
		defer func() {
			cancel()
			<-pulled
		}()
		go func() {
			defer close(pulled)
			for {
				m, err := sess.Next(pctx)
				if err != nil {
					return
				}
				es.append(m, false)
			}
		}()
	}
	var keepAlive <-chan time.Time
	if x.opts.KeepAlive > 0 {
		t := time.NewTicker(x.opts.KeepAlive)
		defer t.Stop()
		keepAlive = t.C
	}
	for {
		events, wake, ended := es.since(after)
		for _, e := range events {
			if !write(e.frame) {
				return
			}
			after = e.seq
		}
		if ended {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-stopping.Done():
			return
		case <-sess.Done():
			return
		case <-wake:
		case <-keepAlive:
			if !write([]byte(":\n\n")) {
				return
			}
		}
	}
}

func (x *Handler) retry() int {
	if x.opts.RetryInterval > 0 {
		return int(x.opts.RetryInterval / time.Millisecond)
	}
	return 1000
}

// legacyStream is the response of one session request: JSON until the
// first message for the client, then an SSE stream whose events are logged
// for resumption.
type legacyStream struct {
	x          *Handler
	log        *eventLog
	mu         sync.Mutex
	w          http.ResponseWriter
	rc         *http.ResponseController
	sseAllowed bool
	es         *eventStream // set once SSE started
	attached   bool
	finished   bool
	detached   chan struct{}
	detachOnce sync.Once
	inline     bool // the request runs on the connection's goroutine (HTTP/1.x)
	chunked    bool // the response is in chunked transfer coding (HTTP/1.1)
	hijacked   bool // CloseStream took the connection over and closed it
}

func (s *legacyStream) startLocked() error {
	s.es = s.log.newStream(false)
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.attached = true
	return s.writeLocked(s.es.priming(s.x.retry()))
}

// Notify sends a notification or a request to the client on this stream.
func (s *legacyStream) Notify(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return errStreamClosed
	}
	if s.es == nil {
		if !s.sseAllowed || s.isDetached() {
			// JSON only, or the handler has returned: the response can no
			// longer become a stream.
			return errStreamClosed
		}
		if err := s.startLocked(); err != nil {
			return err
		}
	}
	frame := s.es.append(msg, false)
	if s.attached {
		_ = s.writeLocked(frame)
	}
	return nil
}

func (s *legacyStream) writeLocked(b []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.x.opts.WriteTimeout))
	if _, err := s.w.Write(b); err != nil {
		s.detachLocked()
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.detachLocked()
		return err
	}
	return nil
}

// CloseStream closes the connection; the stream goes on in the log.
func (s *legacyStream) CloseStream() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.es == nil && s.sseAllowed && !s.isDetached() {
		// Nothing to resume from yet: start the stream so that the client
		// has an event id to resume with.
		if s.startLocked() != nil {
			return
		}
	}
	if s.es != nil {
		s.detachLocked()
		if s.inline {
			s.endLocked()
		}
	}
}

// endLocked ends the response of a request running on the connection's
// goroutine, which goes on: the connection is taken over from net/http, the
// stream's end written and the connection closed. Should that fail, the
// stream simply stays open, without further events, until the request
// ends.
func (s *legacyStream) endLocked() {
	if s.hijacked {
		return
	}
	conn, _, err := s.rc.Hijack()
	if err != nil {
		return
	}
	s.hijacked = true
	if s.chunked {
		_ = conn.SetWriteDeadline(time.Now().Add(s.x.opts.WriteTimeout))
		_, _ = conn.Write([]byte("0\r\n\r\n"))
	}
	conn.Close()
}

func (s *legacyStream) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.detachLocked()
}

func (s *legacyStream) detachLocked() {
	s.attached = false
	s.detachOnce.Do(func() { close(s.detached) })
}

// finish logs the response and, while the connection is there, writes it.
func (s *legacyStream) finish(a legacyAnswer) {
	resp := a.resp
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	s.finished = true
	if resp == nil {
		if s.es != nil {
			s.es.end()
		} else if !s.hijacked && (s.attached || !s.isDetached()) {
			s.w.WriteHeader(http.StatusNoContent)
		}
		return
	}
	body := resp.Append(nil)
	if s.es != nil {
		frame := s.es.append(body, true)
		if s.attached {
			_ = s.writeLocked(frame)
		}
		return
	}
	if s.isDetached() {
		return // the client left before anything was sent
	}
	s.w.Header().Set("Content-Type", "application/json")
	if a.challenge != "" {
		s.w.Header().Set("WWW-Authenticate", a.challenge)
	}
	status := a.status
	if status == 0 {
		status = http.StatusOK
	}
	s.w.WriteHeader(status)
	_, _ = s.w.Write(body)
}

// clientWaits reports whether the client still waits for the response:
// on this connection, or on a GET stream that resumed the request's.
func (s *legacyStream) clientWaits() bool {
	if !s.isDetached() {
		return true
	}
	s.mu.Lock()
	es := s.es
	s.mu.Unlock()
	return es != nil && es.followers.Load() > 0
}

func (s *legacyStream) isDetached() bool {
	select {
	case <-s.detached:
		return true
	default:
		return false
	}
}

// eventLog is a session's record of its SSE streams, for Last-Event-ID
// resumption; it is kept with the session and bounded.
type eventLog struct {
	mu      sync.Mutex
	next    int
	streams map[int]*eventStream
	order   []int
}

const (
	maxStreamsPerSession = 32
	maxEventsPerStream   = 256
)

func sessionLog(sess transport.Session) *eventLog {
	return sess.Attachment(func() any { return &eventLog{streams: map[int]*eventStream{}} }).(*eventLog)
}

func (l *eventLog) newStream(standalone bool) *eventStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	es := &eventStream{id: l.next, standalone: standalone, wake: make(chan struct{})}
	l.streams[es.id] = es
	l.order = append(l.order, es.id)
	if len(l.order) > maxStreamsPerSession {
		// Evict the oldest request stream; standalone streams, which a
		// client resumes after a dropped GET, go only when nothing else is
		// left.
		i := 0
		for i < len(l.order)-1 && l.streams[l.order[i]].standalone {
			i++
		}
		if i == len(l.order)-1 {
			i = 0
		}
		delete(l.streams, l.order[i])
		l.order = append(l.order[:i], l.order[i+1:]...)
	}
	return es
}

// find parses an event id ("<stream>-<seq>") of this session's log.
func (l *eventLog) find(eventID string) (*eventStream, int, bool) {
	sid, seq, ok := strings.Cut(eventID, "-")
	if !ok {
		return nil, 0, false
	}
	s, err1 := strconv.Atoi(sid)
	n, err2 := strconv.Atoi(seq)
	if err1 != nil || err2 != nil {
		return nil, 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	es, ok := l.streams[s]
	return es, n, ok
}

// eventStream is one SSE stream's events.
type eventStream struct {
	id         int
	standalone bool
	mu         sync.Mutex
	seq        int
	events     []loggedEvent
	ended      bool
	wake       chan struct{}
	followers  atomic.Int32 // GET streams following it (resumed)
}

type loggedEvent struct {
	seq   int
	frame []byte
}

func (es *eventStream) eventID(seq int) string {
	return strconv.Itoa(es.id) + "-" + strconv.Itoa(seq)
}

// priming is the stream's first event: an id to resume from, the retry
// interval and empty data.
func (es *eventStream) priming(retryMs int) []byte {
	es.mu.Lock()
	defer es.mu.Unlock()
	return []byte("id: " + es.eventID(0) + "\nretry: " + strconv.Itoa(retryMs) + "\ndata: \n\n")
}

// append logs a message and returns its frame; last ends the stream.
func (es *eventStream) append(msg []byte, last bool) []byte {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.seq++
	frame := make([]byte, 0, len(msg)+48)
	frame = append(frame, "id: "...)
	frame = append(frame, es.eventID(es.seq)...)
	frame = append(frame, "\nevent: message\ndata: "...)
	frame = append(frame, msg...)
	frame = append(frame, '\n', '\n')
	es.events = append(es.events, loggedEvent{seq: es.seq, frame: frame})
	if len(es.events) > maxEventsPerStream {
		es.events = es.events[1:]
	}
	if last {
		es.ended = true
	}
	close(es.wake)
	es.wake = make(chan struct{})
	return frame
}

func (es *eventStream) end() {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.ended = true
	close(es.wake)
	es.wake = make(chan struct{})
}

// since returns the events after seq, a channel closed on the next one, and
// whether the stream has ended.
func (es *eventStream) since(seq int) ([]loggedEvent, <-chan struct{}, bool) {
	es.mu.Lock()
	defer es.mu.Unlock()
	var out []loggedEvent
	for _, e := range es.events {
		if e.seq > seq {
			out = append(out, e)
		}
	}
	return out, es.wake, es.ended && (len(out) == 0 || out[len(out)-1].seq == es.seq)
}

// servesLegacy reports whether the handler serves the legacy revision.
// headerless reports whether a revision predates the MCP-Protocol-Version
// header (2024-11-05, 2025-03-26).
func headerless(version string) bool {
	return version == protocol.Version2024_11_05 || version == protocol.Version2025_03_26
}

func (x *Handler) servesLegacy(version string) bool {
	for _, v := range x.legacy.Versions() {
		if v == version {
			return true
		}
	}
	return false
}
