package legacy

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// What replicas that share a SessionStore tell each other, over the Bus.

// newReplicaID names a replica: 12 random base-32 characters.
func newReplicaID() string { return strings.ToLower(rand.Text()[:12]) }

// requestIDPrefix starts the ids of the requests a replica sends clients:
// "mcpkit-<replica>-<n>", so that an answer reaching another replica is
// passed to the one that waits for it, and no two replicas' ids collide.
const requestIDPrefix = "mcpkit-"

// requestID is the id of this replica's n-th request to a client.
func (a *Adapter) requestID(n int64) jsonrpc.ID {
	if a.replica == "" {
		return jsonrpc.StringID(requestIDPrefix + itoa(n))
	}
	return jsonrpc.StringID(requestIDPrefix + a.replica + "-" + itoa(n))
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// replicaOf returns the replica that sent the request id names.
func replicaOf(id jsonrpc.ID) (string, bool) {
	s := id.String()
	if !id.IsString() || !strings.HasPrefix(s, requestIDPrefix) {
		return "", false
	}
	replica, _, ok := strings.Cut(s[len(requestIDPrefix):], "-")
	return replica, ok && replica != ""
}

// validReplica reports whether name can name a replica in request ids
// and bus channels: 1 to 64 letters, digits, '_' or '.'.
func validReplica(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// encodeResponse encodes a client's response for the bus.
func encodeResponse(m *jsonrpc.Message) []byte {
	if m.Error != nil {
		return jsonrpc.AppendError(nil, m.ID, m.Error)
	}
	return jsonrpc.AppendResult(nil, m.ID, m.Result)
}

// sendBus sends m to the replica named to ("" for all), logging a failure.
func (a *Adapter) sendBus(m BusMessage, to string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := a.bus.Send(ctx, to, m); err != nil {
		a.logger.Warn("legacy: telling other replicas", "kind", m.Kind, "session", m.Session, "err", err)
	}
}

// push queues msg in a session's outbox and wakes its reader, here or on
// the replica where the client follows the standalone stream.
func (a *Adapter) push(ctx context.Context, id string, msg []byte) error {
	if err := a.store.Push(ctx, id, msg); err != nil {
		return err
	}
	if s := a.local(id); s != nil && s.attached() {
		s.signal()
		return nil
	}
	a.sendBus(BusMessage{Kind: BusWake, Session: id}, "")
	return nil
}

// listen takes the bus's messages for this replica until ctx ends,
// listening again (with backoff) when the bus loses the listener.
func (a *Adapter) listen(ctx context.Context) {
	backoff := minBackoff
	for {
		lost := make(chan struct{})
		lctx, cancel := context.WithCancel(ctx)
		var once sync.Once
		err := a.bus.Listen(lctx, a.replica, func(m BusMessage) {
			a.protect("taking a message of the bus", func() { a.onBus(m) })
		}, func() { once.Do(func() { close(lost) }) })
		if err == nil {
			backoff = minBackoff
			select {
			case <-ctx.Done():
				cancel()
				return
			case <-lost:
			}
			a.logger.Warn("legacy: the bus lost this replica's listener; listening again")
		} else {
			a.logger.Error("legacy: listening on the bus", "err", err, "retry", backoff)
		}
		cancel()
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// onBus takes one message of the bus: it concerns this replica's copy of
// a session, if it has one.
func (a *Adapter) onBus(m BusMessage) {
	s := a.local(m.Session)
	if s == nil {
		return
	}
	switch m.Kind {
	case BusEnded:
		s.end(false)
	case BusWake:
		s.signal()
	case BusAnswer:
		msg, err := jsonrpc.Decode(m.Message)
		if err != nil || !msg.IsResponse() {
			return
		}
		s.mu.Lock()
		ch := s.pending[msg.ID]
		delete(s.pending, msg.ID)
		s.mu.Unlock()
		if ch != nil {
			ch <- msg // buffered
		}
	case BusCancel:
		msg, err := jsonrpc.Decode(m.Message)
		if err != nil || msg.Method != protocol.NotificationCancelled {
			return
		}
		var p protocol.CancelledParams
		if jsonrpc.Unmarshal(msg.Params, &p) == nil {
			s.cancel(p.RequestID)
		}
	}
}

// forget deletes the record of a session that could not be opened here.
func (a *Adapter) forget(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := a.store.Delete(ctx, id); err != nil {
		a.logger.Warn("legacy: deleting a session record", "session", id, "err", err)
	}
}
