package client

import (
	"context"
	"net/url"
	"strings"

	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// ConnectURL connects to the Streamable HTTP endpoint at rawURL. The era
// detected is remembered for the URL's origin.
func (c *Client) ConnectURL(ctx context.Context, rawURL string, opts *streamable.ClientOptions) (*Session, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	return c.Connect(ctx, streamable.NewClient(rawURL, opts), &ConnectOptions{Key: "http " + u.Scheme + "://" + u.Host})
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

// Process returns the server process of a session made by ConnectCommand,
// or nil.
func (s *Session) Process() *stdio.Command {
	cmd, _ := s.conn.(*stdio.Command)
	return cmd
}
