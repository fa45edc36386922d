package stdio

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/transport"
)

// Message is one message a MessageReader hands ServeMessages.
type Message struct {
	// Data is one JSON-RPC message, or a batch, as one line of stdio would
	// carry it (without the line ending). ServeMessages does not modify
	// it; the reader must not either, until Done.
	Data []byte
	// Context, when not nil, gives the values the message is served with:
	// the principal, the granted scopes, whatever authentication middleware
	// put on the request that carried it. Its cancellation and deadline are
	// not used: the message's requests are cancelled by
	// notifications/cancelled and by the end of ServeMessages, as on
	// stdio. Nil means ServeMessages' own context.
	Context context.Context
	// Done, when not nil, is called once ServeMessages no longer holds the
	// message: its requests answered (their responses written), refused or
	// cancelled; at once for a notification or a response of the client,
	// once the handler has taken it. The reader accounts the message's
	// bytes until then (see Options.Budget).
	Done func()
}

// MessageReader is the input of ServeMessages: messages, one at a time,
// each with the context it is served with. HTTP+SSE reads each POSTed
// message this way.
type MessageReader interface {
	// ReadMessage returns the next message, or io.EOF at the end of the
	// input. It must return once ctx is done.
	ReadMessage(ctx context.Context) (Message, error)
}

// ServeMessages serves the messages of in as Serve serves lines, with the
// same concurrency, cancellation, legacy session and batches, and answers
// on out, one line per message. It returns nil at end of input and
// ctx.Err() when ctx ends first, and returns once every goroutine it
// started has ended.
//
// Each message is served with its own Message.Context's values, so that
// messages of one connection may carry different credentials. The bytes
// of a message are the reader's to account (it may refuse a message
// before it reads all of it); those of the responses are taken from
// Options.Budget until written.
func ServeMessages(ctx context.Context, h transport.Handler, in MessageReader, out io.Writer, opts *Options) error {
	c := newConn(h, out, opts)
	return c.run(ctx, func(ctx context.Context) error {
		for {
			m, err := in.ReadMessage(ctx)
			if err != nil {
				return err
			}
			o := &origin{values: m.Context, done: m.Done}
			o.refs.Store(1)
			err = c.message(ctx, bytes.TrimSpace(m.Data), o)
			o.release()
			if err != nil {
				return err
			}
		}
	}, nil)
}

// origin is one message of a MessageReader, shared by the requests it
// holds: the values they are served with, and the reader's Done, called
// once the last of them is finished.
type origin struct {
	values context.Context
	done   func()
	refs   atomic.Int64 // requests not finished, +1 while being dispatched
}

func (o *origin) hold() {
	if o != nil {
		o.refs.Add(1)
	}
}

func (o *origin) release() {
	if o != nil && o.refs.Add(-1) == 0 && o.done != nil {
		o.done()
	}
}

// context returns a context for serving what came in o: o's values,
// cancelled with ctx (the connection's) or by the returned function.
func (o *origin) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if o == nil || o.values == nil {
		return context.WithCancel(ctx)
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(o.values))
	stop := context.AfterFunc(ctx, cancel)
	return cctx, func() {
		stop()
		cancel()
	}
}
