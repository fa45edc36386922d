package sse

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// postOverhead is what a POST counts against the budgets beside its body:
// the request that carries it, which waits while the stream takes it.
const postOverhead = 4 << 10

// readChunk is how much more of a body of unknown length is taken from the
// budgets before it is read.
const readChunk = 64 << 10

// overBudget refuses a body the budgets have no room for: n more bytes
// would pass the stream's or the handler's.
type overBudget struct{ n int64 }

func (e *overBudget) Error() string {
	return "sse: no room for " + strconv.FormatInt(e.n, 10) + " more bytes"
}

// servePost delivers one message to the stream its sessionId names and
// answers 202; the response goes on the stream. The message is served with
// the POST's own context values (its principal and scopes), so that each
// message is authorized with the credentials it came with. Its bytes count
// against the stream's budget and the handler's from before they are read
// until the message is answered: a POST beyond them is refused (429 for
// the stream's, 503 for the handler's) rather than kept.
func (x *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		// Not an error of the modern era: a client probing for Streamable
		// HTTP falls back to this transport on a 405.
		w.Header().Set("Allow", http.MethodGet)
		httpguard.WriteError(w, http.StatusMethodNotAllowed, nil, jsonrpc.NewError(protocol.CodeInvalidRequest,
			"Method Not Allowed: this is an HTTP+SSE endpoint; GET it with Accept: text/event-stream, then POST to the endpoint it announces", nil))
		return
	}
	st := x.lookup(id)
	if st == nil {
		httpguard.WriteError(w, http.StatusNotFound, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Found: no such stream (it ended); open a new one", nil))
		return
	}
	if transport.PrincipalFrom(r.Context()) != st.principal {
		httpguard.WriteError(w, http.StatusForbidden, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Forbidden: the stream belongs to another principal", nil))
		return
	}
	if !httpguard.IsJSONContentType(r.Header.Get("Content-Type")) {
		httpguard.WriteError(w, http.StatusUnsupportedMediaType, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json", nil))
		return
	}
	if r.ContentLength > x.opts.MaxBodyBytes {
		w.Header().Set("Connection", "close")
		httpguard.WriteError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "request body too large", nil))
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(x.opts.ReadTimeout))
	body, taken, err := readBody(http.MaxBytesReader(w, r.Body, x.opts.MaxBodyBytes), r.ContentLength, st.budget)
	release := sync.OnceFunc(func() { st.budget.Release(taken) })
	if err != nil {
		release()
		// The body was not read whole: the connection ends with the
		// answer, a lapsed deadline kept, so that net/http does not wait
		// on to drain the rest.
		w.Header().Set("Connection", "close")
		var mbe *http.MaxBytesError
		var over *overBudget
		switch {
		case errors.As(err, &over) && st.budget.Full(over.n):
			w.Header().Set("Retry-After", retryAfter)
			httpguard.WriteError(w, http.StatusTooManyRequests, nil, jsonrpc.NewError(protocol.CodeInternalError,
				"Too Many Requests: the stream holds "+strconv.FormatInt(x.opts.MaxStreamBytes, 10)+" bytes of messages not answered yet; try again later", nil))
		case over != nil:
			w.Header().Set("Retry-After", retryAfter)
			httpguard.WriteError(w, http.StatusServiceUnavailable, nil, jsonrpc.NewError(protocol.CodeInternalError,
				"Service Unavailable: the server holds too many messages not answered yet; try again later", nil))
		case errors.As(err, &mbe):
			httpguard.WriteError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "request body too large", nil))
		default:
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeParseError, "reading request body: "+err.Error(), nil))
		}
		return
	}
	_ = rc.SetReadDeadline(time.Time{})
	// Decoding checks the body (as jsonrpc.Unmarshal does) and its shape, so only a
	// valid message reaches the stream. A batch is checked as JSON here
	// and taken, as on stdio, only by a session of revision 2025-03-26.
	if jsonrpc.IsBatch(body) {
		if err := jsonrpc.Unmarshal(body, new(jsontext.Value)); err != nil {
			release()
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeParseError, "parse error: "+err.Error(), nil))
			return
		}
	} else if msg, err := jsonrpc.Decode(body); err != nil {
		release()
		var id *jsonrpc.ID
		if msg != nil {
			id = &msg.ID
		}
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			e = jsonrpc.NewError(protocol.CodeParseError, "parse error: "+err.Error(), nil)
		}
		httpguard.WriteError(w, http.StatusBadRequest, id, e)
		return
	}
	err = st.in.deliver(r.Context(), stdio.Message{Data: body, Context: r.Context(), Done: release})
	switch {
	case errors.Is(err, errEnded):
		release()
		httpguard.WriteError(w, http.StatusNotFound, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Found: no such stream (it ended); open a new one", nil))
		return
	case err != nil:
		release()
		return // the client left
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, "Accepted")
}

// readBody reads a body of length n (-1 when unknown), taking the room it
// needs from b before reading into it: postOverhead and the whole length at
// once, or readChunk more at a time. It returns the body and the bytes
// taken, which the caller releases once done with the body, also on error
// (an *overBudget when b has no room).
func readBody(body io.Reader, n int64, b *stdio.Budget) ([]byte, int64, error) {
	want := postOverhead + max(n, 0)
	if n < 0 {
		want += readChunk
	}
	if !b.Take(want) {
		return nil, 0, &overBudget{want}
	}
	taken := want
	buf := make([]byte, 0, taken-postOverhead)
	for {
		if len(buf) == cap(buf) {
			if n >= 0 {
				// The whole length is read: the body must end here.
				var one [1]byte
				if m, err := io.ReadFull(body, one[:]); m > 0 {
					return nil, taken, errors.New("the body is longer than its Content-Length")
				} else if err != nil && err != io.EOF {
					return nil, taken, err
				}
				return buf, taken, nil
			}
			grow := int64(max(cap(buf), readChunk))
			if !b.Take(grow) {
				return nil, taken, &overBudget{grow}
			}
			taken += grow
			buf = append(make([]byte, 0, int64(cap(buf))+grow), buf...)
		}
		m, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		switch {
		case err == io.EOF:
			if n >= 0 && int64(len(buf)) < n {
				return nil, taken, io.ErrUnexpectedEOF
			}
			return buf, taken, nil
		case err != nil:
			return nil, taken, err
		}
	}
}

// inbox is the input of a stream's stdio.ServeMessages: the messages
// POSTed to it, each with its POST's context. It reads end of input once
// closed.
type inbox struct {
	ch     chan stdio.Message
	done   chan struct{}
	closer sync.Once
}

func newInbox() *inbox { return &inbox{ch: make(chan stdio.Message), done: make(chan struct{})} }

// ReadMessage implements stdio.MessageReader.
func (b *inbox) ReadMessage(ctx context.Context) (stdio.Message, error) {
	select {
	case m := <-b.ch:
		return m, nil
	case <-b.done:
		return stdio.Message{}, io.EOF
	case <-ctx.Done():
		return stdio.Message{}, ctx.Err()
	}
}

// deliver hands a message to the stream, which calls its Done once
// finished with it. It fails with errEnded once the inbox is closed, and
// with ctx's error when ctx ends first: the message was not taken.
func (b *inbox) deliver(ctx context.Context, m stdio.Message) error {
	select {
	case <-b.done:
		return errEnded
	default:
	}
	select {
	case b.ch <- m:
		return nil
	case <-b.done:
		return errEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *inbox) close() { b.closer.Do(func() { close(b.done) }) }
