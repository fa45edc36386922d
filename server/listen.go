package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

type listenParams struct {
	Notifications *protocol.SubscriptionFilter `json:"notifications"`
}

// listenRaw is the filter as sent, for the members extensions define.
type listenRaw struct {
	Notifications json.RawMessage `json:"notifications"`
}

// notificationEvent is the feed's kind of an extension's notification.
const notificationEvent = feedNotification

// listenBuffer is how many events a listen stream served on its own
// goroutine may have waiting before it counts as fallen behind.
const listenBuffer = 16

// listenStream is one subscriptions/listen request once acknowledged: what
// the client subscribed to and the notifications that carry it.
type listenStream struct {
	s           *Server
	r           *Request
	sub         jsonrpc.ID
	ack         protocol.SubscriptionFilter
	ackExtra    map[string]json.RawMessage // extensions' members (ListenFilter)
	topics      map[string]bool            // extensions' topics (Server.Notify)
	watched     map[string]bool
	listChanged []byte
	released    atomic.Bool
}

// newListen decodes a listen request; the acknowledgement is sent by
// acknowledge, once the stream is subscribed to the feed.
func (s *Server) newListen(ctx context.Context, r *Request) (*listenStream, error) {
	var p listenParams
	if err := r.DecodeParams(&p); err != nil {
		return nil, err
	}
	var raw listenRaw
	_ = r.DecodeParams(&raw) // read as p was
	if p.Notifications == nil {
		return nil, protocol.InvalidParams("subscriptions/listen needs a notifications filter")
	}
	if n, max := len(p.Notifications.ResourceSubscriptions), s.maxListenURIs(); n > max {
		return nil, protocol.InvalidParams(fmt.Sprintf("subscriptions/listen: %d resourceSubscriptions, more than the %d one stream may have", n, max))
	}
	if err := s.listens.open(r.Principal, s.maxListenStreams(), s.maxListenStreamsOf(r.Principal)); err != nil {
		return nil, err
	}
	acks, topics, err := s.extensionFilters(ctx, r, raw.Notifications)
	if err != nil {
		s.listens.close(r.Principal)
		return nil, err
	}
	l := &listenStream{s: s, r: r, sub: r.ID, ack: s.acknowledge(p.Notifications), ackExtra: acks, topics: topics}
	// Resources the caller may not read are not watched: the
	// acknowledgment leaves them out.
	if subs := l.ack.ResourceSubscriptions; len(subs) > 0 && r.authz {
		kept := subs[:0:0]
		for _, u := range subs {
			if _, _, need, found := s.findResource(u); !found || r.permits(need) {
				kept = append(kept, u)
			}
		}
		l.ack.ResourceSubscriptions = kept
	}
	if len(l.ack.ResourceSubscriptions) > 0 {
		l.watched = make(map[string]bool, len(l.ack.ResourceSubscriptions))
		for _, u := range l.ack.ResourceSubscriptions {
			l.watched[u] = true
		}
	}
	l.listChanged, _ = json.Marshal(protocol.ListChangedParams{Meta: l.meta()})
	return l, nil
}

// release counts the stream out of MaxListenStreams and its principal's
// share; once only.
func (l *listenStream) release() {
	if l.released.CompareAndSwap(false, true) {
		l.s.listens.close(l.r.Principal)
	}
}

func (s *Server) maxListenStreams() int {
	if s.opts.MaxListenStreams > 0 {
		return s.opts.MaxListenStreams
	}
	return 10_000
}

// maxListenStreamsOf is the most listen streams principal may have open.
func (s *Server) maxListenStreamsOf(principal string) int {
	switch {
	case s.opts.MaxListenStreamsPerPrincipal > 0:
		return s.opts.MaxListenStreamsPerPrincipal
	case principal == "":
		return s.maxListenStreams()
	}
	return max(1, s.maxListenStreams()/100)
}

// listenCount counts the open listen streams, in all and per principal.
type listenCount struct {
	mu  sync.Mutex
	all int
	by  map[string]int
}

// open counts one more stream of principal, unless max are open or perMax
// of principal's.
func (c *listenCount) open(principal string, max, perMax int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.all >= max {
		return protocol.Mark(protocol.InternalError(fmt.Sprintf("server busy: %d subscriptions/listen streams are open, its limit; try again later", max)), protocol.ErrUnavailable)
	}
	if c.by[principal] >= perMax {
		return protocol.Mark(protocol.InternalError(fmt.Sprintf("server busy: %d subscriptions/listen streams of yours are open, the limit of one caller; close one or try again later", perMax)), protocol.ErrUnavailable)
	}
	if c.by == nil {
		c.by = map[string]int{}
	}
	c.all++
	c.by[principal]++
	return nil
}

func (c *listenCount) close(principal string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all--
	if c.by[principal]--; c.by[principal] <= 0 {
		delete(c.by, principal)
	}
}

// count returns the open streams.
func (c *listenCount) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all
}

func (s *Server) maxListenURIs() int {
	if s.opts.MaxListenURIs > 0 {
		return s.opts.MaxListenURIs
	}
	return 1_000
}

func (l *listenStream) meta() *protocol.NotificationMeta {
	return &protocol.NotificationMeta{SubscriptionID: &l.sub}
}

// acknowledge sends notifications/subscriptions/acknowledged.
func (l *listenStream) acknowledge() error {
	if l.ackExtra != nil {
		return l.r.notify(protocol.NotificationSubscriptionsAcknowledged, struct {
			Notifications ackFilter                  `json:"notifications"`
			Meta          *protocol.NotificationMeta `json:"_meta,omitempty"`
		}{ackFilter{l.ack, l.ackExtra}, l.meta()})
	}
	return l.r.notify(protocol.NotificationSubscriptionsAcknowledged, protocol.AcknowledgedParams{Notifications: l.ack, Meta: l.meta()})
}

// message returns the notification e makes on this stream, or nil.
func (l *listenStream) message(e Event) []byte {
	switch {
	case e.Kind == ToolsListChanged && l.ack.ToolsListChanged:
		return jsonrpc.AppendNotification(nil, protocol.NotificationToolListChanged, l.listChanged)
	case e.Kind == PromptsListChanged && l.ack.PromptsListChanged:
		return jsonrpc.AppendNotification(nil, protocol.NotificationPromptListChanged, l.listChanged)
	case e.Kind == ResourcesListChanged && l.ack.ResourcesListChanged:
		return jsonrpc.AppendNotification(nil, protocol.NotificationResourceListChanged, l.listChanged)
	case e.Kind == notificationEvent && l.topics[e.Topic]:
		return jsonrpc.AppendNotification(nil, e.Method, l.withSubscription(e.Params))
	case e.Kind == ResourceUpdated && l.watched[e.URI]:
		b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: e.URI, Meta: l.meta()})
		return jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b)
	}
	return nil
}

// torndown tells the client the server ended the subscription: with
// notifications/cancelled (on stdio nothing else would tell it); the
// stream then ends without a response, so that the client reconnects.
func (l *listenStream) torndown() {
	b, _ := json.Marshal(protocol.CancelledParams{RequestID: l.sub, Reason: "subscription ended: the client fell behind the change feed"})
	_ = l.r.out.send(jsonrpc.AppendNotification(nil, protocol.NotificationCancelled, b))
}

// closing is the graceful closing result, sent when the server closes.
func (l *listenStream) closing() protocol.Result {
	res := &protocol.EmptyResult{}
	res.Meta = &protocol.ResultMeta{SubscriptionID: &l.sub}
	return res
}

// serveListen serves subscriptions/listen on the caller's goroutine: an
// acknowledgement first, then the opted-in change notifications, each
// tagged with the subscription id, until the client goes away (no
// response) or the server closes (the graceful closing result).
func (s *Server) serveListen(ctx context.Context, r *Request) (protocol.Result, error) {
	l, err := s.newListen(ctx, r)
	if err != nil {
		return nil, err
	}
	defer l.release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := FeedEvents(ctx, s.feed, listenBuffer)
	if err != nil {
		return nil, protocol.InternalError("subscribing to changes: " + err.Error())
	}
	if err := l.acknowledge(); err != nil {
		return nil, transport.ErrNoResponse
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
			return l.closing(), nil
		case e, ok := <-events:
			if !ok {
				l.torndown()
				return nil, transport.ErrNoResponse
			}
			if msg := l.message(e); msg != nil {
				if err := r.out.send(msg); err != nil {
					return nil, transport.ErrNoResponse
				}
			}
		}
	}
}

// acknowledge returns the part of the filter the server honours: only what
// its capabilities offer.
func (s *Server) acknowledge(f *protocol.SubscriptionFilter) protocol.SubscriptionFilter {
	caps := s.Capabilities()
	var ack protocol.SubscriptionFilter
	ack.ToolsListChanged = f.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	ack.PromptsListChanged = f.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	if caps.Resources != nil {
		ack.ResourcesListChanged = f.ResourcesListChanged && caps.Resources.ListChanged
		if caps.Resources.Subscribe {
			ack.ResourceSubscriptions = f.ResourceSubscriptions
		}
	}
	return ack
}
