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
	// MaxConcurrent bounds the requests handled at once; 0 means 64.
	// Further requests wait for a turn, in no particular order, while the
	// input goes on being read (a cancellation, or the client's answer to
	// a request the server sent, is never stuck behind them).
	// subscriptions/listen streams do not count.
	MaxConcurrent int
	// MaxPending bounds the requests read and not yet answered; 0 means
	// 4,096. A request beyond it is answered at once with a -32603 "server
	// busy" error.
	MaxPending int
	// Logger receives transport diagnostics (write it to stderr, never to
	// stdout); the default discards them.
	Logger *slog.Logger
}

// Serve reads messages from in and answers them on out until in reaches end
// of input or ctx is done. It returns nil at end of input, ctx.Err() when
// ctx ends first, and a write or read error otherwise. Every request read
// gets an answer (a result, or an error once the input has ended and the
// grace period is over), subscriptions/listen streams excepted, which end
// without one.
//
// Each request is served on a goroutine of its own, at most MaxConcurrent
// at once. When Serve returns, every goroutine it started has ended: when
// ctx ends while the reader is blocked in in.Read, Serve interrupts the read
// through SetReadDeadline where in has it (os.Stdin on a pipe, net.Conn);
// with another reader, its goroutine ends when that Read returns.
func Serve(ctx context.Context, h transport.Handler, in io.Reader, out io.Writer, opts *Options) error {
	c := newConn(h, out, opts)
	return c.run(ctx, in)
}

type conn struct {
	h      transport.Handler
	legacy transport.Legacy // nil when h serves the modern era only
	opts   Options
	logger *slog.Logger

	wmu sync.Mutex
	// writers counts the write calls waiting for or holding wmu.
	writers atomic.Int32
	w       *bufio.Writer
	werr    error

	sem chan struct{} // a token per request being handled

	mu       sync.Mutex
	inflight map[jsonrpc.ID]*call
	calls    sync.WaitGroup // requests being served
	closing  bool           // set by shutdown: no request starts after it

	// The legacy session of this process, once a client sent initialize
	// (when h serves the legacy era). It lives until the end of input.
	session  transport.Session
	pumpDone chan struct{} // closed when the session's stream pump ends
}

type call struct {
	c      *conn
	ctx    context.Context
	cancel context.CancelFunc
	msg    *jsonrpc.Message
	kind   transport.Kind
	sess   transport.Session // the request's legacy session, or nil
	listen bool
	batch  *batch // the batch the request came in, or nil
	mu     sync.Mutex
	done   bool // cancelled or answered: nothing more is written
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

func newConn(h transport.Handler, out io.Writer, opts *Options) *conn {
	c := &conn{h: h, legacy: h.Legacy(), w: bufio.NewWriterSize(out, 64<<10), inflight: map[jsonrpc.ID]*call{}}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxLineBytes <= 0 {
		c.opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if c.opts.ShutdownGrace <= 0 {
		c.opts.ShutdownGrace = 2 * time.Second
	}
	if c.opts.MaxConcurrent <= 0 {
		c.opts.MaxConcurrent = 64
	}
	if c.opts.MaxPending <= 0 {
		c.opts.MaxPending = 4096
	}
	c.sem = make(chan struct{}, c.opts.MaxConcurrent)
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
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if werr := c.writeErr(); err == nil && werr != nil {
		err = werr
	}
	if err != nil && errors.Is(err, ctx.Err()) {
		// The reader may be blocked in a read: interrupt it where the
		// reader allows, else leave it to end with that read.
		d, ok := in.(interface{ SetReadDeadline(time.Time) error })
		if !ok || d.SetReadDeadline(time.Now()) != nil {
			return err
		}
	}
	<-readerDone
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
	if line[0] == '[' {
		if sess := c.currentSession(); sess != nil && batches(sess.Version()) {
			c.batch(ctx, line)
			return nil
		}
	}
	msg, err := jsonrpc.Decode(line)
	c.dispatch(ctx, msg, err, nil)
	return nil
}

// dispatch handles one message read; b is the batch it came in, or nil.
func (c *conn) dispatch(ctx context.Context, msg *jsonrpc.Message, err error, b *batch) {
	if err != nil {
		var id jsonrpc.ID
		if msg != nil {
			id = msg.ID
		}
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			e = jsonrpc.NewError(protocol.CodeParseError, "parse error: "+err.Error(), nil)
		}
		c.reply(b, jsonrpc.AppendError(nil, id, e))
		return
	}
	// The message's era, decided once: a modern message belongs to no
	// session.
	sess := c.currentSession()
	kind := transport.Classify(msg, sess)
	if kind != transport.KindSession {
		sess = nil
	}
	switch {
	case msg.IsRequest():
		if b != nil && msg.Method == protocol.MethodInitialize {
			c.reply(b, jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(protocol.CodeInvalidRequest, "initialize must not be part of a batch", nil)))
			return
		}
		if kind == transport.KindInitialize {
			c.initialize(ctx, msg)
			return
		}
		c.start(ctx, msg, kind, sess, b)
	case msg.IsNotification() && msg.Method == protocol.NotificationCancelled:
		// Requests of both eras are registered here as they are read, so
		// a cancellation that follows its request at once finds it.
		c.cancel(msg.Params)
	default:
		c.h.Receive(ctx, msg, sess)
	}
}

func (c *conn) currentSession() transport.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// initialize answers initialize on the reader's goroutine, so that the
// requests after it belong to the session it opens, and starts delivering
// the session's standalone messages (list changes, resource updates).
func (c *conn) initialize(ctx context.Context, msg *jsonrpc.Message) {
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := c.h.Serve(ictx, &transport.Request{Message: msg, Kind: transport.KindInitialize, Cancel: cancel})
	resp := transport.Respond(ictx, msg.ID, res, err)
	if o, ok := res.(*transport.Opened); ok && o.Session != nil {
		sess := o.Session
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
		if resp != nil {
			c.write(resp.Append(nil))
		}
		go func() {
			defer close(done)
			for {
				m, err := sess.Next(ctx)
				if err != nil || c.write(m) != nil {
					return
				}
			}
		}()
		return
	}
	if resp != nil {
		c.write(resp.Append(nil))
	}
}

// start registers a request and serves it on a goroutine of its own; b is
// the batch it came in, or nil.
func (c *conn) start(ctx context.Context, msg *jsonrpc.Message, kind transport.Kind, sess transport.Session, b *batch) {
	cctx, cancel := context.WithCancel(ctx)
	cl := &call{c: c, ctx: cctx, cancel: cancel, msg: msg, kind: kind, sess: sess, batch: b,
		listen: sess == nil && msg.Method == protocol.MethodSubscriptionsListen}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		cancel()
		return
	}
	if _, dup := c.inflight[msg.ID]; dup {
		c.mu.Unlock()
		cancel()
		c.reply(b, jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: id "+msg.ID.String()+" is already in use", nil)))
		return
	}
	if len(c.inflight) >= c.opts.MaxPending {
		c.mu.Unlock()
		cancel()
		c.reply(b, jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(protocol.CodeInternalError,
			"server busy: "+strconv.Itoa(c.opts.MaxPending)+" requests are waiting for an answer; try again later", nil)))
		return
	}
	c.inflight[msg.ID] = cl
	c.calls.Add(1)
	c.mu.Unlock()
	if b != nil {
		b.pending.Add(1)
	}
	go c.serve(cl)
}

// serve handles one call, once it has a turn (listen streams need none),
// and writes its response unless it was cancelled.
func (c *conn) serve(cl *call) {
	defer c.calls.Done()
	defer cl.cancel()
	var resp *jsonrpc.Response
	if c.turn(cl) {
		res, err := c.h.Serve(cl.ctx, &transport.Request{Message: cl.msg, Kind: cl.kind, Session: cl.sess, Notifier: cl, Cancel: cl.cancel})
		if !cl.listen {
			<-c.sem
		}
		resp = transport.Respond(cl.ctx, cl.msg.ID, res, err)
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
		if cl.batch != nil {
			cl.batch.finish(nil)
		}
		return
	}
	cl.done = true
	if cl.batch != nil {
		cl.batch.finish(resp.Append(nil))
		return
	}
	bp := respBufs.Get().(*[]byte)
	b := resp.Append((*bp)[:0])
	c.write(b) // write copies b into the buffered writer
	if cap(b) <= maxPooledResponse {
		*bp = b
		respBufs.Put(bp)
	}
}

// turn waits for one of the MaxConcurrent tokens; false when the call
// was cancelled first.
func (c *conn) turn(cl *call) bool {
	if cl.listen {
		return true
	}
	select {
	case c.sem <- struct{}{}:
		return true
	case <-cl.ctx.Done():
		return false
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
	if len(params) == 0 || jsonrpc.Unmarshal(params, &p) != nil || !p.RequestID.IsValid() {
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
		c.calls.Wait()
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
