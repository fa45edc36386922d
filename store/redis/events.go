package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Events returns the streamable.EventStore kept in Redis: each SSE stream
// of a legacy session is a Redis stream of its last MaxStreamEvents events
// and a small hash (standalone, ended, sequence), both expiring
// Options.EventTTL after the stream's last event, so that a client resumes
// a stream with Last-Event-ID on any replica. Event ids are
// "<stream>-<seq>", as in the memory store. A reader waiting for events is
// woken by a pub/sub message from the replica that appended them (one
// subscription per process), and looks again every second in case a wake
// was lost.
func (s *Store) Events() *Events {
	s.evOnce.Do(func() { s.events = &Events{s: s, waiters: map[string]map[chan struct{}]struct{}{}} })
	return s.events
}

// MaxStreamEvents is how many events a stream keeps for resumption.
const MaxStreamEvents = 256

// Events is the streamable.EventStore of a Store.
type Events struct {
	s *Store

	mu        sync.Mutex
	waiters   map[string]map[chan struct{}]struct{}
	listening bool
}

var _ streamable.EventStore = (*Events)(nil)

type eventStream struct {
	ev         *Events
	session    string
	n          int64
	standalone bool
}

func (ev *Events) streamKeys(session string, n int64) []string {
	ns := strconv.FormatInt(n, 10)
	return []string{ev.s.key("esm", session, ns), ev.s.key("esx", session, ns)}
}

// Open starts a stream of the session.
func (ev *Events) Open(ctx context.Context, sess transport.Session, standalone bool) (streamable.EventStream, error) {
	n, err := ev.s.c.Incr(ctx, ev.s.key("esn")).Result()
	if err != nil {
		return nil, wrap(err)
	}
	es := &eventStream{ev: ev, session: sess.ID(), n: n, standalone: standalone}
	k := ev.streamKeys(es.session, n)
	sa := "0"
	if standalone {
		sa = "1"
	}
	_, err = ev.s.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, k[0], "sa", sa, "seq", 0, "end", 0)
		p.PExpire(ctx, k[0], ev.s.opts.EventTTL)
		return nil
	})
	if err != nil {
		return nil, wrap(err)
	}
	return es, nil
}

// Resume returns the session's stream that eventID belongs to.
func (ev *Events) Resume(ctx context.Context, sess transport.Session, eventID string) (streamable.EventStream, error) {
	a, _, ok := strings.Cut(eventID, "-")
	n, err := strconv.ParseInt(a, 10, 64)
	if !ok || err != nil || n <= 0 {
		return nil, streamable.ErrUnknownEvent
	}
	es := &eventStream{ev: ev, session: sess.ID(), n: n}
	sa, err := ev.s.c.HGet(ctx, es.keys()[0], "sa").Result()
	if errors.Is(err, goredis.Nil) {
		return nil, streamable.ErrUnknownEvent
	}
	if err != nil {
		return nil, wrap(err)
	}
	es.standalone = sa == "1"
	return es, nil
}

func (es *eventStream) keys() []string { return es.ev.streamKeys(es.session, es.n) }

func (es *eventStream) id(seq int64) string {
	return strconv.FormatInt(es.n, 10) + "-" + strconv.FormatInt(seq, 10)
}

func (es *eventStream) Start() string    { return es.id(0) }
func (es *eventStream) Standalone() bool { return es.standalone }

var appendScript = goredis.NewScript(`
local st = redis.call('HMGET', KEYS[1], 'end', 'seq')
if not st[1] or st[1] == '1' then return -1 end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[4], seq .. '-0', 'd', ARGV[1])
if ARGV[2] == '1' then redis.call('HSET', KEYS[1], 'end', 1) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', ARGV[5], KEYS[1])
return seq
`)

var errStreamEnded = errors.New("redis: the event stream has ended or expired")

func (es *eventStream) Append(ctx context.Context, data []byte, last bool) (string, error) {
	l := "0"
	if last {
		l = "1"
	}
	seq, err := appendScript.Run(ctx, es.ev.s.c, es.keys(), data, l, es.ev.s.opts.EventTTL.Milliseconds(),
		MaxStreamEvents, es.ev.s.key("esw")).Int64()
	if err != nil {
		return "", wrap(err)
	}
	if seq < 0 {
		return "", errStreamEnded
	}
	return es.id(seq), nil
}

var endScript = goredis.NewScript(`
if redis.call('HSET', KEYS[1], 'end', 1) >= 0 then redis.call('PUBLISH', ARGV[1], KEYS[1]) end
return 1
`)

func (es *eventStream) End(ctx context.Context) error {
	return wrap(endScript.Run(ctx, es.ev.s.c, es.keys()[:1], es.ev.s.key("esw")).Err())
}

func (es *eventStream) Next(ctx context.Context, after string) ([]streamable.Event, bool, error) {
	a, b, ok := strings.Cut(after, "-")
	seq, err := strconv.ParseInt(b, 10, 64)
	if !ok || err != nil || seq < 0 || a != strconv.FormatInt(es.n, 10) {
		return nil, false, streamable.ErrUnknownEvent
	}
	k := es.keys()
	var wake chan struct{}
	defer func() {
		if wake != nil {
			es.ev.unwait(k[0], wake)
		}
	}()
	for {
		if wake == nil {
			// Registered before reading, so that no wake is missed.
			wake = es.ev.wait(k[0])
		}
		var meta *goredis.SliceCmd
		var rng *goredis.XMessageSliceCmd
		_, err := es.ev.s.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			meta = p.HMGet(ctx, k[0], "end", "seq")
			rng = p.XRangeN(ctx, k[1], "("+strconv.FormatInt(seq, 10)+"-0", "+", MaxStreamEvents)
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			return nil, false, wrap(err)
		}
		mv := meta.Val()
		if mv[0] == nil {
			return nil, true, nil // expired: nothing follows
		}
		var out []streamable.Event
		for _, m := range rng.Val() {
			d, _ := m.Values["d"].(string)
			n, _, _ := strings.Cut(m.ID, "-")
			i, _ := strconv.ParseInt(n, 10, 64)
			out = append(out, streamable.Event{ID: es.id(i), Data: []byte(d)})
		}
		ended := mv[0] == "1"
		if ended && len(out) > 0 {
			s1, _ := mv[1].(string)
			last, _ := strconv.ParseInt(s1, 10, 64)
			_, tail, _ := strings.Cut(out[len(out)-1].ID, "-")
			if t, _ := strconv.ParseInt(tail, 10, 64); t < last {
				ended = false // more to read first
			}
		}
		if len(out) > 0 || ended {
			return out, ended, nil
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false, ctx.Err()
		case <-wake:
			es.ev.unwait(k[0], wake)
			wake = nil
		case <-t.C:
		}
		t.Stop()
	}
}

// wait registers a channel closed when the stream of key changes.
func (ev *Events) wait(key string) chan struct{} {
	ch := make(chan struct{})
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if !ev.listening {
		ev.listening = true
		ev.s.bg.Add(1)
		go ev.listen()
	}
	m := ev.waiters[key]
	if m == nil {
		m = map[chan struct{}]struct{}{}
		ev.waiters[key] = m
	}
	m[ch] = struct{}{}
	return ch
}

func (ev *Events) unwait(key string, ch chan struct{}) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if m := ev.waiters[key]; m != nil {
		delete(m, ch)
		if len(m) == 0 {
			delete(ev.waiters, key)
		}
	}
}

// listen takes the wake-ups of every replica's appends until the Store
// closes; go-redis subscribes again by itself after a lost connection
// (readers poll meanwhile).
func (ev *Events) listen() {
	defer ev.s.bg.Done()
	ps := ev.s.c.Subscribe(ev.s.ctx, ev.s.key("esw"))
	defer ps.Close()
	ch := ps.Channel()
	for {
		select {
		case <-ev.s.ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			ev.mu.Lock()
			for w := range ev.waiters[m.Payload] {
				close(w)
				delete(ev.waiters[m.Payload], w)
			}
			delete(ev.waiters, m.Payload)
			ev.mu.Unlock()
		}
	}
}
