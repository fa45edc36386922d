package tasks_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/protocol"
)

func record(id string, ttl time.Duration) *tasks.Record {
	now := time.Now()
	return &tasks.Record{ID: id, Principal: "p", Tool: "t", Status: tasks.Working, CreatedAt: now, UpdatedAt: now, TTL: ttl, PollInterval: time.Second}
}

// TestStoresReclaimExpired: both stores forget a task when its TTL ends
// (tasks/get then finds nothing), Sweep deletes it, and a store at its
// bound refuses a new task until expired ones are reclaimed.
func TestStoresReclaimExpired(t *testing.T) {
	for _, kind := range []string{"memory", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				var st tasks.Store
				if kind == "memory" {
					st = &tasks.MemoryStore{Max: 2}
				} else {
					sq, err := tasks.OpenSQLite(filepath.Join(t.TempDir(), "tasks.db"), &tasks.SQLiteOptions{Max: 2})
					if err != nil {
						t.Fatal(err)
					}
					defer sq.Close()
					st = sq
				}
				if err := st.Create(ctx, record("a", time.Minute)); err != nil {
					t.Fatal(err)
				}
				if err := st.Create(ctx, record("b", time.Hour)); err != nil {
					t.Fatal(err)
				}
				if err := st.Create(ctx, record("c", time.Hour)); !errors.Is(err, tasks.ErrFull) {
					t.Fatalf("a third task in a store of two: %v", err)
				}
				time.Sleep(59 * time.Second)
				if _, err := st.Get(ctx, "a"); err != nil {
					t.Fatalf("a task before its TTL ends: %v", err)
				}
				time.Sleep(time.Second)
				if _, err := st.Get(ctx, "a"); !errors.Is(err, tasks.ErrNotFound) {
					t.Fatalf("a task after its TTL: %v", err)
				}
				if _, err := st.Update(ctx, "a", func(*tasks.Record) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
					t.Fatalf("updating an expired task: %v", err)
				}
				if err := st.Create(ctx, record("c", time.Hour)); err != nil {
					t.Fatalf("a new task once one expired: %v", err)
				}
				time.Sleep(time.Hour)
				if n, err := st.Sweep(ctx, time.Now()); err != nil || n != 2 {
					t.Fatalf("Sweep: %d, %v; want the two expired", n, err)
				}
			})
		})
	}
}

// TestRunningTaskExpires: a task still running when its TTL ends is
// cancelled (its handler's context) and forgotten.
func TestRunningTaskExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		g := newGate()
		s, x := testServer(t, &tasks.Options{TTL: 10 * time.Minute}, g)
		raw, err := rpc(ctx, s, "", true, protocol.MethodToolsCall, map[string]any{"name": "held", "arguments": map[string]any{"text": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		id := decodeTask(t, raw).TaskID
		<-g.started
		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		if tk := get(t, ctx, s, "", id); tk.Status != tasks.Working {
			t.Fatalf("before its TTL: %+v", tk)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case err := <-g.stopped:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the handler ended with %v", err)
			}
		default:
			t.Fatal("the handler still runs after the task's TTL")
		}
		if _, err := rpc(ctx, s, "", true, "tasks/get", map[string]any{"taskId": id}); code(err) != protocol.CodeInvalidParams {
			t.Errorf("tasks/get of an expired task: %v", err)
		}
		x.Close()
		s.Close()
	})
}
