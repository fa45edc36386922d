package sqlserver

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// TestPostgresReplicasAnnounceOnce runs two replicas of one PostgreSQL
// database sharing a feed, as replicas sharing Redis do: each polls the
// database and sees every change, and each change of a table's rows is
// announced once, not once per replica.
func TestPostgresReplicasAnnounceOnce(t *testing.T) {
	e := postgresEnv(t)
	shared := server.NewMemoryFeed()
	for range 2 {
		o := e.opts
		o.PollInterval = 50 * time.Millisecond
		d, err := Open(context.Background(), &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		d.Register(server.New(protocol.Implementation{Name: "sql-replica", Version: "1.0.0"}, &server.Options{Feed: shared}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := server.FeedEvents(ctx, shared, 64)
	if err != nil {
		t.Fatal(err)
	}
	uri := TableURI("t")
	for _, stmt := range []string{
		"INSERT INTO t (id, name) VALUES (30, 'thirty')",
		"UPDATE t SET name = 'THIRTY' WHERE id = 30",
		"DELETE FROM t WHERE id = 30",
	} {
		mustExec(t, e.write, stmt)
		waitEvent(t, ch, 10*time.Second, func(ev server.Event) bool { return ev.Kind == server.ResourceUpdated && ev.URI == uri })
		// Both replicas poll many times within this (every 50 ms): a second
		// announcement of the same change would arrive.
		quiet := time.After(time.Second)
	drain:
		for {
			select {
			case ev := <-ch:
				if ev.Kind == server.ResourceUpdated && ev.URI == uri {
					t.Fatalf("after %q, %s was announced again", stmt, uri)
				}
			case <-quiet:
				break drain
			}
		}
	}
}
