package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/inmemory"
	"github.com/mcpkit/mcpkit/transport/sse"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// ConnectURL connects to the MCP server at rawURL, whatever its era and
// HTTP transport: a modern request first (server/discover); initialize when
// the answer is not a modern one, or names only handshake revisions in
// common; and, when initialize is refused with 400, 404 or 405, the
// deprecated HTTP+SSE transport of revision 2024-11-05 (a GET expecting an
// endpoint event). The era and transport found are remembered for the URL,
// so the next ConnectURL goes straight to them (and probes again if they no
// longer hold).
func (c *Client) ConnectURL(ctx context.Context, rawURL string, opts *streamable.ClientOptions) (*Session, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	key := "http " + u.Scheme + "://" + u.Host + u.EscapedPath()
	if d, ok := c.remembered(key); ok && d.transport == TransportSSE && c.opts.Era != EraModern {
		s, err := c.connectSSE(ctx, rawURL, key, opts)
		if err == nil || ctx.Err() != nil {
			return s, err
		}
		c.Forget(key)
	}
	s, err := c.Connect(ctx, streamable.NewClient(rawURL, opts), &ConnectOptions{Key: key})
	if err == nil || c.opts.Era == EraModern || ctx.Err() != nil || !sseFallback(err) {
		return s, err
	}
	s, serr := c.connectSSE(ctx, rawURL, key, opts)
	if serr != nil {
		if errors.Is(serr, sse.ErrNotSSE) {
			return nil, err // not an HTTP+SSE server either: initialize's refusal says why
		}
		return nil, serr
	}
	return s, nil
}

// sseFallback reports whether a failed Streamable HTTP connection sends
// the client to the HTTP+SSE transport: initialize refused with 400, 404 or
// 405 (2025-11-25, Transports, Backwards Compatibility).
func sseFallback(err error) bool {
	var se *transport.StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// connectSSE opens a legacy session over the HTTP+SSE transport.
func (c *Client) connectSSE(ctx context.Context, rawURL, key string, opts *streamable.ClientOptions) (*Session, error) {
	var so sse.ClientOptions
	if opts != nil {
		so.HTTPClient, so.Header = opts.HTTPClient, opts.Header
	}
	conn, err := sse.Dial(ctx, rawURL, &so)
	if err != nil {
		return nil, err
	}
	return c.Connect(ctx, conn, &ConnectOptions{Key: key, Era: EraLegacy})
}

// ConnectCommand starts the server command name with args and connects to
// it over stdio. The era detected is remembered for the command line. The
// session's Close shuts the process down (stdin closed, then SIGTERM, then
// SIGKILL); Process returns it, to watch for an unexpected exit and start
// it again.
func (c *Client) ConnectCommand(ctx context.Context, name string, args []string, opts *stdio.CommandOptions) (*Session, error) {
	cmd, err := stdio.Start(name, args, opts)
	if err != nil {
		return nil, err
	}
	s, err := c.Connect(ctx, cmd, &ConnectOptions{Key: "stdio " + name + " " + strings.Join(args, " ")})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// transportOf names the transport of one of mcpkit's connections, or "".
func transportOf(conn transport.ClientConn) string {
	switch conn.(type) {
	case *stdio.Command, *stdio.Conn:
		return TransportStdio
	case *streamable.Client:
		return TransportStreamableHTTP
	case *sse.Client:
		return TransportSSE
	case *inmemory.Conn:
		return TransportInMemory
	}
	return ""
}

// Process returns the server process of a session made by ConnectCommand,
// or nil.
func (s *Session) Process() *stdio.Command {
	cmd, _ := s.conn.(*stdio.Command)
	return cmd
}
