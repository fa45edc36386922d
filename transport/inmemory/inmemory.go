// Package inmemory connects a client to a transport.Handler served in the
// same process: what tests of an MCP server reach for first. Messages are
// encoded and decoded exactly as on stdio (newline-delimited JSON over a
// pair of pipes, served by stdio.Serve), so both eras work as they do over
// a real transport: the client detects the era, legacy sessions begin
// with initialize, the server's requests (sampling, elicitation, roots)
// reach the client's handlers.
//
//	srv := server.New(info, nil)
//	// ... register tools, resources, prompts ...
//	sess, err := client.New(clientInfo, nil).Connect(ctx, inmemory.New(srv, nil), nil)
package inmemory

import (
	"context"
	"io"
	"sync"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// Options configure New. The zero value is usable.
type Options struct {
	// Server configures the serving side; nil means stdio's defaults.
	Server *stdio.Options
}

// Conn is the client side of an in-process connection. It implements
// transport.ClientConn; Close ends the connection and returns once the
// server side has finished every request it was serving.
type Conn struct {
	*stdio.Conn
	cancel    context.CancelFunc
	served    chan struct{}
	serveErr  error
	closeOnce sync.Once
}

var _ transport.ClientConn = (*Conn)(nil)

// New serves h on a goroutine of its own and returns the client side of
// the connection to it. The goroutine ends with Close.
func New(h transport.Handler, opts *Options) *Conn {
	var so *stdio.Options
	if opts != nil {
		so = opts.Server
	}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{Conn: stdio.NewConn(toClient, fromClient, nil), cancel: cancel, served: make(chan struct{})}
	go func() {
		defer close(c.served)
		c.serveErr = stdio.Serve(ctx, h, toServer, fromServer, so)
		// The server's output ends: the client sees end of input, and
		// whatever it still waits for fails.
		fromServer.Close()
		toServer.Close()
	}()
	return c
}

// Close ends the connection: the server sees the end of its input, gives
// the requests in flight stdio.Options.ShutdownGrace to finish, and
// Close returns once it has. It returns the error the server ended with,
// if any.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { c.Conn.Close() })
	<-c.served
	<-c.Conn.Done() // the client side has read the end of the server's output
	c.cancel()
	return c.serveErr
}
