package sse

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// Options configure the HTTP+SSE handler. The zero value is usable.
type Options struct {
	// MessagePath is the path of the message endpoint the endpoint event
	// announces; "" means the path the stream was opened at, so that one
	// mount serves both. Behind http.StripPrefix, or when the message
	// endpoint is mounted elsewhere, set it to the path clients use.
	MessagePath string
	// AllowedOrigins lists origins (scheme://host[:port]) whose browser
	// requests are accepted, in addition to loopback origins. "*" accepts
	// every origin (not recommended). The listed origins also get CORS:
	// preflights are answered and their pages may read the responses
	// (loopback origins only when listed). Without a list CORS is off.
	AllowedOrigins []string
	// CORSMaxAge is how long browsers may cache a preflight's answer; 0
	// means two hours, a negative value leaves it to the browser.
	CORSMaxAge time.Duration
	// AllowedHosts lists Host header values (host or host:port) accepted on
	// loopback listeners in addition to localhost, 127.0.0.1 and [::1].
	// Requests arriving on non-loopback listeners are not Host-checked.
	AllowedHosts []string
	// MaxBodyBytes limits a POSTed message; 0 means 4 MiB.
	MaxBodyBytes int64
	// MaxStreams bounds the streams open at once; 0 means 1,000. A GET
	// beyond it is answered 503 with Retry-After.
	MaxStreams int
	// KeepAlive is the interval of SSE comment lines on a quiet stream; 0
	// means 15 seconds, a negative value disables them.
	KeepAlive time.Duration
	// WriteTimeout bounds each write to a stream, so a client that stops
	// reading cannot hold it; 0 means 30 seconds.
	WriteTimeout time.Duration
	// ReadTimeout bounds reading a POST body, so a client that sends it
	// slowly cannot hold a handler; 0 means 30 seconds.
	ReadTimeout time.Duration
	// MaxConcurrent and MaxPending bound the requests of one stream
	// handled at once and read but not yet answered, as in stdio.Options;
	// 0 means stdio's defaults (64 and 4,096).
	MaxConcurrent int
	MaxPending    int
	// Logger receives transport diagnostics; the default discards them.
	Logger *slog.Logger
}

// Handler is the HTTP+SSE endpoint: GET opens a stream, POST delivers a
// message to one. Create it with NewHandler.
type Handler struct {
	h      transport.Handler
	opts   Options
	guard  httpguard.Guard
	logger *slog.Logger

	mu      sync.Mutex
	streams map[string]*stream

	shutdown *httpguard.Shutdown // ends streams when an http.Server serving x shuts down
}

// stream is one GET stream: the connection a client's messages are
// POSTed to.
type stream struct {
	principal string // of the GET; POSTs must come from it
	in        *inbox
}

// NewHandler returns an http.Handler serving h over HTTP+SSE at whatever
// path it is mounted on.
func NewHandler(h transport.Handler, opts *Options) *Handler {
	x := &Handler{h: h, streams: map[string]*stream{}}
	x.shutdown = httpguard.NewShutdown()
	if opts != nil {
		x.opts = *opts
	}
	if x.opts.MaxBodyBytes <= 0 {
		x.opts.MaxBodyBytes = 4 << 20
	}
	if x.opts.MaxStreams <= 0 {
		x.opts.MaxStreams = 1000
	}
	if x.opts.KeepAlive == 0 {
		x.opts.KeepAlive = 15 * time.Second
	}
	if x.opts.WriteTimeout <= 0 {
		x.opts.WriteTimeout = 30 * time.Second
	}
	if x.opts.ReadTimeout <= 0 {
		x.opts.ReadTimeout = 30 * time.Second
	}
	x.logger = x.opts.Logger
	if x.logger == nil {
		x.logger = slog.New(slog.DiscardHandler)
	}
	x.guard = httpguard.NewGuard(x.opts.AllowedOrigins, x.opts.AllowedHosts, x.opts.CORSMaxAge)
	return x
}

// retryAfter is the Retry-After, in seconds, of a 503.
const retryAfter = "5"

// ServeHTTP implements http.Handler.
func (x *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if refusal, handled := x.guard.Check(w, r); handled {
		return
	} else if refusal != "" {
		httpguard.WriteError(w, http.StatusForbidden, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, refusal, nil))
		return
	}
	switch r.Method {
	case http.MethodGet:
		x.serveStream(w, r)
	case http.MethodPost:
		x.servePost(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		httpguard.WriteError(w, http.StatusMethodNotAllowed, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Method Not Allowed", nil))
	}
}

// serveStream opens a stream: the endpoint event, then the server's
// messages, until the client leaves, the legacy session ends or the
// http.Server shuts down. The stream's messages are served by stdio.Serve
// with the GET's context (its principal, what middleware put there).
func (x *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	if !httpguard.Negotiate(r.Header.Values("Accept")).SSE {
		httpguard.WriteError(w, http.StatusNotAcceptable, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Acceptable: the stream is text/event-stream", nil))
		return
	}
	st := &stream{principal: transport.PrincipalFrom(r.Context()), in: newInbox()}
	id, ok := x.register(st)
	if !ok {
		w.Header().Set("Retry-After", retryAfter)
		httpguard.WriteError(w, http.StatusServiceUnavailable, nil, jsonrpc.NewError(protocol.CodeInternalError, "Service Unavailable: too many open streams; try again later", nil))
		return
	}
	defer x.unregister(id)

	// The request's context ends when the client goes away or a write to
	// it fails; cancel ends the stream otherwise (shutdown, session end).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(x.shutdown.Watch(r), cancel)()
	// Closing the input ends stdio.Serve's reader, which a cancelled
	// context alone does not interrupt.
	context.AfterFunc(ctx, st.in.close)
	defer st.in.close()

	rc := http.NewResponseController(w)
	out := &events{w: w, rc: rc, writeTimeout: x.opts.WriteTimeout, fail: cancel}
	defer out.end()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	path := x.opts.MessagePath
	if path == "" {
		path = r.URL.Path
	}
	endpoint := (&url.URL{Path: path, RawQuery: url.Values{"sessionId": {id}}.Encode()}).String()
	if out.send("endpoint", []byte(endpoint)) != nil {
		return
	}

	watch := &watched{Handler: x.h, opened: make(chan transport.Session, 1)}
	served := make(chan error, 1)
	go func() {
		served <- stdio.Serve(ctx, watch, st.in, out, &stdio.Options{
			MaxLineBytes:  int(x.opts.MaxBodyBytes),
			MaxConcurrent: x.opts.MaxConcurrent,
			MaxPending:    x.opts.MaxPending,
			Logger:        x.logger,
		})
	}()
	var ping <-chan time.Time
	var keepAlive *time.Timer
	if x.opts.KeepAlive > 0 {
		keepAlive = time.NewTimer(x.opts.KeepAlive)
		defer keepAlive.Stop()
		ping = keepAlive.C
	}
	var sessionDone <-chan struct{}
	for {
		select {
		case err := <-served:
			if err != nil && ctx.Err() == nil {
				x.logger.Debug("sse: stream ended", "err", err)
			}
			return
		case s := <-watch.opened:
			sessionDone = s.Done()
		case <-sessionDone:
			// The legacy session was closed or expired: nothing more can
			// be served on the stream.
			sessionDone = nil
			cancel()
		case <-ping:
			keepAlive.Reset(out.ping(x.opts.KeepAlive))
		}
	}
}

// register adds st under a fresh id, unless MaxStreams are open.
func (x *Handler) register(st *stream) (string, bool) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.streams) >= x.opts.MaxStreams {
		return "", false
	}
	x.streams[id] = st
	return id, true
}

func (x *Handler) unregister(id string) {
	x.mu.Lock()
	delete(x.streams, id)
	x.mu.Unlock()
}

func (x *Handler) lookup(id string) *stream {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.streams[id]
}

// servePost delivers one message to the stream its sessionId names and
// answers 202; the response goes on the stream.
func (x *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		// Not an error of the modern era: a client probing for Streamable
		// HTTP falls back to this transport on a 405.
		w.Header().Set("Allow", http.MethodGet)
		httpguard.WriteError(w, http.StatusMethodNotAllowed, nil, jsonrpc.NewError(protocol.CodeInvalidRequest,
			"Method Not Allowed: this is an HTTP+SSE endpoint; GET it with Accept: text/event-stream, then POST to the endpoint it announces", nil))
		return
	}
	st := x.lookup(id)
	if st == nil {
		httpguard.WriteError(w, http.StatusNotFound, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Found: no such stream (it ended); open a new one", nil))
		return
	}
	if transport.PrincipalFrom(r.Context()) != st.principal {
		httpguard.WriteError(w, http.StatusForbidden, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Forbidden: the stream belongs to another principal", nil))
		return
	}
	if !httpguard.IsJSONContentType(r.Header.Get("Content-Type")) {
		httpguard.WriteError(w, http.StatusUnsupportedMediaType, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json", nil))
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(x.opts.ReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, x.opts.MaxBodyBytes))
	if err != nil {
		// The body did not arrive whole in time: the connection ends with
		// the answer, the lapsed deadline kept so that net/http does not
		// wait on to drain the rest.
		w.Header().Set("Connection", "close")
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpguard.WriteError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "request body too large", nil))
			return
		}
		httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeParseError, "reading request body: "+err.Error(), nil))
		return
	}
	_ = rc.SetReadDeadline(time.Time{})
	// Decoding checks the body (as jsonrpc.Unmarshal does) and its shape;
	// the stream decodes the line again, so only a valid message reaches
	// it. A batch is checked as JSON here and taken, as on stdio, only by a
	// session of revision 2025-03-26.
	if jsonrpc.IsBatch(body) {
		if err := jsonrpc.Unmarshal(body, new(jsontext.Value)); err != nil {
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeParseError, "parse error: "+err.Error(), nil))
			return
		}
	} else if msg, err := jsonrpc.Decode(body); err != nil {
		var id *jsonrpc.ID
		if msg != nil {
			id = &msg.ID
		}
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			e = jsonrpc.NewError(protocol.CodeParseError, "parse error: "+err.Error(), nil)
		}
		httpguard.WriteError(w, http.StatusBadRequest, id, e)
		return
	}
	line := body
	if bytes.IndexByte(line, '\n') >= 0 {
		// Between tokens a newline is white space; on the stream's input
		// it would end the line.
		var buf bytes.Buffer
		buf.Grow(len(body))
		if err := json.Compact(&buf, body); err != nil {
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeParseError, "parse error: invalid JSON", nil))
			return
		}
		line = buf.Bytes()
	}
	line = append(line, '\n')
	switch err := st.in.deliver(r.Context(), line); {
	case errors.Is(err, errEnded):
		httpguard.WriteError(w, http.StatusNotFound, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Found: no such stream (it ended); open a new one", nil))
		return
	case err != nil:
		return // the client left
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, "Accepted")
}

// watched reports the legacy session initialize opens, so that the stream
// ends with it.
type watched struct {
	transport.Handler
	opened chan transport.Session
}

func (h *watched) Serve(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	before := req.Session
	res, err := h.Handler.Serve(ctx, req)
	if before == nil && req.Session != nil {
		select {
		case h.opened <- req.Session:
		default:
		}
	}
	return res, err
}

// inbox is the input of a stream's stdio.Serve: the messages POSTed to it,
// one a line. It reads end of input once closed.
type inbox struct {
	ch     chan []byte
	done   chan struct{}
	closer sync.Once
	rest   []byte // what the reader has not taken yet of the last message
}

func newInbox() *inbox { return &inbox{ch: make(chan []byte), done: make(chan struct{})} }

// Read implements io.Reader for stdio.Serve's reader, its one caller.
func (b *inbox) Read(p []byte) (int, error) {
	if len(b.rest) == 0 {
		select {
		case m := <-b.ch:
			b.rest = m
		case <-b.done:
			return 0, io.EOF
		}
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

// deliver hands a line to the reader. It fails with errEnded once the
// inbox is closed, and with ctx's error when ctx ends first.
func (b *inbox) deliver(ctx context.Context, line []byte) error {
	select {
	case <-b.done:
		return errEnded
	default:
	}
	select {
	case b.ch <- line:
		return nil
	case <-b.done:
		return errEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *inbox) close() { b.closer.Do(func() { close(b.done) }) }

// events is the output of a stream's stdio.Serve: every line written to it
// is sent as one message event.
type events struct {
	mu           sync.Mutex
	w            http.ResponseWriter
	rc           *http.ResponseController
	writeTimeout time.Duration
	fail         context.CancelFunc // ends the stream on a failed write
	partial      []byte             // the start of a line not ended yet
	last         time.Time          // of the last write
	err          error
}

var errEnded = errors.New("sse: stream ended")

// Write implements io.Writer: complete lines become events, flushed once
// per call; the rest waits for its newline.
func (e *events) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return 0, e.err
	}
	n := len(p)
	sent := false
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			e.partial = append(e.partial, p...)
			break
		}
		line := p[:i]
		p = p[i+1:]
		if len(e.partial) > 0 {
			line = append(e.partial, line...)
			e.partial = e.partial[:0]
			if cap(e.partial) > 1<<20 {
				e.partial = nil // do not keep a huge message's buffer
			}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !sent {
			_ = e.rc.SetWriteDeadline(time.Now().Add(e.writeTimeout))
			sent = true
		}
		if err := e.writeLocked("message", line); err != nil {
			return 0, err
		}
	}
	if sent {
		if err := e.flushLocked(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// send writes one event and flushes it.
func (e *events) send(event string, data []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.writeTimeout))
	if err := e.writeLocked(event, data); err != nil {
		return err
	}
	return e.flushLocked()
}

func (e *events) writeLocked(event string, data []byte) error {
	_, err := io.WriteString(e.w, "event: "+event+"\ndata: ")
	if err == nil {
		_, err = e.w.Write(data)
	}
	if err == nil {
		_, err = io.WriteString(e.w, "\n\n")
	}
	if err != nil {
		e.failLocked(err)
	}
	return err
}

func (e *events) flushLocked() error {
	e.last = time.Now()
	if err := e.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		e.failLocked(err)
		return err
	}
	return nil
}

func (e *events) failLocked(err error) {
	e.err = err
	e.fail()
}

// ping writes a keep-alive comment when nothing was written for quiet, and
// returns how long until the next one is due.
func (e *events) ping(quiet time.Duration) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return quiet
	}
	if d := quiet - time.Since(e.last); d > 0 {
		return d
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.writeTimeout))
	if _, err := io.WriteString(e.w, ":\n\n"); err != nil {
		e.failLocked(err)
		return quiet
	}
	_ = e.flushLocked()
	return quiet
}

// end stops writing, before the handler returns, and lifts the write
// deadline, which must not outlive the stream on a kept-alive connection.
func (e *events) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = errEnded
		_ = e.rc.SetWriteDeadline(time.Time{})
	}
}
