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
// listens on the bus, and starts the three goroutines that apply the feed
// to sessions' outboxes, take the bus's messages and sweep sessions.
// Close stops them.
func (a *Adapter) background() {
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		cancel()
		return
	}
	a.stop = cancel
	a.bg.Add(3)
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
	go func() {
		defer a.bg.Done()
		a.listen(ctx)
	}()
}

// sweep, until ctx ends, marks used in the store the sessions clients hold
// on this replica, ends the copies of sessions the store no longer has
// (they expired or ended elsewhere: their requests here are cancelled) and
// lets go of copies unused here for the idle timeout. Expiry itself is the
// store's: a session expires IdleTimeout after its last use on any replica.
func (a *Adapter) sweep(ctx context.Context) {
	t := time.NewTicker(sweepInterval(a.opts.IdleTimeout))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			a.protect("sweeping sessions", func() { a.sweepOnce(ctx, now) })
		}
	}
}

func (a *Adapter) sweepOnce(ctx context.Context, now time.Time) {
	var held, others []*Session
	for _, s := range a.snapshot() {
		if s.takeHeld() {
			held = append(held, s)
		} else {
			others = append(others, s)
		}
	}
	for _, group := range []struct {
		sessions []*Session
		touch    bool
	}{{held, true}, {others, false}} {
		for len(group.sessions) > 0 {
			batch := group.sessions[:min(len(group.sessions), sweepBatch)]
			group.sessions = group.sessions[len(batch):]
			ids := make([]string, len(batch))
			for i, s := range batch {
				ids[i] = s.id
			}
			sctx, cancel := context.WithTimeout(ctx, storeTimeout)
			alive, err := a.store.Refresh(sctx, ids, group.touch)
			cancel()
			if err != nil {
				// The store is unreachable: nothing is ended on its account.
				a.logger.Warn("legacy: refreshing sessions", "err", err)
				return
			}
			for i, s := range batch {
				switch {
				case !alive[i]:
					s.end(false)
				case !group.touch && s.idle(now):
					a.letGo(s)
				}
			}
		}
	}
}

// sweepBatch is how many sessions one store round trip of the sweep
// concerns.
const sweepBatch = 512

// letGo drops this replica's copy of a session nothing uses here; its
// record stays, and the next request of the session makes a copy again.
func (a *Adapter) letGo(s *Session) {
	a.mu.Lock()
	if a.sessions[s.id] == s && s.idle(time.Now()) {
		delete(a.sessions, s.id)
	}
	a.mu.Unlock()
}

// follow applies the feed's events, from the subscription background made,
// to the outboxes of the sessions whose standalone stream a client follows
// on this replica, and brings up to date those whose reader just attached.
// When the feed drops the subscription (it fell behind, the broker went
// away) or refuses one, it subscribes again, waiting longer after each
// failure (up to maxBackoff), and then brings every attached session up to
// date from its cursor: nothing is missed that the feed still keeps, and a
// session that missed more is told that anything may have changed.
func (a *Adapter) follow(ctx context.Context, events <-chan feed.Event, err error) {
	backoff := minBackoff
	for {
		if err == nil {
			a.protect("bringing sessions up to date", func() { a.catchUp(ctx) })
		loop:
			for {
				select {
				case e, ok := <-events:
					if !ok {
						break loop
					}
					a.protect("delivering a change", func() { a.deliver(ctx, e) })
					backoff = minBackoff
				case <-a.kick:
					a.protect("bringing sessions up to date", func() { a.catchUp(ctx) })
				case <-ctx.Done():
					return
				}
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
		events, err = feed.Events(ctx, a.core.Feed(), feedBuffer)
		if err == nil {
			// Whatever happened meanwhile: every attached session catches
			// up from its cursor.
			for _, s := range a.snapshot() {
				if s.attached() {
					a.markCatchUp(s)
				}
			}
		}
	}
}

// Waits between attempts to subscribe to the change feed again.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// kickCatchUp wakes the feed follower to bring the sessions marked for it
// up to date.
func (a *Adapter) kickCatchUp() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
	a.startBG.Do(a.background)
}

// marked reports whether s waits for a catch-up.
func (a *Adapter) marked(s *Session) bool {
	a.catchMu.Lock()
	defer a.catchMu.Unlock()
	return a.catchUps[s]
}

func (a *Adapter) markCatchUp(s *Session) {
	a.catchMu.Lock()
	a.catchUps[s] = true
	a.catchMu.Unlock()
}

// catchUp applies to each session marked for it the feed's events after
// its cursor. It runs on the follower's goroutine, between live events, so
// that the two never race on a cursor: events it applies are older than
// the follower's next ones, or applied already (Stale).
func (a *Adapter) catchUp(ctx context.Context) {
	a.catchMu.Lock()
	marked := a.catchUps
	a.catchUps = map[*Session]bool{}
	a.catchMu.Unlock()
	for s := range marked {
		if !s.attached() {
			continue
		}
		if !a.catchUpOne(ctx, s) {
			a.markCatchUp(s) // the store or feed failed: again later
		}
	}
}

// catchUpBatch is how many feed events one step of a catch-up reads.
const catchUpBatch = 256

func (a *Adapter) catchUpOne(ctx context.Context, s *Session) bool {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	rec, err := a.store.Touch(sctx, s.id)
	if err != nil {
		if err == ErrNoSession {
			s.end(false)
			return true
		}
		a.logger.Warn("legacy: reading a session to bring it up to date", "session", s.id, "err", err)
		return false
	}
	s.adopt(rec)
	if !rec.Initialized {
		return true
	}
	after := rec.Cursor
	for {
		events, complete, err := a.core.Feed().Since(sctx, after, catchUpBatch)
		if err != nil {
			a.logger.Warn("legacy: reading the change feed", "session", s.id, "err", err)
			return false
		}
		if !complete {
			a.tellGap(sctx, s)
			return true
		}
		for _, e := range events {
			if !a.apply(sctx, e, []*Session{s}) {
				return false
			}
		}
		if len(events) < catchUpBatch {
			return true
		}
		after = events[len(events)-1].ID
	}
}

// tellGap tells a session that missed changes the feed no longer keeps
// that everything may have changed — every list, every resource it
// subscribed to — and moves its cursor to the feed's newest event.
func (a *Adapter) tellGap(ctx context.Context, s *Session) {
	last, err := a.core.Feed().Last(ctx)
	if err != nil {
		a.logger.Warn("legacy: reading the change feed's position", "err", err)
		return
	}
	if err := s.update(ctx, func(r *SessionRecord) { r.Cursor = last }, true); err != nil {
		a.logger.Warn("legacy: moving a session's cursor", "session", s.id, "err", err)
		return
	}
	for _, msg := range gapMessages(s) {
		if err := a.store.Push(ctx, s.id, msg); err != nil {
			a.logger.Warn("legacy: queueing a message", "session", s.id, "err", err)
			return
		}
	}
	s.signal()
}

// gapMessages are what a session that missed changes is told: every list
// may have changed, and every resource it subscribed to.
func gapMessages(s *Session) [][]byte {
	msgs := [][]byte{
		jsonrpc.AppendNotification(nil, protocol.NotificationToolListChanged, nil),
		jsonrpc.AppendNotification(nil, protocol.NotificationPromptListChanged, nil),
		jsonrpc.AppendNotification(nil, protocol.NotificationResourceListChanged, nil),
	}
	for _, uri := range s.subscriptions() {
		b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: uri})
		msgs = append(msgs, jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b))
	}
	return msgs
}

// snapshot returns this replica's sessions.
func (a *Adapter) snapshot() []*Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	sessions := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	return sessions
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

// change returns the change e makes to a session's standalone stream, or
// false when it makes none.
func change(e feed.Event) (Change, bool) {
	c := Change{ID: e.ID}
	switch e.Kind {
	case feed.ToolsListChanged:
		c.Message = jsonrpc.AppendNotification(nil, protocol.NotificationToolListChanged, nil)
	case feed.PromptsListChanged:
		c.Message = jsonrpc.AppendNotification(nil, protocol.NotificationPromptListChanged, nil)
	case feed.ResourcesListChanged:
		c.Message = jsonrpc.AppendNotification(nil, protocol.NotificationResourceListChanged, nil)
	case feed.ResourceUpdated:
		b, _ := json.Marshal(protocol.ResourceUpdatedParams{URI: e.URI})
		c.Message = jsonrpc.AppendNotification(nil, protocol.NotificationResourceUpdated, b)
		c.URI = e.URI
	default:
		return c, false
	}
	return c, true
}

// deliver applies a live change to the sessions attached on this replica.
func (a *Adapter) deliver(ctx context.Context, e feed.Event) {
	// Sessions whose reader just attached catch up first (from their
	// cursors, e included); those marked meanwhile are left to the next
	// catch-up, since applying e would move their cursors past what they
	// missed.
	a.catchUp(ctx)
	var attached []*Session
	for _, s := range a.snapshot() {
		if s.attached() && !a.marked(s) {
			attached = append(attached, s)
		}
	}
	if len(attached) == 0 {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if !a.apply(sctx, e, attached) {
		// Missed here: they catch up from their cursors.
		for _, s := range attached {
			a.markCatchUp(s)
		}
	}
}

// apply applies e to the outboxes of sessions and wakes their readers
// where a message may have been queued. It reports false when the store
// failed.
func (a *Adapter) apply(ctx context.Context, e feed.Event, sessions []*Session) bool {
	c, ok := change(e)
	if !ok {
		return true
	}
	if c.ID == "" {
		// A feed without ids: no cursor can say what was applied.
		for _, s := range sessions {
			s.mu.Lock()
			wanted := s.initialized && (c.URI == "" || s.subs[c.URI])
			s.mu.Unlock()
			if wanted {
				if err := a.store.Push(ctx, s.id, c.Message); err != nil {
					return false
				}
				s.signal()
			}
		}
		return true
	}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.id
	}
	res, err := a.store.Apply(ctx, c, ids)
	if err != nil {
		a.logger.Warn("legacy: applying a change to sessions", "err", err)
		return false
	}
	for i, r := range res {
		if r != Skipped {
			sessions[i].signal()
		}
	}
	return true
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
