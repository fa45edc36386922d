package redis

import (
	"context"
	"encoding/json"

	"github.com/mcpkit/mcpkit/server/legacy"
)

// Bus returns the legacy.Bus over Redis pub/sub: a channel per replica and
// one for all. Delivery is best-effort, as the interface allows: a message
// published while a replica is disconnected is lost to it.
func (s *Store) Bus() legacy.Bus { return bus{s} }

type bus struct{ s *Store }

const allReplicas = "*"

type busWire struct {
	K legacy.BusKind `json:"k"`
	S string         `json:"s"`
	M []byte         `json:"m,omitempty"`
}

func (b bus) Send(ctx context.Context, to string, m legacy.BusMessage) error {
	if to == "" {
		to = allReplicas
	}
	payload, _ := json.Marshal(busWire{m.Kind, m.Session, m.Message})
	return wrap(b.s.c.Publish(ctx, b.s.key("bus", to), payload).Err())
}

func (b bus) Listen(ctx context.Context, self string, deliver func(legacy.BusMessage), lost func()) error {
	ps := b.s.c.Subscribe(ctx, b.s.key("bus", self), b.s.key("bus", allReplicas))
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return wrap(err)
	}
	ch := ps.Channel()
	b.s.bg.Add(1)
	go func() {
		defer b.s.bg.Done()
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case <-b.s.ctx.Done():
				lost()
				return
			case m, ok := <-ch:
				if !ok {
					lost()
					return
				}
				var w busWire
				if json.Unmarshal([]byte(m.Payload), &w) == nil {
					deliver(legacy.BusMessage{Kind: w.K, Session: w.S, Message: w.M})
				}
			}
		}
	}()
	return nil
}
