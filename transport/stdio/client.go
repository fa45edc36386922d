package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// ConnOptions configure a client Conn. The zero value is usable.
type ConnOptions struct {
	// MaxLineBytes limits one incoming message; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
}

// Conn is the client side of a newline-delimited JSON-RPC stream (a server
// process's stdout and stdin, a socket). It demultiplexes responses by id
// and routes progress notifications to their call. It implements
// transport.ClientConn.
type Conn struct {
	w    io.WriteCloser
	opts ConnOptions

	wmu sync.Mutex

	mu      sync.Mutex
	pending map[jsonrpc.ID]*pendingCall
	tokens  map[string]*pendingCall // progress tokens of calls in flight
	inbound func(*jsonrpc.Message)
	err     error // why the connection ended
	done    chan struct{}
}

type pendingCall struct {
	resp      chan *jsonrpc.Message
	onMessage func(*jsonrpc.Message)
}

var _ transport.ClientConn = (*Conn)(nil)

// ErrConnClosed is returned by calls on a connection that has ended.
var ErrConnClosed = errors.New("stdio: connection closed")

// NewConn starts reading server messages from r; requests are written to w.
// The connection ends when r reaches end of input (Done is then closed).
func NewConn(r io.Reader, w io.WriteCloser, opts *ConnOptions) *Conn {
	c := &Conn{w: w, pending: map[jsonrpc.ID]*pendingCall{}, tokens: map[string]*pendingCall{}, done: make(chan struct{})}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxLineBytes <= 0 {
		c.opts.MaxLineBytes = DefaultMaxLineBytes
	}
	go c.read(r)
	return c
}

// Done is closed when the connection has ended; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Conn) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), c.opts.MaxLineBytes+1)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		msg, err := jsonrpc.Decode(line)
		if err != nil {
			continue // not a message: the server broke the framing; skip it
		}
		c.route(msg)
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	}
	c.fail(fmt.Errorf("%w: %v", ErrConnClosed, err))
}

func (c *Conn) route(msg *jsonrpc.Message) {
	c.mu.Lock()
	var target *pendingCall
	switch {
	case msg.IsResponse():
		if p := c.pending[msg.ID]; p != nil {
			delete(c.pending, msg.ID)
			c.mu.Unlock()
			p.resp <- msg
			return
		}
	case msg.Method == protocol.NotificationProgress:
		var p struct {
			Token protocol.ProgressToken `json:"progressToken"`
		}
		if jsonrpc.Unmarshal(msg.Params, &p) == nil {
			target = c.tokens[string(p.Token.Raw())]
		}
	}
	in := c.inbound
	c.mu.Unlock()
	switch {
	case target != nil && target.onMessage != nil:
		target.onMessage(msg)
	case in != nil:
		in(msg)
	}
}

func (c *Conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	for id, p := range c.pending {
		delete(c.pending, id)
		close(p.resp)
	}
	close(c.done)
}

func (c *Conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.Err(); err != nil {
		return err
	}
	b = append(b[:len(b):len(b)], '\n')
	_, err := c.w.Write(b)
	return err
}

// Call sends a request and waits for its response; cancelling ctx sends
// notifications/cancelled for it. It implements transport.ClientConn.
func (c *Conn) Call(ctx context.Context, call *transport.Call, onMessage func(*jsonrpc.Message)) (*jsonrpc.Message, error) {
	msg := call.Message
	p := &pendingCall{resp: make(chan *jsonrpc.Message, 1), onMessage: onMessage}
	token := progressToken(msg.Params)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	if _, dup := c.pending[msg.ID]; dup {
		c.mu.Unlock()
		return nil, errors.New("stdio: request id " + msg.ID.String() + " already in flight")
	}
	c.pending[msg.ID] = p
	if token != "" {
		c.tokens[token] = p
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, msg.ID)
		if token != "" && c.tokens[token] == p {
			delete(c.tokens, token)
		}
		c.mu.Unlock()
	}()
	if err := c.write(jsonrpc.AppendRequest(nil, msg.ID, msg.Method, msg.Params)); err != nil {
		return nil, err
	}
	select {
	case resp, ok := <-p.resp:
		if !ok {
			return nil, c.Err()
		}
		return resp, nil
	case <-ctx.Done():
		b, _ := json.Marshal(protocol.CancelledParams{RequestID: msg.ID, Reason: ctx.Err().Error()})
		_ = c.write(jsonrpc.AppendNotification(nil, protocol.NotificationCancelled, b))
		return nil, ctx.Err()
	}
}

func progressToken(params json.RawMessage) string {
	if len(params) == 0 || params[0] != '{' {
		return ""
	}
	var p struct {
		Meta struct {
			Token *jsonrpc.ID `json:"progressToken"`
		} `json:"_meta"`
	}
	if jsonrpc.Unmarshal(params, &p) != nil || p.Meta.Token == nil || !p.Meta.Token.IsValid() {
		return ""
	}
	return string(p.Meta.Token.Raw())
}

// Send writes a notification or a response. It implements
// transport.ClientConn.
func (c *Conn) Send(ctx context.Context, msg []byte, protocolVersion string) error {
	return c.write(msg)
}

// CarriesHeaders reports false: stdio has no headers to mirror tool
// parameters into. It implements transport.ClientConn.
func (c *Conn) CarriesHeaders() bool { return false }

// Inbound sets the receiver of messages that belong to no call. It
// implements transport.ClientConn.
func (c *Conn) Inbound(f func(*jsonrpc.Message)) {
	c.mu.Lock()
	c.inbound = f
	c.mu.Unlock()
}

// Close closes the writing side: a server exits at the end of its input.
func (c *Conn) Close() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.w.Close()
}

// CommandOptions configure a server process started with Start.
type CommandOptions struct {
	ConnOptions
	// Stderr receives the server's standard error; nil discards it.
	Stderr io.Writer
	// Env and Dir are the process's environment and working directory, as
	// in exec.Cmd.
	Env []string
	Dir string
	// CloseWait is how long Close waits for the server to exit after its
	// input is closed before sending SIGTERM, and then again before
	// SIGKILL; 0 means 2 seconds.
	CloseWait time.Duration
}

// Command is an MCP server process spoken to over its standard input and
// output. It implements transport.ClientConn.
type Command struct {
	*Conn
	cmd       *exec.Cmd
	stdout    io.Closer
	closeWait time.Duration
	exited    chan struct{}
	waitErr   error
	closeOnce sync.Once
}

// ErrProcessExited is the error of calls on a server process that exited.
var ErrProcessExited = errors.New("stdio: server process exited")

// Start starts the server command name with args.
func Start(name string, args []string, opts *CommandOptions) (*Command, error) {
	var o CommandOptions
	if opts != nil {
		o = *opts
	}
	if o.CloseWait <= 0 {
		o.CloseWait = 2 * time.Second
	}
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = o.Env, o.Dir
	cmd.Stderr = o.Stderr
	// Its own process group: a Ctrl-C meant for the client does not reach
	// the server, which the client shuts down itself (stdin, SIGTERM,
	// SIGKILL).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = o.CloseWait
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Command{cmd: cmd, stdout: stdout, closeWait: o.CloseWait, exited: make(chan struct{})}
	c.Conn = NewConn(stdout, stdin, &o.ConnOptions)
	go func() {
		<-c.Conn.Done() // stdout closed: the process is ending
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// Exited is closed once the process has exited; ExitErr then tells how.
func (c *Command) Exited() <-chan struct{} { return c.exited }

// ExitErr returns the process's exit error (nil for a clean exit) once it
// has exited.
func (c *Command) ExitErr() error {
	select {
	case <-c.exited:
		return c.waitErr
	default:
		return nil
	}
}

// PID returns the process id.
func (c *Command) PID() int { return c.cmd.Process.Pid }

// Close shuts the server down as the spec prescribes: it closes the
// server's input, waits, sends SIGTERM, waits again, then SIGKILL; a last
// wait later it stops reading the server's output, which a child of the
// server may hold open.
func (c *Command) Close() error {
	c.closeOnce.Do(func() {
		_ = c.Conn.Close()
		for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
			if sig != 0 {
				_ = c.cmd.Process.Signal(sig)
			}
			select {
			case <-c.exited:
				return
			case <-time.After(c.closeWait):
			}
		}
		// Killed, but a child of the process may still hold its output
		// open; stop reading it, so that the process is reaped.
		_ = c.stdout.Close()
		<-c.exited
	})
	return nil
}
