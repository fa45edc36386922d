package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// TaskOptions configure the task store of a Store.
type TaskOptions struct {
	// Max bounds the unexpired tasks held at once, by all replicas
	// together; 0 means 100,000.
	Max int
	// MaxRecordBytes bounds one encoded task record (its result
	// included); 0 means 17 MiB, room for the extension's default
	// MaxResultBytes (16 MiB). A larger record is refused.
	MaxRecordBytes int
	// Lease is how long a replica's tasks stay working without it
	// renewing its lease; 0 means 30 seconds. The lease is renewed every
	// third of it. Less than 30 ms is taken as 30 ms.
	Lease time.Duration
}

// minLease bounds TaskOptions.Lease from below.
const minLease = 30 * time.Millisecond

// Tasks returns the tasks.Store kept in Redis, shared by every replica
// on the Store's Redis and prefix. A task is a hash (its record as JSON,
// a version, the replica that runs it) that expires at CreatedAt+TTL; a
// sorted set of the tasks by expiry bounds their count. Update is a
// compare-and-set on the version, retried a bounded number of times.
//
// A task's handler runs in the replica that created it. That replica
// holds a lease in Redis, renewed while it runs; a task still working or
// waiting for input whose replica's lease lapsed (the process was
// killed, or lost Redis longer than the lease) is read, by every
// replica, as failed with tasks.ErrInterrupted, and recorded so: never
// left working forever. Close the returned store to end the lease (the
// tasks it ran are then read as failed at once).
func (s *Store) Tasks(opts *TaskOptions) *Tasks {
	t := &Tasks{s: s, max: 100_000, maxBytes: 17 << 20, lease: 30 * time.Second}
	if opts != nil {
		if opts.Max > 0 {
			t.max = opts.Max
		}
		if opts.MaxRecordBytes > 0 {
			t.maxBytes = opts.MaxRecordBytes
		}
		if opts.Lease > 0 {
			t.lease = max(opts.Lease, minLease)
		}
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	t.owner = hex.EncodeToString(b[:])
	t.ctx, t.cancel = context.WithCancel(s.ctx)
	ctx, cancel := context.WithTimeout(t.ctx, t.timeout())
	_ = t.renew(ctx) // the loop tries again when Redis does not answer now
	cancel()
	t.wg.Add(1)
	go t.renewLoop()
	return t
}

// Tasks is the tasks.Store of a Store (see Store.Tasks).
type Tasks struct {
	s        *Store
	max      int
	maxBytes int
	lease    time.Duration
	owner    string // this replica's id, random

	ctx    context.Context // the lease's renewal ends with it
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

var _ tasks.Store = (*Tasks)(nil)

// maxUpdateTries bounds the compare-and-set attempts of one Update.
const maxUpdateTries = 32

// Between two compare-and-set attempts a writer that lost waits a random
// time, up to a bound that doubles from minRetryWait to maxRetryWait:
// writers that keep colliding spread out instead of one losing every
// round (without it, some of sixteen writers of one task lost 32 rounds in
// a row: TestTaskStoreUpdateUnderContention).
const (
	minRetryWait = 100 * time.Microsecond
	maxRetryWait = 50 * time.Millisecond
)

// retryWait waits before attempt try (none before the first, try 0), for
// as long as ctx allows.
func retryWait(ctx context.Context, try int) error {
	if try == 0 {
		return nil
	}
	bound := min(minRetryWait<<min(try, 10), maxRetryWait)
	t := time.NewTimer(mrand.N(bound) + 1)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrTaskContention is returned by Update when the task changed under it
// more times than it tries.
var ErrTaskContention = errors.New("redis: the task changes too often to update")

func (t *Tasks) recKey(id string) string { return t.s.key("t", id) }
func (t *Tasks) idxKey() string          { return t.s.key("tidx") }
func (t *Tasks) liveKey(owner string) string {
	return t.s.key("tlive", owner)
}

// timeout bounds the lease's own commands.
func (t *Tasks) timeout() time.Duration {
	if t.s.opts.Timeout > 0 {
		return t.s.opts.Timeout
	}
	return 2 * time.Second
}

// renew writes this replica's lease.
func (t *Tasks) renew(ctx context.Context) error {
	return wrap(t.s.c.Set(ctx, t.liveKey(t.owner), 1, t.lease).Err())
}

func (t *Tasks) renewLoop() {
	defer t.wg.Done()
	tick := time.NewTicker(t.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(t.ctx, t.lease/3)
			_ = t.renew(ctx)
			cancel()
		}
	}
}

// stopRenewing ends the renewal of the lease and leaves it to lapse, as
// a killed process does.
func (t *Tasks) stopRenewing() {
	t.once.Do(func() {
		t.cancel()
		t.wg.Wait()
	})
}

// Close ends this replica's lease: the tasks it ran and did not finish
// are read as failed from now on. It does not close the Store.
func (t *Tasks) Close() error {
	t.stopRenewing()
	ctx, cancel := context.WithTimeout(context.Background(), t.timeout())
	defer cancel()
	return wrap(t.s.c.Del(ctx, t.liveKey(t.owner)).Err())
}

// taskData is a record as stored, times in Unix milliseconds.
type taskData struct {
	Principal string                     `json:"p"`
	Tool      string                     `json:"t"`
	Status    tasks.Status               `json:"s"`
	Message   string                     `json:"m,omitempty"`
	Created   int64                      `json:"c"`
	Updated   int64                      `json:"u"`
	TTL       int64                      `json:"ttl"`
	Poll      int64                      `json:"poll,omitempty"`
	Input     map[string]json.RawMessage `json:"in,omitempty"`
	Result    json.RawMessage            `json:"r,omitempty"`
	Error     *jsonrpc.Error             `json:"e,omitempty"`
}

func (t *Tasks) encode(r *tasks.Record) (string, error) {
	d := taskData{Principal: r.Principal, Tool: r.Tool, Status: r.Status, Message: r.StatusMessage,
		Created: r.CreatedAt.UnixMilli(), Updated: r.UpdatedAt.UnixMilli(), TTL: r.TTL.Milliseconds(),
		Poll: r.PollInterval.Milliseconds(), Input: r.InputRequests, Result: r.Result, Error: r.Error}
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("redis: encoding task %s: %w", r.ID, err)
	}
	if len(b) > t.maxBytes {
		return "", fmt.Errorf("redis: task %s: a record of %d bytes, more than %d", r.ID, len(b), t.maxBytes)
	}
	return string(b), nil
}

func decodeTask(id, s string) (*tasks.Record, error) {
	var d taskData
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return nil, fmt.Errorf("redis: stored task %s: %w", id, err)
	}
	return &tasks.Record{ID: id, Principal: d.Principal, Tool: d.Tool, Status: d.Status, StatusMessage: d.Message,
		CreatedAt: time.UnixMilli(d.Created), UpdatedAt: time.UnixMilli(d.Updated),
		TTL: time.Duration(d.TTL) * time.Millisecond, PollInterval: time.Duration(d.Poll) * time.Millisecond,
		InputRequests: d.Input, Result: d.Result, Error: d.Error}, nil
}

// expiresMs is when the store forgets r, never before now+1 ms.
func expiresMs(r *tasks.Record) int64 { return r.Expires().UnixMilli() }

// idxExpiry keeps the index an hour past its latest task, for Sweep to
// count what expired (Lua).
const idxExpiry = `
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[2], math.floor(tonumber(last[2])) + 3600000) end
`

// KEYS: record, index. ARGV: id, data, owner, expires ms, max, live key,
// lease ms.
var createTaskScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 'full' end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'dup' end
redis.call('SET', ARGV[6], 1, 'PX', ARGV[7])
redis.call('HSET', KEYS[1], 'd', ARGV[2], 'v', 1, 'o', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
` + idxExpiry + `
return 'ok'
`)

// Create implements tasks.Store.
func (t *Tasks) Create(ctx context.Context, r *tasks.Record) error {
	data, err := t.encode(r)
	if err != nil {
		return err
	}
	res, err := createTaskScript.Run(ctx, t.s.c, []string{t.recKey(r.ID), t.idxKey()}, r.ID, data, t.owner,
		expiresMs(r), t.max, t.liveKey(t.owner), t.lease.Milliseconds()).Text()
	switch {
	case err != nil:
		return wrap(err)
	case res == "full":
		return tasks.ErrFull
	case res == "dup":
		return errors.New("redis: duplicate task id")
	}
	return nil
}

// KEYS: record. ARGV: the live keys' prefix. Returns the data, the
// version and whether the owner's lease holds.
var getTaskScript = goredis.NewScript(`
local r = redis.call('HMGET', KEYS[1], 'd', 'v', 'o')
if not r[1] then return false end
local live = 0
if r[3] then live = redis.call('EXISTS', ARGV[1] .. r[3]) end
return {r[1], r[2], live}
`)

// KEYS: record, index. ARGV: id, version, data, expires ms. A
// compare-and-set on the version.
var setTaskScript = goredis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return 'gone' end
if v ~= ARGV[2] then return 'conflict' end
redis.call('HSET', KEYS[1], 'd', ARGV[3], 'v', tonumber(v) + 1)
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) end
` + idxExpiry + `
return 'ok'
`)

// read returns the task id and its version, ErrNotFound when there is
// none. lapsed says the task is unfinished and its replica's lease is
// gone.
func (t *Tasks) read(ctx context.Context, id string) (r *tasks.Record, version string, lapsed bool, err error) {
	v, err := getTaskScript.Run(ctx, t.s.c, []string{t.recKey(id)}, t.s.key("tlive", "")).Slice()
	if errors.Is(err, goredis.Nil) {
		return nil, "", false, tasks.ErrNotFound
	}
	if err != nil {
		return nil, "", false, wrap(err)
	}
	if len(v) != 3 {
		return nil, "", false, fmt.Errorf("redis: stored task %s: a malformed record", id)
	}
	data, _ := v[0].(string)
	version, _ = v[1].(string)
	live, _ := v[2].(int64)
	if r, err = decodeTask(id, data); err != nil {
		return nil, "", false, err
	}
	if !time.Now().Before(r.Expires()) {
		return nil, "", false, tasks.ErrNotFound
	}
	return r, version, !r.Status.Terminal() && live == 0, nil
}

// write stores r in place of version; it reports false when the task
// changed meanwhile.
func (t *Tasks) write(ctx context.Context, r *tasks.Record, version string) (bool, error) {
	data, err := t.encode(r)
	if err != nil {
		return false, err
	}
	res, err := setTaskScript.Run(ctx, t.s.c, []string{t.recKey(r.ID), t.idxKey()}, r.ID, version, data, expiresMs(r)).Text()
	switch {
	case err != nil:
		return false, wrap(err)
	case res == "gone":
		return false, tasks.ErrNotFound
	}
	return res == "ok", nil
}

// interrupt marks r failed: its handler died with its replica.
func interrupt(r *tasks.Record) {
	r.Status, r.StatusMessage, r.InputRequests = tasks.Failed, tasks.ErrInterrupted, nil
	r.Error = jsonrpc.NewError(protocol.CodeInternalError, tasks.ErrInterrupted, nil)
	r.UpdatedAt = time.Now()
}

// load reads the task id, recording it failed first when its replica's
// lease lapsed.
func (t *Tasks) load(ctx context.Context, id string) (*tasks.Record, string, error) {
	for try := range maxUpdateTries {
		if err := retryWait(ctx, try); err != nil {
			return nil, "", err
		}
		r, version, lapsed, err := t.read(ctx, id)
		if err != nil || !lapsed {
			return r, version, err
		}
		interrupt(r)
		ok, err := t.write(ctx, r, version)
		if err != nil {
			return nil, "", err
		}
		if ok {
			n, _ := strconv.Atoi(version)
			return r, strconv.Itoa(n + 1), nil
		}
	}
	return nil, "", ErrTaskContention
}

// Get implements tasks.Store.
func (t *Tasks) Get(ctx context.Context, id string) (*tasks.Record, error) {
	r, _, err := t.load(ctx, id)
	return r, err
}

// Update implements tasks.Store: f runs on the record as read, and what
// it made of it is written unless the task changed meanwhile; then again,
// at most maxUpdateTries times.
func (t *Tasks) Update(ctx context.Context, id string, f func(*tasks.Record) error) (*tasks.Record, error) {
	for try := range maxUpdateTries {
		if err := retryWait(ctx, try); err != nil {
			return nil, err
		}
		r, version, err := t.load(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := f(r); err != nil {
			return nil, err
		}
		r.ID = id
		ok, err := t.write(ctx, r, version)
		if err != nil {
			return nil, err
		}
		if ok {
			return r, nil
		}
	}
	return nil, ErrTaskContention
}

// sweepBatch bounds the tasks one round trip of Sweep deletes.
const sweepBatch = 1000

// KEYS: index. ARGV: now ms, the records' key prefix, batch.
var sweepTasksScript = goredis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
	redis.call('DEL', ARGV[2] .. id)
	redis.call('ZREM', KEYS[1], id)
end
return #ids
`)

// Sweep implements tasks.Store. Redis forgets an expired task by itself;
// Sweep removes the tasks that expired before now from the index that
// bounds their count.
func (t *Tasks) Sweep(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n, err := sweepTasksScript.Run(ctx, t.s.c, []string{t.idxKey()}, now.UnixMilli(), t.s.key("t", ""), sweepBatch).Int()
		if err != nil {
			return total, wrap(err)
		}
		total += n
		if n < sweepBatch {
			return total, nil
		}
	}
}
