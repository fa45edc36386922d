package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// ListenFilter is a member of the subscriptions/listen notifications
// filter that an extension defines (the Tasks extension's taskIds): the
// streams that carry it receive the extension's notifications on the
// topics it accepts, sent with Server.Notify.
type ListenFilter struct {
	// Key is the member's name in params.notifications.
	Key string
	// Accept is called, before the stream is acknowledged, for every
	// listen request whose filter has the member, with its value. It
	// returns the value acknowledged under Key (nil leaves the member
	// out of the acknowledgement) and the topics the stream receives
	// notifications of. An error refuses the request (a *protocol.Error
	// keeps its code).
	Accept func(ctx context.Context, r *Request, value json.RawMessage) (ack json.RawMessage, topics []string, err error)
}

// HandleListen registers f, replacing a filter member of the same key.
// It panics when f has no key or no Accept function.
func (s *Server) HandleListen(f ListenFilter) {
	if f.Key == "" || f.Accept == nil {
		panic("server: HandleListen needs a filter member name and an Accept function")
	}
	s.methodsMu.Lock()
	defer s.methodsMu.Unlock()
	old := s.listenFilters.Load()
	next := map[string]ListenFilter{}
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[f.Key] = f
	s.listenFilters.Store(&next)
}

// Notify sends the notification method with params (encoded as a JSON
// object; _meta is the server's to add) to every subscriptions/listen
// stream subscribed to topic through a ListenFilter, on this server or,
// through a shared Feed, on its replicas.
func (s *Server) Notify(ctx context.Context, topic, method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	if len(b) == 0 || b[0] != '{' {
		return errors.New("server: Notify needs params that encode to a JSON object")
	}
	return s.feed.Publish(ctx, Event{Kind: notificationEvent, Topic: topic, Method: method, Params: b})
}

// extensionFilters applies the registered ListenFilters to a listen
// request's filter: the acknowledged members and the topics watched.
func (s *Server) extensionFilters(ctx context.Context, r *Request, raw json.RawMessage) (map[string]json.RawMessage, map[string]bool, error) {
	filters := s.listenFilters.Load()
	if filters == nil || len(*filters) == 0 || len(raw) == 0 {
		return nil, nil, nil
	}
	values := map[string]json.RawMessage{}
	err := jsonrpc.EachMember(raw, func(k []byte, v jsontext.Value) error {
		if _, ok := (*filters)[string(k)]; ok {
			values[string(k)] = bytes.Clone(v)
		}
		return nil
	})
	if err != nil {
		return nil, nil, protocol.InvalidParams("subscriptions/listen: malformed notifications filter")
	}
	var acks map[string]json.RawMessage
	var topics map[string]bool
	for k, v := range values {
		ack, ts, err := (*filters)[k].Accept(ctx, r, v)
		if err != nil {
			return nil, nil, err
		}
		if ack != nil {
			if acks == nil {
				acks = map[string]json.RawMessage{}
			}
			acks[k] = ack
		}
		for _, t := range ts {
			if topics == nil {
				topics = map[string]bool{}
			}
			topics[t] = true
		}
	}
	return acks, topics, nil
}

// ackFilter is an acknowledged filter with the members extensions
// acknowledged beside the specification's.
type ackFilter struct {
	protocol.SubscriptionFilter
	extra map[string]json.RawMessage
}

// MarshalJSON encodes the filter's members, then the extensions'.
func (f ackFilter) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(f.SubscriptionFilter)
	if err != nil || len(f.extra) == 0 {
		return b, err
	}
	extra, err := json.Marshal(f.extra)
	if err != nil {
		return nil, err
	}
	if len(b) == 2 { // {}
		return extra, nil
	}
	out := append(b[:len(b)-1:len(b)-1], ',')
	return append(out, extra[1:]...), nil
}

// withSubscription returns a notification's params with the stream's
// subscription id in _meta.
func (l *listenStream) withSubscription(params []byte) []byte {
	meta, _ := json.Marshal(l.meta())
	if len(params) <= 2 {
		return append(append([]byte(`{"_meta":`), meta...), '}')
	}
	out := make([]byte, 0, len(params)+len(meta)+10)
	out = append(out, params[:len(params)-1]...)
	out = append(out, `,"_meta":`...)
	out = append(out, meta...)
	return append(out, '}')
}
