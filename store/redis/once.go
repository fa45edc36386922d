package redis

import (
	"context"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/server"
)

// OnceStore returns the server.OnceStore kept in Redis: SET NX with the
// state's expiry, one round trip per single-use state presented.
func (s *Store) OnceStore() server.OnceStore { return onceStore{s} }

type onceStore struct{ s *Store }

func (o onceStore) Use(ctx context.Context, id string, expires time.Time) (bool, error) {
	ttl := time.Until(expires)
	if ttl <= 0 {
		return false, nil
	}
	// Kept until expires, rounded up to the millisecond (SET ... PX).
	ttl = (ttl + time.Millisecond - 1).Truncate(time.Millisecond)
	ok, err := o.s.c.SetArgs(ctx, o.s.key("once", id), 1, goredis.SetArgs{Mode: "NX", TTL: ttl}).Result()
	if errors.Is(err, goredis.Nil) {
		return false, nil
	}
	return ok == "OK", wrap(err)
}
