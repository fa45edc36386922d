package redis_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/store/redis"
	"github.com/mcpkit/mcpkit/store/redis/redistest"
)

func openStore(t *testing.T, url string) *redis.Store {
	t.Helper()
	st, err := redis.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func taskStore(t *testing.T, st *redis.Store, o *redis.TaskOptions) *redis.Tasks {
	t.Helper()
	ts := st.Tasks(o)
	t.Cleanup(func() { ts.Close() })
	return ts
}

func taskRecord(id string, ttl time.Duration) *tasks.Record {
	now := time.Now().Truncate(time.Millisecond)
	return &tasks.Record{ID: id, Principal: "p", Tool: "t", Status: tasks.Working, CreatedAt: now, UpdatedAt: now,
		TTL: ttl, PollInterval: time.Second}
}

// TestTaskStoreContract runs the Store's contract against Redis, with the
// in-memory store as the reference: both must answer alike.
func TestTaskStoreContract(t *testing.T) {
	p := redistest.Redis(t)
	st := openStore(t, p.URL())
	for name, store := range map[string]tasks.Store{
		"redis":  taskStore(t, st, &redis.TaskOptions{MaxRecordBytes: 4096}),
		"memory": tasks.NewMemoryStore(),
	} {
		t.Run(name, func(t *testing.T) { taskContract(t, store, name == "redis") })
	}
}

func taskContract(t *testing.T, s tasks.Store, bounded bool) {
	ctx := context.Background()
	r := taskRecord("t1", time.Hour)
	r.StatusMessage = "0"
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, taskRecord("t1", time.Hour)); err == nil {
		t.Error("a second task with the same id was created")
	}
	got, err := s.Get(ctx, "t1")
	if err != nil || got.Principal != "p" || got.Tool != "t" || got.Status != tasks.Working || !got.CreatedAt.Equal(r.CreatedAt) ||
		got.TTL != time.Hour || got.PollInterval != time.Second || got.StatusMessage != "0" {
		t.Fatalf("Get: %+v, %v", got, err)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("Get of an unknown task: %v", err)
	}
	if _, err := s.Update(ctx, "nope", func(*tasks.Record) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("Update of an unknown task: %v", err)
	}
	// A function's error writes nothing.
	boom := errors.New("boom")
	if _, err := s.Update(ctx, "t1", func(r *tasks.Record) error { r.Status = tasks.Failed; return boom }); !errors.Is(err, boom) {
		t.Errorf("Update whose function fails: %v", err)
	}
	if _, err := s.Update(ctx, "t1", func(r *tasks.Record) error { r.Status = tasks.Failed; return tasks.ErrUnchanged }); !errors.Is(err, tasks.ErrUnchanged) {
		t.Errorf("Update with nothing to do: %v", err)
	}
	if got, _ := s.Get(ctx, "t1"); got.Status != tasks.Working {
		t.Fatalf("a refused Update was written: %+v", got)
	}
	// The record returned is the caller's.
	got.InputRequests = map[string]json.RawMessage{"k": json.RawMessage(`{}`)}
	if again, _ := s.Get(ctx, "t1"); again.InputRequests != nil {
		t.Error("changing a record Get returned changed the store")
	}
	// Updates are atomic: concurrent increments are all kept.
	const workers, each = 8, 20
	for _, err := range incrementConcurrently(s, "t1", workers, each) {
		t.Error(err)
	}
	if got, _ := s.Get(ctx, "t1"); got.StatusMessage != strconv.Itoa(workers*each) {
		t.Errorf("after %d concurrent increments: %q", workers*each, got.StatusMessage)
	}
	// Every part of a record is kept.
	perr := protocol.InvalidParams("bad")
	upd, err := s.Update(ctx, "t1", func(r *tasks.Record) error {
		r.Status, r.InputRequests = tasks.InputRequired, map[string]json.RawMessage{"a": json.RawMessage(`{"method":"x"}`)}
		r.Result, r.Error = json.RawMessage(`{"content":[]}`), perr
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, "t1")
	if got.Status != tasks.InputRequired || string(got.InputRequests["a"]) != `{"method":"x"}` || string(got.Result) != `{"content":[]}` ||
		got.Error == nil || got.Error.Code != perr.Code || upd.Status != tasks.InputRequired {
		t.Errorf("after an Update of every part: %+v", got)
	}
	if !bounded {
		return
	}
	big := taskRecord("big", time.Hour)
	big.StatusMessage = strings.Repeat("x", 5000)
	if err := s.Create(ctx, big); err == nil {
		t.Error("a record larger than MaxRecordBytes was created")
	}
	if _, err := s.Update(ctx, "t1", func(r *tasks.Record) error {
		r.Result = json.RawMessage(`"` + strings.Repeat("x", 5000) + `"`)
		return nil
	}); err == nil {
		t.Error("a record was updated past MaxRecordBytes")
	}
}

// TestTaskStoreReclaimsExpired: Redis forgets a task when its TTL ends
// (its key expires), Sweep clears the index, and a store at its bound
// refuses a new task until expired ones are reclaimed.
func TestTaskStoreReclaimsExpired(t *testing.T) {
	p := redistest.Redis(t)
	st := openStore(t, p.URL())
	s := taskStore(t, st, &redis.TaskOptions{Max: 2})
	ctx := context.Background()
	a := taskRecord("a", 400*time.Millisecond)
	if err := s.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, taskRecord("b", 1200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, taskRecord("c", time.Hour)); !errors.Is(err, tasks.ErrFull) {
		t.Fatalf("a third task in a store of two: %v", err)
	}
	if _, err := s.Get(ctx, "a"); err != nil {
		t.Fatalf("a task before its TTL ends: %v", err)
	}
	time.Sleep(time.Until(a.Expires()) + 50*time.Millisecond)
	if _, err := s.Get(ctx, "a"); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("a task after its TTL: %v", err)
	}
	if n, _ := st.Client().Exists(ctx, "mcpkit:t:a").Result(); n != 0 {
		t.Error("the key of an expired task is still there")
	}
	if _, err := s.Update(ctx, "a", func(*tasks.Record) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("updating an expired task: %v", err)
	}
	c := taskRecord("c", 1200*time.Millisecond)
	if err := s.Create(ctx, c); err != nil {
		t.Fatalf("a new task once one expired: %v", err)
	}
	time.Sleep(time.Until(c.Expires()) + 50*time.Millisecond)
	if n, err := s.Sweep(ctx, time.Now()); err != nil || n != 2 {
		t.Fatalf("Sweep: %d, %v; want the two expired", n, err)
	}
	if n, _ := st.Client().ZCard(ctx, "mcpkit:tidx").Result(); n != 0 {
		t.Errorf("%d tasks left in the index after Sweep", n)
	}
}

// TestTaskStoreLease: a task whose replica stops renewing its lease (a
// killed process) is read by another replica as failed, with the error
// that says its server stopped, and recorded so; while the lease is
// renewed its tasks stay as they are; a replica that closes its store
// ends its lease at once; finished tasks are never touched.
func TestTaskStoreLease(t *testing.T) {
	p := redistest.Redis(t)
	// Renewed every third of a lease: a second leaves the renewal room for
	// a loaded machine's stalls.
	lease := time.Second
	a := taskStore(t, openStore(t, p.URL()), &redis.TaskOptions{Lease: lease})
	b := taskStore(t, openStore(t, p.URL()), &redis.TaskOptions{Lease: lease})
	ctx := context.Background()
	create := func(s *redis.Tasks, id string, status tasks.Status) {
		r := taskRecord(id, time.Hour)
		r.Status = status
		if status == tasks.InputRequired {
			r.InputRequests = map[string]json.RawMessage{"k": json.RawMessage(`{}`)}
		}
		if status == tasks.Completed {
			r.Result = json.RawMessage(`{"content":[]}`)
		}
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	create(a, "working", tasks.Working)
	create(a, "waiting", tasks.InputRequired)
	create(a, "done", tasks.Completed)
	time.Sleep(lease + lease/2) // past the first lease: renewed meanwhile
	for id, want := range map[string]tasks.Status{"working": tasks.Working, "waiting": tasks.InputRequired, "done": tasks.Completed} {
		if got, err := b.Get(ctx, id); err != nil || got.Status != want {
			t.Fatalf("%s while its replica renews its lease: %+v, %v", id, got, err)
		}
	}
	redis.StopRenewing(a)
	interrupted := func(s *redis.Tasks, id string) bool {
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tasks.Failed {
			return false
		}
		if got.Error == nil || got.Error.Code != protocol.CodeInternalError || got.Error.Message != tasks.ErrInterrupted ||
			got.StatusMessage != tasks.ErrInterrupted || got.InputRequests != nil {
			t.Errorf("%s after its replica died: %+v", id, got)
		}
		return true
	}
	deadline := time.Now().Add(lease + 2*time.Second)
	for !interrupted(b, "working") {
		if time.Now().After(deadline) {
			t.Fatal("a task of a dead replica is still working")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !interrupted(b, "waiting") {
		t.Error("a task of a dead replica still waits for input")
	}
	if got, _ := b.Get(ctx, "done"); got.Status != tasks.Completed || string(got.Result) != `{"content":[]}` {
		t.Errorf("a completed task of a dead replica: %+v", got)
	}
	// Recorded: the later Update sees it failed.
	if _, err := b.Update(ctx, "working", func(r *tasks.Record) error {
		if r.Status != tasks.Failed {
			t.Errorf("Update sees %s", r.Status)
		}
		return tasks.ErrUnchanged
	}); !errors.Is(err, tasks.ErrUnchanged) {
		t.Error(err)
	}

	// A lease too short to renew is taken as the shortest one.
	if err := openStore(t, p.URL()).Tasks(&redis.TaskOptions{Lease: time.Nanosecond}).Close(); err != nil {
		t.Error(err)
	}

	// A replica that shuts down ends its lease at once.
	c := openStore(t, p.URL()).Tasks(&redis.TaskOptions{Lease: time.Hour})
	create(c, "c1", tasks.Working)
	if got, _ := b.Get(ctx, "c1"); got.Status != tasks.Working {
		t.Fatalf("c1: %+v", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !interrupted(b, "c1") {
		t.Error("a task of a replica that closed its store is still working")
	}
}

// TestTaskStoreUpdateUnderContention: many writers of one task each get
// every update in; a writer that loses a compare-and-set waits a random
// while before it tries again, so that none loses every round.
func TestTaskStoreUpdateUnderContention(t *testing.T) {
	p := redistest.Redis(t)
	st := openStore(t, p.URL())
	s := taskStore(t, st, nil)
	ctx := context.Background()
	r := taskRecord("hot", time.Hour)
	r.StatusMessage = "0"
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	const workers, each = 16, 20
	errs := incrementConcurrently(s, "hot", workers, each)
	if len(errs) > 0 {
		t.Fatalf("%d of %d writers gave up: %v", len(errs), workers, errs[0])
	}
	if got, _ := s.Get(ctx, "hot"); got.StatusMessage != strconv.Itoa(workers*each) {
		t.Errorf("after %d concurrent increments: %q", workers*each, got.StatusMessage)
	}
}

// incrementConcurrently has workers writers each add one to the status
// message of task id, each times, and returns the error of every writer
// that gave up.
func incrementConcurrently(s tasks.Store, id string, workers, each int) []error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for range workers {
		wg.Go(func() {
			for range each {
				_, err := s.Update(context.Background(), id, func(r *tasks.Record) error {
					n, err := strconv.Atoi(r.StatusMessage)
					if err != nil {
						return err
					}
					r.StatusMessage = strconv.Itoa(n + 1)
					return nil
				})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return errs
}
