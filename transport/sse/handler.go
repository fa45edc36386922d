package sse

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

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
	// MaxStreamBytes bounds the bytes one stream holds: the messages
	// POSTed to it and not yet answered (each counts from before its body
	// is read, with 4 KiB for the POST that carries it) and their
	// responses not yet written to the stream; 0 means four times
	// MaxBodyBytes, at least 1 MiB (16 MiB by default). A POST beyond it
	// is answered 429 with Retry-After, and is neither read nor kept; a
	// request that comes when unwritten responses fill it is answered on
	// the stream with a -32603 "server busy" error.
	MaxStreamBytes int64
	// MaxBufferedBytes bounds the same bytes for all the streams together;
	// 0 means 256 MiB (at least MaxStreamBytes). A POST beyond it is
	// answered 503 with Retry-After.
	MaxBufferedBytes int64
	// MaxStreams bounds the streams open at once; 0 means 1,000. A GET
	// beyond it is answered 503 with Retry-After.
	MaxStreams int
	// MaxStreamsPerPrincipal bounds the streams one principal
	// (transport.PrincipalFrom of the GET) has open at once. 0 means a
	// hundredth of MaxStreams (10, at least 1) for every authenticated
	// principal, while callers without one (no authentication in front,
	// the "" principal) cannot be told apart and share MaxStreams; a value
	// set applies to every principal, "" included. A GET beyond it is
	// answered 429 with Retry-After.
	MaxStreamsPerPrincipal int
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

	budget *stdio.Budget // of all the streams: MaxBufferedBytes

	mu      sync.Mutex
	streams map[string]*stream
	owned   map[string]int // streams open per principal

	shutdown *httpguard.Shutdown // ends streams when an http.Server serving x shuts down
}

// stream is one GET stream: the connection a client's messages are
// POSTed to.
type stream struct {
	principal string // of the GET; POSTs must come from it
	in        *inbox
	budget    *stdio.Budget // MaxStreamBytes, within the handler's
}

// NewHandler returns an http.Handler serving h over HTTP+SSE at whatever
// path it is mounted on.
func NewHandler(h transport.Handler, opts *Options) *Handler {
	x := &Handler{h: h, streams: map[string]*stream{}, owned: map[string]int{}}
	x.shutdown = httpguard.NewShutdown()
	if opts != nil {
		x.opts = *opts
	}
	if x.opts.MaxBodyBytes <= 0 {
		x.opts.MaxBodyBytes = 4 << 20
	}
	if x.opts.MaxStreamBytes <= 0 {
		x.opts.MaxStreamBytes = max(4*x.opts.MaxBodyBytes, 1<<20)
	}
	if x.opts.MaxBufferedBytes <= 0 {
		x.opts.MaxBufferedBytes = max(256<<20, x.opts.MaxStreamBytes)
	}
	x.budget = stdio.NewBudget(x.opts.MaxBufferedBytes, nil)
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

// retryAfter is the Retry-After, in seconds, of a 503 or a 429.
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
// http.Server shuts down. The stream's messages are served by
// stdio.ServeMessages, each with its POST's context values (its principal
// and scopes, what middleware put there), cancelled with the stream.
func (x *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	if !httpguard.Negotiate(r.Header.Values("Accept")).SSE {
		httpguard.WriteError(w, http.StatusNotAcceptable, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Acceptable: the stream is text/event-stream", nil))
		return
	}
	st := &stream{principal: transport.PrincipalFrom(r.Context()), in: newInbox(), budget: stdio.NewBudget(x.opts.MaxStreamBytes, x.budget)}
	id, status := x.register(st)
	switch status {
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryAfter)
		httpguard.WriteError(w, status, nil, jsonrpc.NewError(protocol.CodeInternalError, "Service Unavailable: too many open streams; try again later", nil))
		return
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", retryAfter)
		httpguard.WriteError(w, status, nil, jsonrpc.NewError(protocol.CodeInternalError, "Too Many Requests: you have too many open streams; close one or try again later", nil))
		return
	}
	defer x.unregister(id)

	// The request's context ends when the client goes away or a write to
	// it fails; cancel ends the stream otherwise (shutdown, session end).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(x.shutdown.Watch(r), cancel)()
	// Closing the input ends the stream's reader, and POSTs waiting to
	// hand it a message.
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
		served <- stdio.ServeMessages(ctx, watch, st.in, out, &stdio.Options{
			MaxConcurrent: x.opts.MaxConcurrent,
			MaxPending:    x.opts.MaxPending,
			Budget:        st.budget,
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

// register adds st under a fresh id, unless MaxStreams are open (503) or
// its principal's share (429); the status is 0 when it was added.
func (x *Handler) register(st *stream) (string, int) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.streams) >= x.opts.MaxStreams {
		return "", http.StatusServiceUnavailable
	}
	if x.owned[st.principal] >= x.perPrincipal(st.principal) {
		return "", http.StatusTooManyRequests
	}
	x.streams[id] = st
	x.owned[st.principal]++
	return id, 0
}

// perPrincipal is the most streams principal may have open.
func (x *Handler) perPrincipal(principal string) int {
	switch {
	case x.opts.MaxStreamsPerPrincipal > 0:
		return x.opts.MaxStreamsPerPrincipal
	case principal == "":
		return x.opts.MaxStreams
	}
	return max(1, x.opts.MaxStreams/100)
}

func (x *Handler) unregister(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	st := x.streams[id]
	if st == nil {
		return
	}
	delete(x.streams, id)
	if x.owned[st.principal]--; x.owned[st.principal] <= 0 {
		delete(x.owned, st.principal)
	}
}

func (x *Handler) lookup(id string) *stream {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.streams[id]
}

// watched reports the legacy session initialize opens, so that the stream
// ends with it.
type watched struct {
	transport.Handler
	opened chan transport.Session
}

func (h *watched) Serve(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	res, err := h.Handler.Serve(ctx, req)
	if o, ok := res.(*transport.Opened); ok && o.Session != nil {
		select {
		case h.opened <- o.Session:
		default:
		}
	}
	return res, err
}

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
