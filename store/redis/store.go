package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Store is a connection to one Redis server (or a primary with its
// replicas behind one address) and a key prefix. Its methods make the
// shared pieces: Sessions, Bus, Feed, OnceStore and Events. Every key it
// writes starts with the prefix and expires by itself.
type Store struct {
	c      *goredis.Client
	prefix string
	opts   Options

	// The goroutines the Store owns (the feed's reader, the event
	// streams' waker) end with ctx; Close cancels it and waits.
	ctx    context.Context
	cancel context.CancelFunc
	bg     sync.WaitGroup

	feedOnce sync.Once
	feed     *Feed
	evOnce   sync.Once
	events   *Events
}

// Options configure a Store.
type Options struct {
	// Prefix starts every key and channel; "" means "mcpkit:". Servers
	// that serve different things from one Redis use different prefixes.
	Prefix string
	// Timeout bounds one command (dial, read and write); 0 means 2
	// seconds. A request that needs the store fails past it.
	Timeout time.Duration
	// PoolSize bounds the connections to Redis; 0 means go-redis's
	// default (10 per CPU).
	PoolSize int
	// EventTTL is how long a legacy SSE stream's events are kept after its
	// last event, for a client to resume it; 0 means an hour.
	EventTTL time.Duration
}

// Open connects to the Redis server named by url
// ("redis://[user:password@]host:port/db"), checks that it answers, and
// returns a Store on it.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	o, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	var op Options
	if opts != nil {
		op = *opts
	}
	if op.Timeout <= 0 {
		op.Timeout = 2 * time.Second
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = op.Timeout, op.Timeout, op.Timeout
	o.ContextTimeoutEnabled = true
	if op.PoolSize > 0 {
		o.PoolSize = op.PoolSize
	}
	s := New(goredis.NewClient(o), &op)
	if err := s.c.Ping(ctx).Err(); err != nil {
		s.c.Close()
		return nil, fmt.Errorf("redis: %s does not answer: %w", o.Addr, err)
	}
	return s, nil
}

// New returns a Store on an existing client; opts may be nil.
func New(c *goredis.Client, opts *Options) *Store {
	s := &Store{c: c}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Prefix == "" {
		s.opts.Prefix = "mcpkit:"
	}
	if s.opts.EventTTL <= 0 {
		s.opts.EventTTL = time.Hour
	}
	s.prefix = s.opts.Prefix
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Client returns the go-redis client.
func (s *Store) Client() *goredis.Client { return s.c }

// Close stops the Store's goroutines and closes its connections.
func (s *Store) Close() error {
	s.cancel()
	s.bg.Wait()
	return s.c.Close()
}

func (s *Store) key(parts ...string) string { return s.prefix + strings.Join(parts, ":") }

// ErrUnavailable wraps the errors of a Redis that could not be reached.
var ErrUnavailable = errors.New("redis: the store is unavailable")

// wrap marks an error of the Redis client as ErrUnavailable, so that
// callers can tell a store that failed from a refusal.
func wrap(err error) error {
	if err == nil || errors.Is(err, goredis.Nil) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
