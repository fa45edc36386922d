package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/bufpool"
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
	// MaxConcurrent bounds the requests handled at once; 0 means 64. A
	// request's turn lasts until its response is written, so a peer that
	// stops reading holds at most this many responses. Further requests
	// wait for a turn, in no particular order, while the input goes on
	// being read (a cancellation, or the client's answer to a request the
	// server sent, is never stuck behind them). subscriptions/listen
	// streams do not count.
	MaxConcurrent int
	// MaxPending bounds the requests read and not yet answered; 0 means
	// 4,096. A request beyond it is answered at once with a -32603 "server
	// busy" error.
	MaxPending int
	// MaxPendingBytes bounds the bytes the connection holds: the requests
	// read and not yet answered, and the responses not yet written (a
	// request counts from when it is read until its response is written,
	// so a peer that stops reading stops being served); 0 means
	// DefaultMaxPendingBytes. A request beyond it is answered at once with
	// the -32603 "server busy" error, and the input goes on being read, so
	// cancellations and the client's answers still arrive while the peer
	// reads. Keep it at least MaxLineBytes, or the largest messages are
	// always refused. Ignored when Budget is set.
	MaxPendingBytes int64
	// Budget, when not nil, is the budget the connection's bytes are taken
	// from, instead of one of MaxPendingBytes of its own: one shared with
	// other connections, or one within a shared parent (NewBudget).
	Budget *Budget
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
// Requests are served at most MaxConcurrent at once, within MaxPending and
// MaxPendingBytes: a quick one by the goroutine that reads the input, whose
// answers to what one read brought are written together; others (those
// that follow slow ones) by workers. A request that runs longer than a
// millisecond, or sends the client anything, never keeps the input from
// being read: reading passes to another goroutine. When Serve returns, every
// goroutine it started has ended: when ctx ends while the reader is blocked
// in in.Read, Serve interrupts the read through SetReadDeadline where in has
// it (os.Stdin on a pipe, net.Conn); with another reader, its goroutine ends
// when that Read returns.
func Serve(ctx context.Context, h transport.Handler, in io.Reader, out io.Writer, opts *Options) error {
	c := newConn(h, out, opts)
	return c.run(ctx, func(ctx context.Context) error { return c.readLines(ctx, in) }, in)
}

type conn struct {
	h      transport.Handler
	legacy transport.Legacy // nil when h serves the modern era only
	opts   Options
	logger *slog.Logger

	out *outbox // what is written, in order, in batches (write.go)

	work   *workers // serve the requests, MaxConcurrent at once
	budget *Budget  // the bytes of requests and responses held

	mu       sync.Mutex
	inflight map[jsonrpc.ID]*call
	calls    sync.WaitGroup // requests being served
	closing  bool           // set by shutdown: no request starts after it

	// The legacy session of this process, once a client sent initialize
	// (when h serves the legacy era). It lives until the end of input.
	session  transport.Session
	pumpDone chan struct{} // closed when the session's stream pump ends

	// Reading, and the requests the reader serves itself (inline.go).
	readErr    chan error    // the end of reading, sent by the last reader
	readerDone chan struct{} // closed by the last reader
	lines      *bufio.Reader // the input of Serve, read by whoever reads
	next       *call         // the request the reader serves once its line is done with
	heldTurns  int           // the turns of requests whose responses are held (c.rmu)
	rmu        sync.Mutex
	readCtx    context.Context
	endRead    sync.Once
	inline     *call        // the request the reader is serving, until it hands reading on
	inlineOff  atomic.Int32 // requests to give to workers before serving one inline again
	alone      int          // the reader's count of requests in a row that came with nothing else in flight
	backoff    atomic.Int32 // the next inlineOff after a slow request
	watch      *time.Timer
	watching   bool   // the watch ticks (c.rmu)
	started    uint64 // how many things the reader began serving itself (c.rmu)
}

type call struct {
	c      *conn
	ctx    context.Context
	cancel context.CancelFunc
	msg    *jsonrpc.Message
	sess   transport.Session // the request's legacy session, or nil
	late   bool              // read after sess ended: answered (refused), not abandoned with it
	batch  *batch            // the batch the request came in, or nil
	origin *origin           // the message of a MessageReader it came in, or nil
	charge int64             // the bytes taken from the budget for the request
	kind   transport.Kind
	listen bool
	inline bool // served by the reader (it may hand reading on meanwhile)
	held   bool // its response was held for the reader to write
	done   bool // cancelled or answered: nothing more is written; mu guards it
	mu     sync.Mutex
	req    transport.Request // what serve hands the handler (one allocation with the call)
}

// Notify writes a notification for the call until it is answered or
// cancelled; it is the call's transport.Notifier.
func (cl *call) Notify(b []byte) error {
	if cl.inline {
		// A request that talks to the client may wait for its answer,
		// which the input brings: the input goes on being read.
		cl.c.handOn(cl)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.done {
		return errCallDone
	}
	return cl.c.write(b)
}

func newConn(h transport.Handler, out io.Writer, opts *Options) *conn {
	c := &conn{h: h, legacy: h.Legacy(), inflight: map[jsonrpc.ID]*call{}}
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
	if c.opts.MaxPendingBytes <= 0 {
		c.opts.MaxPendingBytes = DefaultMaxPendingBytes
	}
	c.budget = c.opts.Budget
	if c.budget == nil {
		c.budget = NewBudget(c.opts.MaxPendingBytes, nil)
	}
	c.out = newOutbox(out, c.budget)
	c.work = newWorkers(c.opts.MaxConcurrent, c.opts.MaxPending)
	c.logger = c.opts.Logger
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// run serves what read reads until it returns or ctx ends; in, when it has
// SetReadDeadline, is interrupted through it when ctx ends first.
func (c *conn) run(ctx context.Context, read func(context.Context) error, in any) error {
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	// The reader decodes and dispatches each message itself (the decoded
	// message owns a copy of its bytes, so the line buffer is reused):
	// a request reaches its worker in one hand-off, or is served by the
	// reader itself (inline.go), which then may hand reading on to
	// another goroutine; the last reader reports the end of input.
	c.readErr = make(chan error, 1)
	c.readerDone = make(chan struct{})
	stopWatch := c.startWatch()
	defer stopWatch()
	go c.reading(func() error { return read(ctx) })
	readErr, readerDone := c.readErr, c.readerDone
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
	c.lines = bufio.NewReaderSize(in, 64<<10)
	c.readCtx = ctx
	return c.readOn(ctx)
}

// readOn reads lines from c.lines until the end of input, an error, or
// (errHandedOn) until it hands reading on to another goroutine.
func (c *conn) readOn(ctx context.Context) error {
	r := c.lines
	var acc []byte
	tooLong := false
	for {
		if !lineBuffered(r) {
			// About to wait for input: first write what the requests
			// served meanwhile answered.
			if handedOn, err := c.flushHeld(); handedOn {
				return errHandedOn
			} else if err != nil {
				return err
			}
		}
		chunk, err := r.ReadSlice('\n')
		if err == nil && len(acc) == 0 && !tooLong && len(chunk) <= c.opts.MaxLineBytes+2 {
			// The common case: a whole line in the reader's buffer.
			if line := bytes.TrimSpace(chunk); len(line) > 0 && len(bytes.TrimRight(chunk, "\r\n")) <= c.opts.MaxLineBytes {
				if err := c.message(ctx, line, nil); err != nil {
					return err
				}
				if c.serveNext() {
					return errHandedOn
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
				if err := c.message(ctx, line, nil); err != nil {
					return err
				}
			}
			acc, tooLong = acc[:0], false
			if cap(acc) > 1<<20 {
				acc = nil // do not keep a huge line's buffer
			}
			if c.serveNext() {
				return errHandedOn
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

// lineBuffered reports whether r holds a whole line: reading it does not
// wait for input.
func lineBuffered(r *bufio.Reader) bool {
	n := r.Buffered()
	if n == 0 {
		return false
	}
	b, _ := r.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// message decodes and dispatches one message: an input line, or (o not
// nil) the data of a MessageReader's message. Once ctx is done the input
// is no longer served.
func (c *conn) message(ctx context.Context, data []byte, o *origin) error {
	// A peer that does not read what it is sent is not read from either.
	if err := c.out.waitRoom(ctx); err != nil {
		return err
	}
	if len(data) > 0 && data[0] == '[' {
		if sess := c.currentSession(); sess != nil && batches(sess.Version()) {
			c.batch(ctx, data, o)
			return nil
		}
	}
	charge := c.chargeFor(data, o)
	if charge > busyCheckBytes && c.budget.Full(charge) {
		// A large request the budget cannot take is refused without
		// being decoded (which would copy it): only its id is read.
		var head struct {
			ID     jsonrpc.ID `json:"id"`
			Method string     `json:"method"`
		}
		if jsonrpc.Unmarshal(data, &head) == nil && head.ID.IsValid() && head.Method != "" {
			c.write(jsonrpc.AppendError(nil, head.ID, errBusyBytes))
			return nil
		}
	}
	msg, err := jsonrpc.Decode(data)
	c.dispatch(ctx, msg, err, nil, o, charge)
	return nil
}

// busyCheckBytes is the size from which a request is checked against the
// budget before it is decoded.
const busyCheckBytes = 64 << 10

// chargeFor is what the engine takes from the budget for a request of
// data: its size, unless a MessageReader accounts it.
func (c *conn) chargeFor(data []byte, o *origin) int64 {
	if o != nil {
		return 0
	}
	return int64(len(data))
}

// dispatch handles one message read; b is the batch it came in, o its
// MessageReader message (both may be nil), and charge what a request of
// it takes from the budget.
func (c *conn) dispatch(ctx context.Context, msg *jsonrpc.Message, err error, b *batch, o *origin, charge int64) {
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
			c.initialize(ctx, msg, o)
			return
		}
		c.start(ctx, msg, kind, sess, b, o, charge)
	case msg.IsNotification() && msg.Method == protocol.NotificationCancelled:
		// Requests of both eras are registered here as they are read, so
		// a cancellation that follows its request at once finds it.
		c.cancel(msg.Params)
	default:
		rctx, cancel := o.context(ctx)
		c.receive(rctx, msg, sess)
		cancel()
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
func (c *conn) initialize(ctx context.Context, msg *jsonrpc.Message, o *origin) {
	ictx, cancel := o.context(ctx)
	defer cancel()
	res, err := c.serveRequest(ictx, &transport.Request{Message: msg, Kind: transport.KindInitialize, Cancel: cancel})
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
			defer func() {
				if p := recover(); p != nil {
					c.logger.Error("stdio: panic delivering session messages", "panic", p, "stack", string(debug.Stack()))
				}
			}()
			for {
				m, err := sess.Next(ctx)
				if err != nil {
					if ctx.Err() == nil {
						// The session ended: its requests are cancelled
						// here, which the session leaves to the
						// transport (Request.Tracked).
						c.cancelSession(sess)
					}
					return
				}
				if c.write(m) != nil {
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

// start registers a request and has it served: by the reader itself
// (serveInline), by a worker, or (a listen stream) on a goroutine of its
// own; b is the batch it came in and o its MessageReader message (or nil),
// charge the bytes it takes from the budget.
func (c *conn) start(ctx context.Context, msg *jsonrpc.Message, kind transport.Kind, sess transport.Session, b *batch, o *origin, charge int64) {
	cctx, cancel := o.context(ctx)
	cl := &call{c: c, ctx: cctx, cancel: cancel, msg: msg, kind: kind, sess: sess, batch: b, origin: o, charge: charge,
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
	if !c.budget.Take(charge) {
		c.mu.Unlock()
		cancel()
		c.reply(b, jsonrpc.AppendError(nil, msg.ID, errBusyBytes))
		return
	}
	if sess != nil {
		// Decided under c.mu, which cancelSession takes only after the
		// session's Done is closed: a request registered before that is
		// abandoned with the session, one read after it is answered.
		select {
		case <-sess.Done():
			cl.late = true
		default:
		}
	}
	alone := len(c.inflight) == 0
	c.inflight[msg.ID] = cl
	c.calls.Add(1)
	c.mu.Unlock()
	if b != nil {
		b.pending.Add(1)
	}
	o.hold()
	if cl.listen {
		go c.serve(cl)
		return
	}
	if b == nil && o == nil && c.lines != nil && c.serveInline(cl, alone) {
		return
	}
	c.work.submit(c, cl)
}

// errBusyBytes refuses a request beyond the byte budget.
var errBusyBytes = jsonrpc.NewError(protocol.CodeInternalError, "server busy: the requests waiting for an answer hold too many bytes; try again later", nil)

// serve handles one call, on a worker (a listen stream on a goroutine of
// its own), unless it was cancelled while it waited for one, and writes
// its response unless it was cancelled. The request's bytes are held
// until the response is written.
func (c *conn) serve(cl *call) {
	defer c.calls.Done()
	defer cl.cancel()
	defer cl.origin.release()
	defer c.budget.Release(cl.charge)
	bp := bufpool.Get()
	defer bufpool.Put(bp) // after send, which copies the response
	var b []byte          // the response, when there is one
	if cl.ctx.Err() == nil {
		cl.req = transport.Request{Message: cl.msg, Kind: cl.kind, Session: cl.sess, Notifier: cl, Cancel: cl.cancel, Tracked: true}
		res, err := c.serveRequest(cl.ctx, &cl.req)
		if out, ok := transport.AppendResponse(cl.ctx, (*bp)[:0], cl.msg.ID, res, err); ok {
			b, *bp = out, out
		}
	}
	c.mu.Lock()
	delete(c.inflight, cl.msg.ID)
	closing := c.closing
	c.mu.Unlock()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if b == nil && !cl.done && closing && !cl.listen {
		// Cancelled by the shutdown, not by the client: every request
		// read gets an answer (listen streams, which the shutdown ends on
		// purpose, excepted).
		b = jsonrpc.AppendError((*bp)[:0], cl.msg.ID, errShuttingDown)
		*bp = b
	}
	if cl.done || b == nil {
		cl.done = true
		if cl.batch != nil {
			cl.batch.finish(nil)
		}
		return
	}
	cl.done = true
	if cl.batch != nil {
		cl.batch.finish(bytes.Clone(b))
		return
	}
	// The outbox copies b and holds its bytes against the budget until
	// they are written.
	c.send(cl, b)
}

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
	if cl != nil {
		cl.abandon()
	}
}

// abandon cancels the call; nothing more is written for it.
func (cl *call) abandon() {
	cl.mu.Lock()
	cl.done = true
	cl.mu.Unlock()
	cl.cancel()
}

// cancelSession cancels the requests of sess, which has ended; nothing is
// written for them.
func (c *conn) cancelSession(sess transport.Session) {
	c.mu.Lock()
	var ended []*call
	for _, cl := range c.inflight {
		if cl.sess == sess && !cl.late {
			ended = append(ended, cl)
		}
	}
	c.mu.Unlock()
	for _, cl := range ended {
		cl.abandon()
	}
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
	c.work.stop()
	if sess != nil {
		// The session ends with the process's input, once its requests
		// are done; so does the pump of its standalone messages.
		sess.Close()
		<-pumpDone
	}
	c.flush()
}

// serveRequest is h.Serve with a panic (of a handler, of middleware)
// answered as an internal error, without its details, and logged: one
// request's fault never ends the connection nor the process.
func (c *conn) serveRequest(ctx context.Context, req *transport.Request) (res protocol.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("stdio: panic serving a request", "method", req.Message.Method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, errPanic
		}
	}()
	return c.h.Serve(ctx, req)
}

// receive is h.Receive with a panic logged: the reader goes on.
func (c *conn) receive(ctx context.Context, msg *jsonrpc.Message, sess transport.Session) {
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("stdio: panic receiving a message", "method", msg.Method, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	c.h.Receive(ctx, msg, sess)
}

// errPanic answers a request whose handler panicked.
var errPanic = jsonrpc.NewError(protocol.CodeInternalError, "internal error", nil)
