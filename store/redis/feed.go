package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/feed"
)

// Feed returns the change feed kept in Redis: a stream (XADD, trimmed to
// about FeedKeep events) that one goroutine per process reads (XREAD
// BLOCK) and fans out to the process's subscribers, so that an event
// published once on any replica reaches the subscribers of every replica
// once. Event ids are the stream's entry ids written fixed-width
// ("<ms>-<seq>" in hexadecimal), so that they compare as their order. When
// the reader loses Redis, every subscription ends with SubscriptionLost:
// subscribers subscribe again and catch up with Since.
func (s *Store) Feed() *Feed {
	s.feedOnce.Do(func() { s.feed = &Feed{s: s, subs: map[*feedSub]struct{}{}} })
	return s.feed
}

// FeedKeep is about how many events the feed keeps for Since.
const FeedKeep = 10000

// feedDedup is how long a Key names the change it was published for.
const feedDedup = time.Minute

// Feed is the feed.Feed of a Store.
type Feed struct {
	s *Store

	mu      sync.Mutex
	subs    map[*feedSub]struct{}
	reading bool
}

type feedSub struct{ deliver func(feed.Event) bool }

var _ feed.Feed = (*Feed)(nil)

// feedID writes a stream entry id as a feed event id.
func feedID(entry string) string {
	a, b, _ := strings.Cut(entry, "-")
	ms, _ := strconv.ParseUint(a, 10, 64)
	seq, _ := strconv.ParseUint(b, 10, 64)
	return fmt.Sprintf("%016x-%08x", ms, seq)
}

// entryID reads a feed event id back as a stream entry id.
func entryID(id string) (string, bool) {
	a, b, ok := strings.Cut(id, "-")
	if !ok {
		return "", false
	}
	ms, err1 := strconv.ParseUint(a, 16, 64)
	seq, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return "", false
	}
	return strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq, 10), true
}

var publishScript = goredis.NewScript(`
if ARGV[3] ~= '' then
  if not redis.call('SET', KEYS[2], 1, 'NX', 'PX', ARGV[4]) then return false end
end
if ARGV[6] ~= '' then
  return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[5], '*', 'k', ARGV[1], 'u', ARGV[2], 't', ARGV[6], 'm', ARGV[7], 'p', ARGV[8])
end
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[5], '*', 'k', ARGV[1], 'u', ARGV[2])
`)

// MaxNotificationBytes bounds the params of an extension's notification
// (feed.Event's Topic, Method and Params) the feed carries: the stream
// keeps about FeedKeep events.
const MaxNotificationBytes = 256 << 10

// Publish appends e to the stream, unless its Key was published within
// the last minute: one round trip.
func (f *Feed) Publish(ctx context.Context, e feed.Event) error {
	dedup := ""
	if e.Key != "" {
		dedup = e.Key
	}
	if len(e.Params)+len(e.Method)+len(e.Topic) > MaxNotificationBytes {
		return fmt.Errorf("redis: a notification of %d bytes, more than the feed carries (%d)", len(e.Params), MaxNotificationBytes)
	}
	err := publishScript.Run(ctx, f.s.c, []string{f.s.key("feed"), f.s.key("feedkey", dedup)},
		int(e.Kind), e.URI, dedup, feedDedup.Milliseconds(), FeedKeep, e.Topic, e.Method, string(e.Params)).Err()
	if errors.Is(err, goredis.Nil) {
		return nil
	}
	return wrap(err)
}

func decodeEvent(m goredis.XMessage) feed.Event {
	k, _ := m.Values["k"].(string)
	u, _ := m.Values["u"].(string)
	n, _ := strconv.Atoi(k)
	e := feed.Event{Kind: feed.EventKind(n), URI: u, ID: feedID(m.ID)}
	if t, _ := m.Values["t"].(string); t != "" {
		e.Topic = t
		e.Method, _ = m.Values["m"].(string)
		if p, _ := m.Values["p"].(string); p != "" {
			e.Params = []byte(p)
		}
	}
	return e
}

// Subscribe calls deliver with the events published from now on.
func (f *Feed) Subscribe(ctx context.Context, deliver func(feed.Event) bool) error {
	sub := &feedSub{deliver: deliver}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.reading {
		pos, err := f.lastEntry(ctx)
		if err != nil {
			return err
		}
		f.reading = true
		f.s.bg.Add(1)
		go f.read(pos)
	}
	f.subs[sub] = struct{}{}
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		delete(f.subs, sub)
		f.mu.Unlock()
	})
	return nil
}

func (f *Feed) lastEntry(ctx context.Context) (string, error) {
	msgs, err := f.s.c.XRevRangeN(ctx, f.s.key("feed"), "+", "-", 1).Result()
	if err != nil {
		return "", wrap(err)
	}
	if len(msgs) == 0 {
		return "0-0", nil
	}
	return msgs[0].ID, nil
}

// read follows the stream from pos and fans its events out, until the
// Store closes or Redis fails; then it ends every subscription.
func (f *Feed) read(pos string) {
	defer f.s.bg.Done()
	for {
		res, err := f.s.c.XRead(f.s.ctx, &goredis.XReadArgs{
			Streams: []string{f.s.key("feed"), pos}, Count: 256, Block: time.Second,
		}).Result()
		if errors.Is(err, goredis.Nil) {
			continue
		}
		if err != nil {
			f.mu.Lock()
			for s := range f.subs {
				s.deliver(feed.Event{Kind: feed.SubscriptionLost})
				delete(f.subs, s)
			}
			f.reading = false
			f.mu.Unlock()
			return
		}
		for _, st := range res {
			for _, m := range st.Messages {
				pos = m.ID
				e := decodeEvent(m)
				f.mu.Lock()
				for s := range f.subs {
					if !s.deliver(e) {
						delete(f.subs, s)
					}
				}
				f.mu.Unlock()
			}
		}
	}
}

// Since returns the events after the one with the id after: one round
// trip.
func (f *Feed) Since(ctx context.Context, after string, max int) ([]feed.Event, bool, error) {
	start := "-"
	if after != "" {
		e, ok := entryID(after)
		if !ok {
			return nil, false, fmt.Errorf("redis: malformed feed event id %q", after)
		}
		start = "(" + e
	}
	var info *goredis.XInfoStreamCmd
	var rng *goredis.XMessageSliceCmd
	_, err := f.s.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		info = p.XInfoStream(ctx, f.s.key("feed"))
		rng = p.XRangeN(ctx, f.s.key("feed"), start, "+", int64(max))
		return nil
	})
	if info.Err() != nil && strings.Contains(info.Err().Error(), "no such key") {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, wrap(err)
	}
	var out []feed.Event
	for _, m := range rng.Val() {
		out = append(out, decodeEvent(m))
	}
	// Complete when nothing after `after` was trimmed.
	trimmed := info.Val().MaxDeletedEntryID
	complete := trimmed == "" || trimmed == "0-0" || after != "" && feedID(trimmed) <= after
	return out, complete, nil
}

// Last returns the id of the newest event.
func (f *Feed) Last(ctx context.Context) (string, error) {
	e, err := f.lastEntry(ctx)
	if err != nil || e == "0-0" {
		return "", err
	}
	return feedID(e), nil
}
