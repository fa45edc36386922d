package stdio

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// batches reports whether a legacy session's revision takes JSON-RPC
// batches: 2025-03-26 alone (2024-11-05 had none, 2025-06-18 removed
// them), where receiving them is a MUST.
func batches(version string) bool { return version == protocol.Version2025_03_26 }

// batch collects the responses to the requests of one JSON-RPC batch; the
// array is written once the last of them is answered (nothing when it
// held only notifications and responses). Its requests are served as any
// other: concurrently, each cancellable by notifications/cancelled. The
// responses it holds count against the connection's budget until written.
type batch struct {
	c       *conn
	pending atomic.Int64 // requests started and not finished, +1 until sealed

	mu    sync.Mutex
	parts [][]byte
	held  int64 // the bytes of parts
}

// batch dispatches the messages of a batch line; o is the MessageReader
// message it came in, or nil.
func (c *conn) batch(ctx context.Context, line []byte, o *origin) {
	var parts []json.RawMessage
	if err := jsonrpc.Unmarshal(line, &parts); err != nil || len(parts) == 0 {
		c.write(jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: malformed or empty batch", nil)))
		return
	}
	b := &batch{c: c}
	b.pending.Add(1) // sealed below, once every part is dispatched
	for _, p := range parts {
		msg, err := jsonrpc.Decode(p)
		c.dispatch(ctx, msg, err, b, o, c.chargeFor(p, o))
	}
	b.finish(nil)
}

// reply sends a response: as a line of its own, or into its batch.
func (c *conn) reply(b *batch, resp []byte) {
	if b == nil {
		c.write(resp)
		return
	}
	b.add(resp)
}

// add keeps one response for the array.
func (b *batch) add(resp []byte) {
	b.c.budget.charge(int64(len(resp)))
	b.mu.Lock()
	b.parts = append(b.parts, resp)
	b.held += int64(len(resp))
	b.mu.Unlock()
}

// finish records one request's response (nil when there is none) and
// writes the array after the last.
func (b *batch) finish(resp []byte) {
	if resp != nil {
		b.add(resp)
	}
	if b.pending.Add(-1) != 0 {
		return
	}
	b.mu.Lock()
	parts, held := b.parts, b.held
	b.parts, b.held = nil, 0
	b.mu.Unlock()
	defer b.c.budget.Release(held)
	if len(parts) == 0 {
		return
	}
	out := []byte{'['}
	for i, p := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	b.c.write(append(out, ']'))
}
