package client

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Notification is a change notification a subscription delivers.
type Notification struct {
	Method string
	// URI is the updated resource, for notifications/resources/updated.
	URI    string
	Params json.RawMessage
}

// Subscription is an open subscriptions/listen stream (or, in the legacy
// era, the session's standalone stream). Its notifications arrive on C
// until it ends; Err then tells how.
type Subscription struct {
	// Acknowledged is the part of the filter the server agreed to honour.
	Acknowledged protocol.SubscriptionFilter

	c      chan Notification
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	err    error
	acked  chan struct{}
	ackOne sync.Once
}

// ErrSubscriptionDropped is the Err of a subscription whose stream ended
// without the server's closing result: the client may listen again.
var ErrSubscriptionDropped = errors.New("client: subscription dropped")

// C returns the channel of notifications; it is closed when the
// subscription ends.
func (sub *Subscription) C() <-chan Notification { return sub.c }

// Err returns nil while the subscription is open or after a graceful end,
// ErrSubscriptionDropped after an abrupt one, or the error that ended it.
func (sub *Subscription) Err() error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.err
}

// Done is closed when the subscription has ended.
func (sub *Subscription) Done() <-chan struct{} { return sub.done }

// Close ends the subscription (cancelling the listen request).
func (sub *Subscription) Close() {
	sub.cancel()
	<-sub.done
}

func (sub *Subscription) deliver(m *jsonrpc.Message) {
	if m.Method == protocol.NotificationSubscriptionsAcknowledged {
		var p protocol.AcknowledgedParams
		_ = jsonrpc.Unmarshal(m.Params, &p)
		sub.ackOne.Do(func() {
			sub.Acknowledged = p.Notifications
			close(sub.acked)
		})
		return
	}
	n := Notification{Method: m.Method, Params: m.Params}
	if m.Method == protocol.NotificationResourceUpdated {
		var p protocol.ResourceUpdatedParams
		if jsonrpc.Unmarshal(m.Params, &p) == nil {
			n.URI = p.URI
		}
	}
	select {
	case sub.c <- n:
	case <-sub.done:
	default:
		// The reader is too far behind; blocking here would stall the
		// connection for everyone. End the subscription instead: the
		// application listens again and re-reads what it watches.
		sub.mu.Lock()
		if sub.err == nil {
			sub.err = ErrSubscriptionDropped
		}
		sub.mu.Unlock()
		if sub.cancel != nil {
			sub.cancel()
		}
	}
}

// subscriptionOf returns the subscription a notification is tagged for.
func (s *Session) subscriptionOf(m *jsonrpc.Message) *Subscription {
	if len(m.Params) == 0 || m.Params[0] != '{' {
		return nil
	}
	var p struct {
		Meta struct {
			ID jsontext.Value `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	if jsonrpc.Unmarshal(m.Params, &p) != nil || p.Meta.ID == nil {
		return nil
	}
	id := p.Meta.ID
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[string(id)]
}

// Listen opens a subscriptions/listen stream for the notifications in
// filter (modern era) and returns once the server has acknowledged it. In
// the legacy era it subscribes to the filter's resources
// (resources/subscribe) and delivers the session's standalone
// notifications that the filter asks for.
func (s *Session) Listen(ctx context.Context, filter protocol.SubscriptionFilter) (*Subscription, error) {
	lctx, cancel := context.WithCancel(s.ctx)
	sub := &Subscription{c: make(chan Notification, 64), cancel: cancel, done: make(chan struct{}), acked: make(chan struct{})}
	if s.era == EraLegacy {
		return s.listenLegacy(ctx, lctx, sub, filter)
	}
	id := s.newID()
	s.mu.Lock()
	s.subs[string(id.Raw())] = sub
	s.mu.Unlock()
	params, _ := json.Marshal(protocol.ListenParams{Notifications: &filter})
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.subs, string(id.Raw()))
			s.mu.Unlock()
			sub.once.Do(func() { close(sub.done); close(sub.c) })
		}()
		resp, err := s.conn.Call(lctx, s.listenCall(id, params), func(m *jsonrpc.Message) {
			if m.IsNotification() {
				s.receiveNotification(lctx, Incoming{Method: m.Method, Params: m.Params, from: fromListen, sub: sub})
			}
		})
		sub.mu.Lock()
		switch {
		case lctx.Err() != nil:
		case err != nil:
			sub.err = ErrSubscriptionDropped
		case resp.Error != nil:
			sub.err = resp.Error
		}
		sub.mu.Unlock()
	}()
	select {
	case <-sub.acked:
		return sub, nil
	case <-sub.done:
		if err := sub.Err(); err != nil {
			return nil, err
		}
		return nil, ErrSubscriptionDropped
	case <-ctx.Done():
		sub.Close()
		return nil, ctx.Err()
	}
}

func (s *Session) listenLegacy(ctx, lctx context.Context, sub *Subscription, filter protocol.SubscriptionFilter) (*Subscription, error) {
	for _, uri := range filter.ResourceSubscriptions {
		if err := s.Call(ctx, protocol.MethodResourcesSubscribe, map[string]string{"uri": uri}, nil, nil); err != nil {
			sub.cancel()
			return nil, err
		}
	}
	sub.Acknowledged = filter
	inner := &Subscription{c: make(chan Notification, 64), done: make(chan struct{}), acked: make(chan struct{})}
	s.mu.Lock()
	s.legacyWatch = append(s.legacyWatch, inner)
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			for i, w := range s.legacyWatch {
				if w == inner {
					s.legacyWatch = append(s.legacyWatch[:i], s.legacyWatch[i+1:]...)
					break
				}
			}
			s.mu.Unlock()
			close(inner.done)
			sub.once.Do(func() { close(sub.done); close(sub.c) })
		}()
		for {
			select {
			case n := <-inner.c:
				if !wanted(filter, n) {
					continue
				}
				select {
				case sub.c <- n:
				case <-lctx.Done():
					return
				}
			case <-lctx.Done():
				return
			}
		}
	}()
	return sub, nil
}

// listenCall is the subscriptions/listen request.
func (s *Session) listenCall(id jsonrpc.ID, params json.RawMessage) *transport.Call {
	return &transport.Call{
		Message:         &jsonrpc.Message{ID: id, Method: protocol.MethodSubscriptionsListen, Params: s.withMeta(params, nil)},
		ProtocolVersion: s.version,
		Modern:          true,
	}
}

func wanted(f protocol.SubscriptionFilter, n Notification) bool {
	switch n.Method {
	case protocol.NotificationToolListChanged:
		return f.ToolsListChanged
	case protocol.NotificationPromptListChanged:
		return f.PromptsListChanged
	case protocol.NotificationResourceListChanged:
		return f.ResourcesListChanged
	case protocol.NotificationResourceUpdated:
		for _, u := range f.ResourceSubscriptions {
			if u == n.URI {
				return true
			}
		}
	}
	return false
}
