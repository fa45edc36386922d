package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// DefaultMaxLineBytes is the default limit on one message: 16 MiB.
const DefaultMaxLineBytes = 16 << 20

// Options configure Serve. The zero value is usable.
type Options struct {
	// MaxLineBytes limits one incoming message; 0 means DefaultMaxLineBytes.
	// A longer line is answered with a -32600 error and skipped.
	MaxLineBytes int
	// ShutdownGrace is how long in-flight requests may run on after the end
	// of input before they are cancelled; 0 means 2 seconds.
	// subscriptions/listen streams are ended at once.
	ShutdownGrace time.Duration
	// Logger receives transport diagnostics (write it to stderr, never to
	// stdout); the default discards them.
	Logger *slog.Logger
}

// Serve reads messages from in and answers them on out until in reaches end
// of input or ctx is done. It returns nil at end of input, ctx.Err() when
// ctx ends first, and a write or read error otherwise. Every request it
// started has finished when it returns.
func Serve(ctx context.Context, h transport.Handler, in io.Reader, out io.Writer, opts *Options) error {
	c := newConn(h, out, opts)
	return c.run(ctx, in)
}

type conn struct {
	h      transport.Handler
	opts   Options
	logger *slog.Logger

	wmu sync.Mutex
	// writers counts the write calls waiting for or holding wmu.
	writers atomic.Int32
	w       *bufio.Writer
	werr    error

	mu       sync.Mutex
	inflight map[jsonrpc.ID]*call
	wg       sync.WaitGroup // requests being served
	closing  bool           // set by shutdown: no request starts after it

	// Requests are served by a few workers (poolSize) from a FIFO queue,
	// so that cheap requests run on warm goroutines rather than one each.
	// A handler that blocks (I/O, waiting for the client) must not hold up
	// the queue: when queued requests see no progress for stallAfter, more
	// workers start, and those beyond the pool end after extraIdle without
	// a request. subscriptions/listen streams, which last, get a goroutine
	// of their own outside the pool. Workers end when quit is closed.
	queue      chan *call
	nworkers   atomic.Int32  // running workers
	taken      atomic.Uint64 // requests taken from the queue so far
	stallArmed atomic.Bool
	stallSeen  atomic.Uint64 // taken when the stall timer was armed
	stall      *time.Timer
	quit       chan struct{}
	workers    sync.WaitGroup

	// The legacy session of this process, once a client sent initialize
	// (when h serves the legacy era). It lives until the end of input.
	legacy   transport.LegacyHandler
	session  transport.Session
	pumpDone chan struct{} // closed when the session's stream pump ends
}

type call struct {
	c         *conn
	ctx       context.Context
	cancel    context.CancelFunc
	msg       *jsonrpc.Message
	inSession bool
	listen    bool
	mu        sync.Mutex
	done      bool // cancelled or answered: nothing more is written
}

// Notify writes a notification for the call until it is answered or
// cancelled; it is the call's transport.Notifier.
func (cl *call) Notify(b []byte) error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.done {
		return errCallDone
	}
	return cl.c.write(b)
}

// CancelRequest cancels the call's context; it is the call's
// transport.RequestCanceller.
func (cl *call) CancelRequest() { cl.cancel() }

func newConn(h transport.Handler, out io.Writer, opts *Options) *conn {
	c := &conn{h: h, w: bufio.NewWriterSize(out, 64<<10), inflight: map[jsonrpc.ID]*call{},
		queue: make(chan *call, queueSize), quit: make(chan struct{})}
	c.stall = time.AfterFunc(time.Hour, c.checkStall)
	c.stall.Stop()
	c.legacy, _ = h.(transport.LegacyHandler)
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxLineBytes <= 0 {
		c.opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if c.opts.ShutdownGrace <= 0 {
		c.opts.ShutdownGrace = 2 * time.Second
	}
	c.logger = c.opts.Logger
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c *conn) run(ctx context.Context, in io.Reader) error {
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	// The reader decodes and dispatches each line itself (the decoded
	// message owns a copy of its bytes, so the line buffer is reused):
	// a request reaches its worker in one hand-off.
	readErr := make(chan error, 1)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		readErr <- c.readLines(ctx, in)
	}()
	var err error
	select {
	case err = <-readErr:
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.shutdown(cancelAll)
	c.stall.Stop()
	close(c.quit)
	c.workers.Wait()
	// The reader goroutine ends at end of input; when ctx ended first it
	// may still be blocked in a read the caller must unblock by closing in.
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if werr := c.writeErr(); err == nil && werr != nil {
		err = werr
	}
	if err == nil || !errors.Is(err, ctx.Err()) {
		<-readerDone
	}
	return err
}

// readLines splits in into lines and decodes them, answering over-long ones
// with an error.
func (c *conn) readLines(ctx context.Context, in io.Reader) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var acc []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if err == nil && len(acc) == 0 && !tooLong && len(chunk) <= c.opts.MaxLineBytes+2 {
			// The common case: a whole line in the reader's buffer.
			if line := bytes.TrimSpace(chunk); len(line) > 0 && len(bytes.TrimRight(chunk, "\r\n")) <= c.opts.MaxLineBytes {
				if err := c.line(ctx, line); err != nil {
					return err
				}
				continue
			}
		}
		if len(chunk) > 0 && !tooLong {
			if len(acc)+len(chunk) > c.opts.MaxLineBytes+2 {
				tooLong, acc = true, acc[:0]
			} else {
				acc = append(acc, chunk...)
			}
		}
		switch {
		case err == nil || (err == io.EOF && (len(acc) > 0 || tooLong)):
			if !tooLong && len(bytes.TrimRight(acc, "\r\n")) > c.opts.MaxLineBytes {
				// The running check above allows for the line ending.
				tooLong = true
			}
			if tooLong {
				c.write(jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(protocol.CodeInvalidRequest,
					"message exceeds the limit of "+strconv.Itoa(c.opts.MaxLineBytes)+" bytes", nil)))
			} else if line := bytes.TrimSpace(acc); len(line) > 0 {
				if err := c.line(ctx, line); err != nil {
					return err
				}
			}
			acc, tooLong = acc[:0], false
			if cap(acc) > 1<<20 {
				acc = nil // do not keep a huge line's buffer
			}
			if err != nil {
				return err
			}
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return err
		}
	}
}

// line decodes and dispatches one input line; once ctx is done the input
// is no longer served.
func (c *conn) line(ctx context.Context, line []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg, err := jsonrpc.Decode(line)
	c.dispatch(ctx, msg, err)
	return nil
}

func (c *conn) dispatch(ctx context.Context, msg *jsonrpc.Message, err error) {
	if err != nil {
		var id jsonrpc.ID
		if msg != nil {
			id = msg.ID
		}
		c.write(jsonrpc.AppendError(nil, id, err.(*jsonrpc.Error)))
		return
	}
	sess := c.currentSession()
	switch {
	case msg.IsRequest():
		if msg.Method == protocol.MethodInitialize && c.legacy != nil && sess == nil && !transport.IsModern(msg) {
			c.initialize(ctx, msg)
			return
		}
		c.start(ctx, msg, sess != nil && !transport.IsModern(msg))
	case msg.IsNotification():
		if msg.Method == protocol.NotificationCancelled {
			c.cancel(msg.Params)
			return
		}
		if sess != nil && !transport.IsModern(msg) {
			sess.HandleNotification(ctx, msg)
			return
		}
		c.h.HandleNotification(ctx, msg)
	default:
		if sess != nil {
			sess.HandleResponse(ctx, msg)
			return
		}
		if rh, ok := c.h.(transport.ResponseHandler); ok {
			rh.HandleResponse(ctx, msg)
			return
		}
		c.logger.Debug("ignoring response from client", "id", msg.ID.String())
	}
}

func (c *conn) currentSession() transport.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// initialize opens the process's legacy session and starts delivering its
// standalone messages (list changes, resource updates) to the output.
func (c *conn) initialize(ctx context.Context, msg *jsonrpc.Message) {
	sess, resp := c.legacy.Initialize(ctx, msg)
	if sess != nil {
		done := make(chan struct{})
		c.mu.Lock()
		if c.closing {
			// Shutting down (ctx ended): the session is not served.
			c.mu.Unlock()
			sess.Close()
			return
		}
		c.session, c.pumpDone = sess, done
		c.mu.Unlock()
		go func() {
			defer close(done)
			for {
				m, err := sess.Next(ctx)
				if err != nil {
					return
				}
				if c.write(m) != nil {
					return
				}
			}
		}()
	}
	c.write(resp.Append(nil))
}

func (c *conn) start(ctx context.Context, msg *jsonrpc.Message, inSession bool) {
	cctx, cancel := context.WithCancel(ctx)
	cl := &call{c: c, ctx: cctx, cancel: cancel, msg: msg, inSession: inSession,
		listen: msg.Method == protocol.MethodSubscriptionsListen}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		cancel()
		return
	}
	if _, dup := c.inflight[msg.ID]; dup {
		c.mu.Unlock()
		cancel()
		c.write(jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: id "+msg.ID.String()+" is already in use", nil)))
		return
	}
	c.inflight[msg.ID] = cl
	c.wg.Add(1)
	c.mu.Unlock()
	if cl.listen {
		// A listen stream lasts: it is not one of the workers.
		c.workers.Add(1)
		go func() {
			defer c.workers.Done()
			c.serve(cl)
		}()
		return
	}
	if c.nworkers.Load() < poolSize {
		c.spawn(cl)
		return
	}
	select {
	case c.queue <- cl:
		c.armStall()
	default:
		// The queue is full: this request gets a worker of its own.
		c.spawn(cl)
	}
}

// Scheduling parameters (see conn.queue).
const (
	poolSize   = 4
	queueSize  = 1024
	stallAfter = 10 * time.Millisecond
)

// spawn starts a worker serving first (when not nil) and then the queue.
func (c *conn) spawn(first *call) {
	c.nworkers.Add(1)
	c.workers.Add(1)
	go c.worker(first)
}

// armStall makes sure the stall check runs while requests are queued.
func (c *conn) armStall() {
	if c.stallArmed.Load() || !c.stallArmed.CompareAndSwap(false, true) {
		return
	}
	c.stallSeen.Store(c.taken.Load())
	c.stall.Reset(stallAfter)
}

// checkStall runs every stallAfter while requests are queued. When none
// was taken from the queue for a whole period, every worker is blocked in
// a handler: as many more start as there are queued requests (at most
// poolSize per period).
func (c *conn) checkStall() {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return // shutdown serves what is queued
	}
	queued := len(c.queue)
	if queued == 0 {
		c.stallArmed.Store(false)
		if len(c.queue) > 0 {
			c.armStall() // queued after the check above
		}
		return
	}
	taken := c.taken.Load()
	if taken == c.stallSeen.Load() {
		c.mu.Lock()
		if !c.closing {
			for range min(queued, poolSize) {
				c.spawn(nil)
			}
		}
		c.mu.Unlock()
	}
	c.stallSeen.Store(taken)
	c.stall.Reset(stallAfter)
}

// A worker beyond the pool ends after extraIdle without a request; one of
// the pool after workerIdle.
const (
	extraIdle  = 100 * time.Millisecond
	workerIdle = 30 * time.Second
)

// worker serves first (unless nil), then requests from the queue, until it
// has been idle long enough (see extraIdle; the timer is not reset per
// request, so the idle time is counted in whole periods) or the connection
// shuts down.
func (c *conn) worker(first *call) {
	defer c.workers.Done()
	if first != nil {
		c.serve(first)
	}
	tick := time.NewTimer(extraIdle)
	defer tick.Stop()
	busy, idle := false, time.Duration(0)
	for {
		select {
		case cl := <-c.queue:
			c.taken.Add(1)
			c.serve(cl)
			busy = true
		case <-tick.C:
			if busy {
				busy, idle = false, 0
			} else {
				idle += extraIdle
				if (c.nworkers.Load() > poolSize || idle >= workerIdle) && c.retire() {
					return
				}
			}
			tick.Reset(extraIdle)
		case <-c.quit:
			c.nworkers.Add(-1)
			return
		}
	}
}

// retire counts an idle worker out, unless requests are queued for it.
func (c *conn) retire() bool {
	c.nworkers.Add(-1)
	if len(c.queue) > 0 {
		c.nworkers.Add(1)
		return false
	}
	return true
}

// serve handles one call and writes its response, unless it was cancelled.
func (c *conn) serve(cl *call) {
	defer c.wg.Done()
	defer cl.cancel()
	var resp *jsonrpc.Response
	if cl.inSession {
		resp = c.currentSession().Handle(cl.ctx, cl.msg, cl)
	} else {
		resp = c.h.Handle(cl.ctx, cl.msg, cl)
	}
	c.mu.Lock()
	delete(c.inflight, cl.msg.ID)
	closing := c.closing
	c.mu.Unlock()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if resp == nil && !cl.done && closing && !cl.listen {
		// Cancelled by the shutdown, not by the client: every request
		// read gets an answer (listen streams, which the shutdown ends on
		// purpose, excepted).
		resp = &jsonrpc.Response{ID: cl.msg.ID, Error: errShuttingDown}
	}
	if cl.done || resp == nil {
		cl.done = true
		return
	}
	cl.done = true
	bp := respBufs.Get().(*[]byte)
	b := resp.Append((*bp)[:0])
	c.write(b) // write copies b into the buffered writer
	if cap(b) <= maxPooledResponse {
		*bp = b
		respBufs.Put(bp)
	}
}

// respBufs recycles the buffers responses are encoded into; buffers that
// grew past maxPooledResponse are left to the collector.
var respBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledResponse = 64 << 10

var errCallDone = errors.New("stdio: request finished or cancelled")

// errShuttingDown answers the requests the end of input (or of Serve's
// context) cut short.
var errShuttingDown = jsonrpc.NewError(protocol.CodeInternalError, "server shutting down: the request was cancelled before it finished", nil)

// cancel handles notifications/cancelled: the named request's context is
// cancelled and nothing more is written for it.
func (c *conn) cancel(params json.RawMessage) {
	var p protocol.CancelledParams
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || !p.RequestID.IsValid() {
		return // malformed cancellations are ignored
	}
	c.mu.Lock()
	cl := c.inflight[p.RequestID]
	c.mu.Unlock()
	if cl == nil {
		return
	}
	cl.mu.Lock()
	cl.done = true
	cl.mu.Unlock()
	cl.cancel()
}

// shutdown ends listen streams at once, gives other requests the grace
// period, then cancels what is left and waits for it.
func (c *conn) shutdown(cancelAll context.CancelFunc) {
	c.mu.Lock()
	c.closing = true
	for _, cl := range c.inflight {
		if cl.listen {
			cl.cancel()
		}
	}
	sess, pumpDone := c.session, c.pumpDone
	c.mu.Unlock()
	finished := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(finished)
	}()
	t := time.NewTimer(c.opts.ShutdownGrace)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		cancelAll()
		<-finished
	}
	if sess != nil {
		// The session ends with the process's input, once its requests
		// are done; so does the pump of its standalone messages.
		sess.Close()
		<-pumpDone
	}
	c.flush()
}

// write sends one message as a line and flushes it, unless another write
// is already queued behind it: that one flushes both, so only the last of a
// burst of concurrent responses pays for the system call.
func (c *conn) write(msg []byte) error {
	c.writers.Add(1)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	last := c.writers.Add(-1) == 0
	if c.werr != nil {
		return c.werr
	}
	if bytes.IndexByte(msg, '\n') >= 0 {
		// encoding/json never emits raw newlines, but a handler may hand
		// over indented JSON. Between tokens a newline is white space that
		// Compact drops; inside a string (invalid JSON) escape it.
		var buf bytes.Buffer
		if json.Compact(&buf, msg) == nil {
			msg = buf.Bytes()
		} else {
			msg = bytes.ReplaceAll(msg, []byte("\n"), []byte(`\n`))
		}
	}
	if _, err := c.w.Write(msg); err != nil {
		c.werr = err
		return err
	}
	if err := c.w.WriteByte('\n'); err != nil {
		c.werr = err
		return err
	}
	if !last {
		return nil
	}
	if err := c.w.Flush(); err != nil {
		c.werr = fmt.Errorf("stdio: writing: %w", err)
		return c.werr
	}
	return nil
}

func (c *conn) flush() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr == nil {
		c.werr = c.w.Flush()
	}
}

func (c *conn) writeErr() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.werr
}
