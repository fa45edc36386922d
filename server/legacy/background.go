package legacy

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"time"

	"github.com/mcpkit/mcpkit/feed"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// background subscribes to the core's change feed, before the first
// session's initialize is answered so that no change after it is missed,
// and starts the two goroutines that fan the feed out to sessions and
// expire idle ones. Close stops them.
func (a *Adapter) background() {
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		cancel()
		return
	}
	a.stop = cancel
	a.bg.Add(2)
	a.mu.Unlock()
	events, err := feed.Events(ctx, a.core.Feed(), feedBuffer)
	go func() {
		defer a.bg.Done()
		a.sweep(ctx)
	}()
	go func() {
		defer a.bg.Done()
		a.follow(ctx, events, err)
	}()
}

// sweep expires idle sessions until ctx ends, whatever the feed does.
func (a *Adapter) sweep(ctx context.Context) {
	t := time.NewTicker(sweepInterval(a.opts.IdleTimeout))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			a.protect("expiring sessions", func() { a.expire(now) })
		}
	}
}

// follow delivers the feed's events from the subscription background
// made. When the feed drops the subscription (it fell behind, the broker
// went away) or refuses one, it subscribes again, waiting longer after
// each failure (up to maxBackoff); once subscribed again it tells every
// session that anything may have changed meanwhile.
func (a *Adapter) follow(ctx context.Context, events <-chan feed.Event, err error) {
	backoff := minBackoff
	lost := false
	for {
		if err == nil {
			if lost {
				a.protect("resynchronizing sessions", a.resync)
				lost = false
			}
			for e := range events {
				a.protect("delivering a change", func() { a.deliver(e) })
				backoff = minBackoff
			}
			if ctx.Err() != nil {
				return
			}
			a.logger.Warn("the change feed ended the sessions' subscription; subscribing again")
		} else {
			a.logger.Error("subscribing to the change feed", "err", err, "retry", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, maxBackoff)
		}
		lost = true
		events, err = feed.Events(ctx, a.core.Feed(), feedBuffer)
	}
}

// Waits between attempts to subscribe to the change feed again.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// snapshot returns the open sessions.
func (a *Adapter) snapshot() []*Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	sessions := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	return sessions
}

// resync tells every session that changes may have been missed while the
// feed's subscription was lost: every list may have changed, and so may
// every resource it subscribed to.
func (a *Adapter) resync() {
	for _, k := range []feed.EventKind{feed.ToolsListChanged, feed.PromptsListChanged, feed.ResourcesListChanged} {
		a.deliver(feed.Event{Kind: k})
	}
	for _, s := range a.snapshot() {
		for _, uri := range s.subscriptions() {
			b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: uri})
			s.enqueue(jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b))
		}
	}
}

// feedBuffer is how many change events may wait for the fan-out to
// sessions before the adapter counts as fallen behind and subscribes again.
const feedBuffer = 256

func sweepInterval(idle time.Duration) time.Duration {
	d := idle / 4
	if d < 10*time.Millisecond {
		d = 10 * time.Millisecond
	}
	if d > time.Minute {
		d = time.Minute
	}
	return d
}

// expire closes sessions idle past the timeout.
func (a *Adapter) expire(now time.Time) {
	a.mu.Lock()
	var stale []*Session
	for _, s := range a.sessions {
		if s.expired(now) {
			stale = append(stale, s)
		}
	}
	a.mu.Unlock()
	for _, s := range stale {
		s.Close()
	}
}

// deliver queues a change notification on every session it concerns.
func (a *Adapter) deliver(e feed.Event) {
	var msg []byte
	switch e.Kind {
	case feed.ToolsListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationToolListChanged, nil)
	case feed.PromptsListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationPromptListChanged, nil)
	case feed.ResourcesListChanged:
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationResourceListChanged, nil)
	case feed.ResourceUpdated:
		b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: e.URI})
		msg = jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b)
	default:
		return
	}
	for _, s := range a.snapshot() {
		if e.Kind == feed.ResourceUpdated && !s.subscribed(e.URI) {
			continue
		}
		s.enqueue(msg)
	}
}

// protect runs f, a step of a background goroutine, so that a panic in it
// (in a store or feed implementation, say) is logged and the goroutine
// goes on with its next step.
func (a *Adapter) protect(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			a.logger.Error("legacy: panic "+what, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	f()
}
