package sse

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// ErrNotSSE is wrapped by the error of a Dial whose server is not an
// HTTP+SSE server: the GET was answered with another status than 200
// (the error also wraps a *transport.StatusError), not with an event
// stream, or with a stream whose first event is not endpoint.
var ErrNotSSE = errors.New("sse: not an HTTP+SSE server")

// ClientOptions configure Dial. The zero value is usable.
type ClientOptions struct {
	// HTTPClient sends the requests; nil means http.DefaultClient. A
	// redirect to another origin (scheme, host and port) than the
	// stream's is never followed, whatever the client's CheckRedirect.
	HTTPClient *http.Client
	// Header is added to every request (the GET and each POST).
	Header http.Header
	// MaxLineBytes limits one event of the stream; 0 means
	// stdio.DefaultMaxLineBytes.
	MaxLineBytes int
}

// Client is the client side of an HTTP+SSE connection: the server's
// messages arrive as events of the GET stream, the client's are POSTed to
// the endpoint the stream announced. It implements transport.ClientConn.
type Client struct {
	*stdio.Conn

	endpoint string
	hc       *http.Client
	header   http.Header
	ctx      context.Context // the connection's; Close cancels it
	cancel   context.CancelFunc
	in       *io.PipeReader // the Conn's input, written by read
	readDone chan struct{}  // closed when read has ended
	closer   sync.Once
}

var _ transport.ClientConn = (*Client)(nil)

// Dial opens the SSE stream at rawURL and waits, for as long as ctx allows,
// for its endpoint event. The endpoint must be on the stream's origin
// (scheme, host and port): a server cannot send the client's messages
// elsewhere. The connection lasts until Close; ctx bounds Dial only.
func Dial(ctx context.Context, rawURL string, opts *ClientOptions) (*Client, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	o.HTTPClient = httpguard.SameOriginClient(o.HTTPClient)
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = stdio.DefaultMaxLineBytes
	}
	base, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("sse: %w", err)
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("sse: %q is not an absolute http(s) URL", rawURL)
	}
	// The stream outlives Dial: it keeps ctx's values, not its end.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, rawURL, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("sse: %w", err)
	}
	addHeader(req.Header, o.Header)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	stop := context.AfterFunc(ctx, cancel)
	fail := func(err error) (*Client, error) {
		stop()
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	resp, err := o.HTTPClient.Do(req)
	if err != nil {
		return fail(fmt.Errorf("sse: %w", err))
	}
	body := resp.Body
	failBody := func(err error) (*Client, error) {
		body.Close()
		return fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(body, 4<<10))
		return failBody(fmt.Errorf("%w: GET %s: %w", ErrNotSSE, rawURL, &transport.StatusError{Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return failBody(fmt.Errorf("%w: GET %s answered %q, not text/event-stream", ErrNotSSE, rawURL, resp.Header.Get("Content-Type")))
	}
	events := newEventReader(body, o.MaxLineBytes)
	ev, err := events.next()
	switch {
	case errors.Is(err, io.EOF):
		return failBody(fmt.Errorf("%w: the stream of %s ended before an endpoint event", ErrNotSSE, rawURL))
	case err != nil:
		return failBody(fmt.Errorf("sse: reading the stream of %s: %w", rawURL, err))
	case ev.typ != "endpoint":
		return failBody(fmt.Errorf("%w: the first event of %s is %q, not endpoint", ErrNotSSE, rawURL, clip(ev.typ)))
	}
	if !stop() {
		return failBody(ctx.Err())
	}
	ep, err := base.Parse(strings.TrimSpace(string(ev.data)))
	if err != nil {
		return failBody(fmt.Errorf("sse: the endpoint event of %s: %w", rawURL, err))
	}
	ep.Fragment, ep.RawFragment = "", ""
	if !sameOrigin(base, ep) {
		return failBody(fmt.Errorf("sse: refusing the endpoint %s: it is not on the origin of %s", clip(ep.String()), rawURL))
	}
	pr, pw := io.Pipe()
	c := &Client{endpoint: ep.String(), hc: o.HTTPClient, header: o.Header, ctx: cctx, cancel: cancel, in: pr, readDone: make(chan struct{})}
	c.Conn = stdio.NewConn(pr, poster{c}, &stdio.ConnOptions{MaxLineBytes: o.MaxLineBytes})
	go c.read(events, body, pw)
	return c, nil
}

// Endpoint returns the URL messages are POSTed to, as the server announced
// it, resolved against the stream's URL.
func (c *Client) Endpoint() string { return c.endpoint }

// CarriesHeaders reports false: tool parameters are not mirrored into
// headers, and a cancelled call sends notifications/cancelled itself. It
// implements transport.ClientConn.
func (c *Client) CarriesHeaders() bool { return false }

// Close ends the stream and the connection; calls in flight fail. It is
// safe to call more than once. It implements transport.ClientConn.
func (c *Client) Close() error {
	c.closer.Do(func() {
		c.cancel()
		c.in.CloseWithError(transport.ErrClosed)
		<-c.readDone
		<-c.Conn.Done()
	})
	return nil
}

// read passes the stream's message events to the Conn, a line each, until
// the stream ends.
func (c *Client) read(events *eventReader, body io.ReadCloser, pw *io.PipeWriter) {
	defer close(c.readDone)
	defer body.Close()
	for {
		ev, err := events.next()
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		if ev.typ != "message" {
			continue // endpoint again, or an event of an extension
		}
		line := ev.data
		if bytes.IndexByte(line, '\n') >= 0 {
			// Data of several lines: the JSON's own line breaks, white
			// space between its tokens.
			var buf bytes.Buffer
			if json.Compact(&buf, line) != nil {
				continue // not a message
			}
			line = buf.Bytes()
		}
		if _, err := pw.Write(append(line, '\n')); err != nil {
			return
		}
	}
}

// post sends one message to the endpoint.
func (c *Client) post(msg []byte) error {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.endpoint, bytes.NewReader(msg))
	if err != nil {
		return fmt.Errorf("sse: %w", err)
	}
	addHeader(req.Header, c.header)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		if c.ctx.Err() != nil {
			return transport.ErrClosed
		}
		return fmt.Errorf("sse: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("sse: POST %s: %w", c.endpoint, &transport.StatusError{Status: resp.StatusCode, Body: strings.TrimSpace(string(b))})
	}
	return nil
}

// poster is the Conn's output: each line it writes is POSTed.
type poster struct{ c *Client }

func (p poster) Write(b []byte) (int, error) {
	if err := p.c.post(bytes.TrimSuffix(b, []byte("\n"))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Close does nothing: Client.Close ends the connection.
func (p poster) Close() error { return nil }

func addHeader(dst, src http.Header) {
	for k, vs := range src {
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

// sameOrigin reports whether a and b have the same scheme, host and port,
// a missing port being the scheme's default.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// event is one event of the stream.
type event struct {
	typ  string // "message" when the stream named none
	data []byte // the data lines, joined with \n
}

// eventReader parses an event stream (the HTML Living Standard, "Server-sent
// events"): lines end with CRLF, LF or CR; a blank line dispatches the
// event; comments, id, retry and unknown fields are ignored.
type eventReader struct {
	r      *bufio.Reader
	max    int    // bound on an event's data
	line   []byte // the line being read
	skipLF bool   // the last line ended with CR: a LF next belongs to it
	first  bool   // at the start of the stream, where a BOM may be
}

// errEventTooLarge ends a stream whose event is over the limit.
var errEventTooLarge = errors.New("sse: event exceeds the size limit")

func newEventReader(r io.Reader, max int) *eventReader {
	return &eventReader{r: bufio.NewReaderSize(r, 64<<10), max: max, first: true}
}

// next returns the next event; io.EOF at the end of the stream (an event
// not ended by a blank line is dropped, as the standard has it).
func (e *eventReader) next() (event, error) {
	var ev event
	hasData := false
	for {
		line, err := e.readLine()
		if err != nil {
			return event{}, err
		}
		if len(line) == 0 {
			if !hasData {
				ev.typ = ""
				continue
			}
			if ev.typ == "" {
				ev.typ = "message"
			}
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.typ = string(value)
		case "data":
			if hasData {
				ev.data = append(ev.data, '\n')
			}
			hasData = true
			if len(ev.data)+len(value) > e.max {
				return event{}, fmt.Errorf("%w of %d bytes", errEventTooLarge, e.max)
			}
			ev.data = append(ev.data, value...)
		}
	}
}

// readLine returns the next line without its end; it is valid until the
// next call.
func (e *eventReader) readLine() ([]byte, error) {
	if e.skipLF {
		e.skipLF = false
		if b, err := e.r.Peek(1); err == nil && b[0] == '\n' {
			_, _ = e.r.Discard(1)
		}
	}
	if e.first {
		e.first = false
		if b, err := e.r.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
			_, _ = e.r.Discard(3)
		}
	}
	e.line = e.line[:0]
	for {
		if e.r.Buffered() == 0 {
			if _, err := e.r.Peek(1); err != nil {
				if errors.Is(err, io.EOF) && len(e.line) > 0 {
					return e.line, nil
				}
				return nil, err
			}
		}
		chunk, _ := e.r.Peek(e.r.Buffered())
		i := bytes.IndexByte(chunk, '\n')
		if j := bytes.IndexByte(chunk, '\r'); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			if len(e.line)+len(chunk) > e.max+len("data: ") {
				return nil, fmt.Errorf("%w of %d bytes", errEventTooLarge, e.max)
			}
			e.line = append(e.line, chunk...)
			_, _ = e.r.Discard(len(chunk))
			continue
		}
		if len(e.line)+i > e.max+len("data: ") {
			return nil, fmt.Errorf("%w of %d bytes", errEventTooLarge, e.max)
		}
		e.line = append(e.line, chunk[:i]...)
		e.skipLF = chunk[i] == '\r'
		_, _ = e.r.Discard(i + 1)
		if cap(e.line) > 1<<20 && len(e.line) < 64<<10 {
			e.line = append([]byte(nil), e.line...) // do not keep a huge line's buffer
		}
		return e.line, nil
	}
}
