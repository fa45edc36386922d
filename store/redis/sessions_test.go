package redis_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/store/redis"
	"github.com/mcpkit/mcpkit/store/redis/redistest"
)

// TestSessionsStore runs the SessionStore's contract against Redis, with
// the in-memory store as the reference: both must answer alike.
func TestSessionsStore(t *testing.T) {
	p := redistest.Redis(t)
	st, err := redis.Open(context.Background(), p.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for name, store := range map[string]legacy.SessionStore{"redis": st.Sessions(), "memory": legacy.NewMemoryStore()} {
		t.Run(name, func(t *testing.T) { sessionContract(t, store) })
	}
}

func sessionContract(t *testing.T, s legacy.SessionStore) {
	ctx := context.Background()
	rec := &legacy.SessionRecord{ID: "s1", Version: "2025-11-25", Principal: "alice",
		ClientInfo: &protocol.Implementation{Name: "c", Version: "1"}}
	if err := s.Create(ctx, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := s.Touch(ctx, "s1")
	if err != nil || got.Version != "2025-11-25" || got.Principal != "alice" || got.ClientInfo == nil || got.ClientInfo.Name != "c" || got.Initialized {
		t.Fatalf("Touch: %+v %v", got, err)
	}
	if _, err := s.Touch(ctx, "nope"); !errors.Is(err, legacy.ErrNoSession) {
		t.Errorf("Touch of an unknown session: %v", err)
	}
	// Compare-and-set on the generation.
	a, b := *got, *got
	a.Initialized, a.Cursor = true, "0000000000000001"
	if err := s.Update(ctx, &a, true); err != nil {
		t.Fatal(err)
	}
	b.LogLevel = "debug"
	if err := s.Update(ctx, &b, false); !errors.Is(err, legacy.ErrConflict) {
		t.Errorf("stale Update: %v, want ErrConflict", err)
	}
	a.Subscriptions = []string{"x://a"}
	if err := s.Update(ctx, &a, false); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Touch(ctx, "s1")
	if !got.Initialized || got.Cursor != "0000000000000001" || !slices.Equal(got.Subscriptions, []string{"x://a"}) || got.Generation != a.Generation {
		t.Fatalf("after Update: %+v", got)
	}
	// Apply: in feed order, once; a resource update only if subscribed.
	res, err := s.Apply(ctx, legacy.Change{ID: "0000000000000002", Message: []byte("m2")}, []string{"s1", "nope"})
	if err != nil || res[0] != legacy.Queued || res[1] != legacy.Skipped {
		t.Fatalf("Apply: %v %v", res, err)
	}
	if res, _ := s.Apply(ctx, legacy.Change{ID: "0000000000000002", Message: []byte("m2")}, []string{"s1"}); res[0] != legacy.Stale {
		t.Errorf("Apply again: %v, want Stale", res)
	}
	if res, _ := s.Apply(ctx, legacy.Change{ID: "0000000000000003", URI: "x://b", Message: []byte("m3")}, []string{"s1"}); res[0] != legacy.Skipped {
		t.Errorf("Apply of an unsubscribed update: %v", res)
	}
	if res, _ := s.Apply(ctx, legacy.Change{ID: "0000000000000004", URI: "x://a", Message: []byte("m4")}, []string{"s1"}); res[0] != legacy.Queued {
		t.Errorf("Apply of a subscribed update: %v", res)
	}
	if err := s.Push(ctx, "s1", []byte("m5")); err != nil {
		t.Fatal(err)
	}
	if err := s.Push(ctx, "nope", []byte("x")); !errors.Is(err, legacy.ErrNoSession) {
		t.Errorf("Push to an unknown session: %v", err)
	}
	var out []string
	for {
		m, err := s.Pop(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			break
		}
		out = append(out, string(m))
	}
	if !slices.Equal(out, []string{"m2", "m4", "m5"}) {
		t.Errorf("outbox %v", out)
	}
	// Elicitation ids.
	for _, e := range []string{"e1", "e2"} {
		if err := s.AddElicitation(ctx, "s1", e); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := s.HasElicitation(ctx, "s1", "e1"); !ok {
		t.Error("HasElicitation e1")
	}
	if ok, _ := s.ForgetElicitation(ctx, "s1", "e1"); !ok {
		t.Error("ForgetElicitation e1")
	}
	if ok, _ := s.HasElicitation(ctx, "s1", "e1"); ok {
		t.Error("e1 still known")
	}
	if ids, _ := s.TakeElicitation(ctx, "e2"); !slices.Equal(ids, []string{"s1"}) {
		t.Errorf("TakeElicitation e2: %v", ids)
	}
	if ids, _ := s.TakeElicitation(ctx, "e2"); len(ids) != 0 {
		t.Errorf("TakeElicitation e2 twice: %v", ids)
	}
	// Refresh, Delete.
	if alive, err := s.Refresh(ctx, []string{"s1", "nope"}, true); err != nil || !alive[0] || alive[1] {
		t.Errorf("Refresh: %v %v", alive, err)
	}
	if err := s.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if alive, _ := s.Refresh(ctx, []string{"s1"}, false); alive[0] {
		t.Error("deleted session still alive")
	}
	// Expiry is the store's.
	if err := s.Create(ctx, &legacy.SessionRecord{ID: "s2", Version: "2025-11-25"}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond)
	if _, err := s.Touch(ctx, "s2"); !errors.Is(err, legacy.ErrNoSession) {
		t.Errorf("Touch after the TTL: %v", err)
	}
}
