// Package redis keeps the state that replicas of one mcpkit server share in
// Redis (github.com/redis/go-redis/v9), so that any replica behind a load
// balancer serves any request: legacy sessions (legacy.SessionStore) and
// the bus between replicas (legacy.Bus), the change feed (feed.Feed), the
// single-use requestStates (server.OnceStore), the legacy SSE streams'
// events (streamable.EventStore) and the Tasks extension's task records
// (tasks.Store, Store.Tasks).
//
// It is a package of its own so that the core does not depend on a Redis
// client. It needs Redis 6.2 or later, one server (or a primary): the
// scripts touch keys of one session beyond those they declare, which Redis
// Cluster would refuse.
//
//	st, err := redis.Open(ctx, "redis://127.0.0.1:6379/0", nil)
//	srv := server.New(info, &server.Options{
//		Feed:      st.Feed(),
//		OnceStore: st.OnceStore(),
//		StateKey:  key, // the same on every replica
//		Legacy:    legacy.Options{Store: st.Sessions(), Bus: st.Bus()},
//	})
//	h := streamable.New(srv, &streamable.Options{Events: st.Events()})
package redis
