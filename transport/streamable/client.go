package streamable

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// ClientOptions configure a Client. The zero value is usable.
type ClientOptions struct {
	// HTTPClient sends the requests; nil means http.DefaultClient. A
	// redirect to another origin (scheme, host and port) than the
	// endpoint's is never followed, whatever the client's CheckRedirect.
	HTTPClient *http.Client
	// Header is added to every request (credentials, for instance).
	Header http.Header
	// MaxResumes bounds how often one legacy stream is resumed with
	// Last-Event-ID after its connection closes; 0 means 5.
	MaxResumes int
}

// Client is the client side of Streamable HTTP for one MCP endpoint, in
// both eras: modern requests with their metadata headers, and legacy
// sessions (Mcp-Session-Id, the standalone GET stream, resumption with
// Last-Event-ID and the server's retry interval). It implements
// transport.ClientConn.
type Client struct {
	url  string
	hc   *http.Client
	opts ClientOptions

	mu      sync.Mutex
	session string
	version string // the session's protocol version
	inbound func(*jsonrpc.Message)
	getStop context.CancelFunc
	getDone chan struct{}
	closed  bool
}

var _ transport.ClientConn = (*Client)(nil)

// NewClient returns a client of the MCP endpoint at url.
func NewClient(url string, opts *ClientOptions) *Client {
	c := &Client{url: url}
	if opts != nil {
		c.opts = *opts
	}
	c.hc = httpguard.SameOriginClient(c.opts.HTTPClient)
	if c.opts.MaxResumes <= 0 {
		c.opts.MaxResumes = 5
	}
	return c
}

// SessionID returns the legacy session id, or "".
func (c *Client) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// ErrSessionExpired is returned when the server no longer knows the legacy
// session (HTTP 404): the client must initialize again.
var ErrSessionExpired = transport.ErrSessionExpired

// ErrStreamBroken is returned when a response stream ended before the
// response and could not be resumed.
var ErrStreamBroken = transport.ErrStreamBroken

func (c *Client) newRequest(ctx context.Context, method string, body []byte, version string) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, r)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	if version != "" && !headerless(version) {
		req.Header.Set(HeaderProtocolVersion, version)
	}
	c.mu.Lock()
	if c.session != "" {
		req.Header.Set(HeaderSessionID, c.session)
	}
	c.mu.Unlock()
	return req, nil
}

// Call sends a request and returns its response. It implements
// transport.ClientConn.
func (c *Client) Call(ctx context.Context, call *transport.Call, onMessage func(*jsonrpc.Message)) (*jsonrpc.Message, error) {
	msg := call.Message
	body := jsonrpc.AppendRequest(nil, msg.ID, msg.Method, msg.Params)
	req, err := c.newRequest(ctx, http.MethodPost, body, call.ProtocolVersion)
	if err != nil {
		return nil, err
	}
	if call.Modern {
		req.Header.Set(HeaderMethod, msg.Method)
		if p := protocol.NameParam(msg.Method); p != "" && len(msg.Params) > 0 {
			if v, ok := paramString(msg.Params, p); ok {
				req.Header.Set(HeaderName, transport.EncodeHeaderValue(v))
			}
		}
	}
	for k, v := range call.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if msg.Method == protocol.MethodInitialize {
		if sid := resp.Header.Get(HeaderSessionID); sid != "" {
			c.mu.Lock()
			c.session = sid
			c.mu.Unlock()
		}
	}
	if resp.StatusCode == http.StatusNotFound && req.Header.Get(HeaderSessionID) != "" {
		c.mu.Lock()
		c.session = ""
		c.mu.Unlock()
		return nil, ErrSessionExpired
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		return c.readStream(ctx, resp.Body, msg.ID, call.ProtocolVersion, onMessage)
	case strings.HasPrefix(ct, "application/json"):
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			return nil, err
		}
		m, err := jsonrpc.Decode(b)
		if err != nil {
			if resp.StatusCode >= 400 {
				return nil, &transport.StatusError{Status: resp.StatusCode, Body: string(b)}
			}
			return nil, err
		}
		if msg.Method == protocol.MethodInitialize && resp.StatusCode >= 400 {
			return nil, &transport.StatusError{Status: resp.StatusCode, Body: string(b), RPC: m.Error}
		}
		if m.IsResponse() && m.ID != msg.ID && m.ID.IsValid() {
			return nil, errors.New("streamable: response id " + m.ID.String() + " does not match request " + msg.ID.String())
		}
		return m, nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return nil, &transport.StatusError{Status: resp.StatusCode, Body: string(b)}
}

// readStream reads an SSE response until the message answering id,
// resuming a legacy stream with Last-Event-ID when its connection closes.
func (c *Client) readStream(ctx context.Context, body io.Reader, id jsonrpc.ID, version string, onMessage func(*jsonrpc.Message)) (*jsonrpc.Message, error) {
	lastID := ""
	retry := time.Second
	for resumes := 0; ; resumes++ {
		var answer *jsonrpc.Message
		err := readEvents(body, func(ev clientEvent) bool {
			if ev.id != "" {
				lastID = ev.id
			}
			if ev.retry > 0 {
				retry = ev.retry
			}
			if strings.TrimSpace(ev.data) == "" {
				return true
			}
			m, err := jsonrpc.Decode([]byte(ev.data))
			if err != nil {
				return true // not a message: ignored
			}
			if m.IsResponse() && m.ID == id {
				answer = m
				return false
			}
			if onMessage != nil {
				onMessage(m)
			}
			return true
		})
		if answer != nil {
			return answer, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if lastID == "" || c.SessionID() == "" || resumes >= c.opts.MaxResumes {
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, ErrStreamBroken
		}
		// The server closed the connection but not the stream: poll it.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retry):
		}
		req, err := c.newRequest(ctx, http.MethodGet, nil, version)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, ErrStreamBroken
		}
		body = resp.Body
		defer resp.Body.Close()
	}
}

// Send posts a notification or a response. It implements
// transport.ClientConn.
func (c *Client) Send(ctx context.Context, msg []byte, version string) error {
	req, err := c.newRequest(ctx, http.MethodPost, msg, version)
	if err != nil {
		return err
	}
	if m, err := jsonrpc.Decode(msg); err == nil && m.Method != "" && protocol.IsModern(version) {
		req.Header.Set(HeaderMethod, m.Method)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusNotFound && req.Header.Get(HeaderSessionID) != "" {
		return ErrSessionExpired
	}
	if resp.StatusCode >= 300 {
		return &transport.StatusError{Status: resp.StatusCode}
	}
	return nil
}

// Inbound sets the receiver of the legacy standalone stream. It implements
// transport.ClientConn.
func (c *Client) Inbound(f func(*jsonrpc.Message)) {
	c.mu.Lock()
	c.inbound = f
	c.mu.Unlock()
}

// OpenStandalone opens the legacy session's standalone GET stream, whose
// messages go to the Inbound function, and keeps it open (resuming with
// Last-Event-ID) until Close. It returns once the server has answered the
// first GET (or after a few seconds), so that requests the server sends on
// the stream from then on reach the client. A server without one (405) is
// not an error.
func (c *Client) OpenStandalone(version string) {
	c.mu.Lock()
	if c.getStop != nil || c.session == "" || c.closed {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.getStop, c.getDone = cancel, make(chan struct{})
	done := c.getDone
	c.mu.Unlock()
	answered := make(chan struct{})
	go func() {
		defer close(done)
		c.runStandalone(ctx, version, answered)
	}()
	select {
	case <-answered:
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

func (c *Client) runStandalone(ctx context.Context, version string, answered chan struct{}) {
	var once sync.Once
	signal := func() { once.Do(func() { close(answered) }) }
	defer signal()
	lastID := ""
	retry := time.Second
	for attempt := 0; ctx.Err() == nil; attempt++ {
		req, err := c.newRequest(ctx, http.MethodGet, nil, version)
		if err != nil {
			return
		}
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := c.hc.Do(req)
		signal()
		if err == nil && resp.StatusCode == http.StatusOK {
			attempt = 0
			_ = readEvents(resp.Body, func(ev clientEvent) bool {
				if ev.id != "" {
					lastID = ev.id
				}
				if ev.retry > 0 {
					retry = ev.retry
				}
				if m, err := jsonrpc.Decode([]byte(ev.data)); err == nil {
					c.mu.Lock()
					f := c.inbound
					c.mu.Unlock()
					if f != nil {
						f(m)
					}
				}
				return ctx.Err() == nil
			})
			resp.Body.Close()
		} else {
			if resp != nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound {
					return
				}
			}
			if attempt > 8 {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
	}
}

// Close stops the standalone stream and ends the legacy session with
// DELETE. It implements transport.ClientConn.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	stop, done, session := c.getStop, c.getDone, c.session
	version := c.version
	c.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	if session != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if req, err := c.newRequest(ctx, http.MethodDelete, nil, version); err == nil {
			if resp, err := c.hc.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	return nil
}

// SetSessionVersion records the negotiated version of the legacy session
// (sent with DELETE and the GET stream).
func (c *Client) SetSessionVersion(v string) {
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
}

type clientEvent struct {
	id    string
	data  string
	retry time.Duration
}

// readEvents parses an SSE stream, calling fn per event until it returns
// false or the stream ends.
func readEvents(r io.Reader, fn func(clientEvent) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var ev clientEvent
	var data []string
	has := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if has {
				ev.data = strings.Join(data, "\n")
				if !fn(ev) {
					return nil
				}
			}
			ev, data, has = clientEvent{}, nil, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id, has = value, true
		case "data":
			data, has = append(data, value), true
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
				ev.retry, has = time.Duration(ms)*time.Millisecond, true
			}
		case "event":
			has = true
		}
	}
	if has {
		ev.data = strings.Join(data, "\n")
		fn(ev)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}

// CarriesHeaders reports that this transport mirrors tool parameters into
// HTTP headers, so clients must honour x-mcp-header annotations.
func (c *Client) CarriesHeaders() bool { return true }
