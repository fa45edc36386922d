package server

import (
	"context"
	"encoding/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

type listenParams struct {
	Notifications *protocol.SubscriptionFilter `json:"notifications"`
}

// serveListen serves subscriptions/listen: an acknowledgement first, then
// the opted-in change notifications, each tagged with the subscription id,
// until the client goes away (no response) or the server closes (the
// graceful closing result).
func (s *Server) serveListen(ctx context.Context, r *Request) (protocol.Result, error) {
	var p listenParams
	if err := r.decodeParams(&p); err != nil {
		return nil, err
	}
	if p.Notifications == nil {
		return nil, protocol.InvalidParams("subscriptions/listen needs a notifications filter")
	}
	ack := s.acknowledge(p.Notifications)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := s.feed.Subscribe(ctx)
	if err != nil {
		return nil, protocol.InternalError("subscribing to changes: " + err.Error())
	}
	sub := r.ID
	meta := &protocol.NotificationMeta{SubscriptionID: &sub}
	if err := r.notify(protocol.NotificationSubscriptionsAcknowledged, protocol.AcknowledgedParams{Notifications: ack, Meta: meta}); err != nil {
		return nil, errNoResponse
	}
	watched := make(map[string]bool, len(ack.ResourceSubscriptions))
	for _, u := range ack.ResourceSubscriptions {
		watched[u] = true
	}
	listChanged, _ := json.Marshal(protocol.ListChangedParams{Meta: meta})
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
			res := &protocol.EmptyResult{}
			res.Meta = &protocol.ResultMeta{SubscriptionID: &sub}
			return res, nil
		case e, ok := <-events:
			if !ok {
				// Dropped by the feed (too slow). The server tears the
				// subscription down: it says so with notifications/cancelled
				// (on stdio nothing else would tell the client), then ends
				// without a response so that the client reconnects.
				b, _ := json.Marshal(protocol.CancelledParams{RequestID: sub, Reason: "subscription ended: the client fell behind the change feed"})
				_ = r.out.send(jsonrpc.AppendNotification(nil, protocol.NotificationCancelled, b))
				return nil, errNoResponse
			}
			var msg []byte
			switch {
			case e.Kind == ToolsListChanged && ack.ToolsListChanged:
				msg = jsonrpc.AppendNotification(nil, protocol.NotificationToolListChanged, listChanged)
			case e.Kind == PromptsListChanged && ack.PromptsListChanged:
				msg = jsonrpc.AppendNotification(nil, protocol.NotificationPromptListChanged, listChanged)
			case e.Kind == ResourcesListChanged && ack.ResourcesListChanged:
				msg = jsonrpc.AppendNotification(nil, protocol.NotificationResourceListChanged, listChanged)
			case e.Kind == ResourceUpdated && watched[e.URI]:
				b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: e.URI, Meta: meta})
				msg = jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b)
			}
			if msg != nil {
				if err := r.out.send(msg); err != nil {
					return nil, errNoResponse
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
