package redis

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// Sessions returns the legacy.SessionStore kept in Redis. A session is a
// hash (its identity, its state, its generation, its feed cursor, its last
// use and time to live), a list for its outbox and a list of the
// elicitationIds it was sent; all three expire together the session's
// idle timeout after its last use, which every Touch moves on.
func (s *Store) Sessions() *Sessions { return &Sessions{s: s, MaxOutbox: 256} }

// Sessions is the legacy.SessionStore of a Store.
type Sessions struct {
	s *Store
	// MaxOutbox bounds a session's outbox; the oldest messages are
	// dropped beyond it.
	MaxOutbox int
}

var _ legacy.SessionStore = (*Sessions)(nil)

func (ss *Sessions) keys(id string) []string {
	return []string{ss.s.key("s", id), ss.s.key("o", id), ss.s.key("e", id)}
}

// identity is the part of a record that never changes.
type identity struct {
	Version      string                       `json:"v"`
	Capabilities *protocol.ClientCapabilities `json:"c,omitempty"`
	ClientInfo   *protocol.Implementation     `json:"ci,omitempty"`
	Principal    string                       `json:"p,omitempty"`
}

// state is the part Update writes (the scripts read it with cjson).
type state struct {
	Initialized   bool                  `json:"i"`
	LogLevel      protocol.LoggingLevel `json:"l,omitempty"`
	Subscriptions []string              `json:"s"`
}

func encodeState(r *legacy.SessionRecord) string {
	subs := r.Subscriptions
	if subs == nil {
		subs = []string{}
	}
	b, _ := json.Marshal(state{Initialized: r.Initialized, LogLevel: r.LogLevel, Subscriptions: subs})
	return string(b)
}

func now() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }

// Create stores a new record.
func (ss *Sessions) Create(ctx context.Context, rec *legacy.SessionRecord, ttl time.Duration) error {
	id, err := json.Marshal(identity{rec.Version, rec.Capabilities, rec.ClientInfo, rec.Principal})
	if err != nil {
		return err
	}
	rec.LastUsed = time.Now()
	k := ss.keys(rec.ID)
	ms := max(ttl.Milliseconds(), 1)
	_, err = ss.s.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, k[0], "i", id, "st", encodeState(rec), "g", rec.Generation, "c", rec.Cursor,
			"u", rec.LastUsed.UnixMilli(), "t", ms)
		p.PExpire(ctx, k[0], time.Duration(ms)*time.Millisecond)
		return nil
	})
	return wrap(err)
}

var touchScript = goredis.NewScript(`
local t = redis.call('HGET', KEYS[1], 't')
if not t then return false end
redis.call('HSET', KEYS[1], 'u', ARGV[1])
redis.call('PEXPIRE', KEYS[1], t)
redis.call('PEXPIRE', KEYS[2], t)
redis.call('PEXPIRE', KEYS[3], t)
if ARGV[2] == '1' then return 1 end
return redis.call('HMGET', KEYS[1], 'i', 'st', 'g', 'c', 'u')
`)

// Touch returns the record, marked used now: one round trip.
func (ss *Sessions) Touch(ctx context.Context, id string) (*legacy.SessionRecord, error) {
	v, err := touchScript.Run(ctx, ss.s.c, ss.keys(id), now(), "0").Slice()
	if errors.Is(err, goredis.Nil) {
		return nil, legacy.ErrNoSession
	}
	if err != nil {
		return nil, wrap(err)
	}
	if len(v) != 5 {
		return nil, errors.New("redis: malformed session record")
	}
	str := func(i int) string { x, _ := v[i].(string); return x }
	var idn identity
	var st state
	if json.Unmarshal([]byte(str(0)), &idn) != nil || json.Unmarshal([]byte(str(1)), &st) != nil {
		return nil, errors.New("redis: malformed session record")
	}
	gen, _ := strconv.ParseInt(str(2), 10, 64)
	used, _ := strconv.ParseInt(str(4), 10, 64)
	return &legacy.SessionRecord{
		ID: id, Version: idn.Version, Capabilities: idn.Capabilities, ClientInfo: idn.ClientInfo,
		Principal: idn.Principal, Initialized: st.Initialized, LogLevel: st.LogLevel,
		Subscriptions: st.Subscriptions, Generation: gen, LastUsed: time.UnixMilli(used), Cursor: str(3),
	}, nil
}

var updateScript = goredis.NewScript(`
local g = redis.call('HGET', KEYS[1], 'g')
if not g then return -1 end
if g ~= ARGV[1] then return -2 end
local n = redis.call('HINCRBY', KEYS[1], 'g', 1)
redis.call('HSET', KEYS[1], 'st', ARGV[2])
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'c', ARGV[4]) end
return n
`)

// Update writes rec's state over the stored record at rec.Generation.
func (ss *Sessions) Update(ctx context.Context, rec *legacy.SessionRecord, start bool) error {
	st := "0"
	if start {
		st = "1"
	}
	n, err := updateScript.Run(ctx, ss.s.c, ss.keys(rec.ID)[:1], rec.Generation, encodeState(rec), st, rec.Cursor).Int64()
	switch {
	case err != nil:
		return wrap(err)
	case n == -1:
		return legacy.ErrNoSession
	case n == -2:
		return legacy.ErrConflict
	}
	rec.Generation = n
	return nil
}

var deleteScript = goredis.NewScript(`
local es = redis.call('LRANGE', KEYS[3], 0, -1)
for _, x in ipairs(es) do redis.call('SREM', ARGV[2] .. 'E:' .. x, ARGV[1]) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
`)

// Delete forgets the session.
func (ss *Sessions) Delete(ctx context.Context, id string) error {
	return wrap(deleteScript.Run(ctx, ss.s.c, ss.keys(id), id, ss.s.prefix).Err())
}

// Refresh reports which sessions exist, marking them used with touch: one
// round trip for all of ids.
func (ss *Sessions) Refresh(ctx context.Context, ids []string, touch bool) ([]bool, error) {
	cmds := make([]goredis.Cmder, len(ids))
	_, err := pipelinedScript(ctx, ss.s.c, touchScript, func(p goredis.Pipeliner) error {
		t := now()
		for i, id := range ids {
			if touch {
				cmds[i] = touchScript.Run(ctx, p, ss.keys(id), t, "1")
			} else {
				cmds[i] = p.Exists(ctx, ss.keys(id)[0])
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, wrap(err)
	}
	out := make([]bool, len(ids))
	for i, c := range cmds {
		switch c := c.(type) {
		case *goredis.Cmd:
			out[i] = c.Err() == nil
		case *goredis.IntCmd:
			out[i] = c.Val() == 1
		}
	}
	return out, nil
}

var applyScript = goredis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'st', 'c', 't')
if not v[1] then return 0 end
local st = cjson.decode(v[1])
if not st.i then return 0 end
if v[2] and v[2] >= ARGV[1] then return 2 end
redis.call('HSET', KEYS[1], 'c', ARGV[1])
if ARGV[2] ~= '' then
  local ok = false
  if type(st.s) == 'table' then
    for _, u in ipairs(st.s) do if u == ARGV[2] then ok = true break end end
  end
  if not ok then return 0 end
end
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[4]), -1)
redis.call('PEXPIRE', KEYS[2], v[3])
return 1
`)

// Apply applies c to the sessions of ids: one round trip for all of them.
func (ss *Sessions) Apply(ctx context.Context, c legacy.Change, ids []string) ([]legacy.Applied, error) {
	cmds := make([]*goredis.Cmd, len(ids))
	_, err := pipelinedScript(ctx, ss.s.c, applyScript, func(p goredis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = applyScript.Run(ctx, p, ss.keys(id)[:2], c.ID, c.URI, c.Message, ss.MaxOutbox)
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err)
	}
	out := make([]legacy.Applied, len(ids))
	for i, cmd := range cmds {
		n, _ := cmd.Int64()
		switch n {
		case 1:
			out[i] = legacy.Queued
		case 2:
			out[i] = legacy.Stale
		}
	}
	return out, nil
}

var pushScript = goredis.NewScript(`
local t = redis.call('HGET', KEYS[1], 't')
if not t then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[2], t)
return 1
`)

// Push queues msg in the session's outbox.
func (ss *Sessions) Push(ctx context.Context, id string, msg []byte) error {
	n, err := pushScript.Run(ctx, ss.s.c, ss.keys(id)[:2], msg, ss.MaxOutbox).Int64()
	if err != nil {
		return wrap(err)
	}
	if n == 0 {
		return legacy.ErrNoSession
	}
	return nil
}

// Pop takes the oldest message of the session's outbox.
func (ss *Sessions) Pop(ctx context.Context, id string) ([]byte, error) {
	b, err := ss.s.c.LPop(ctx, ss.keys(id)[1]).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	return b, wrap(err)
}

var addElicitScript = goredis.NewScript(`
local t = redis.call('HGET', KEYS[1], 't')
if not t then return -1 end
if redis.call('LPOS', KEYS[2], ARGV[2]) then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
if redis.call('LLEN', KEYS[2]) > tonumber(ARGV[4]) then
  local old = redis.call('LPOP', KEYS[2])
  redis.call('SREM', ARGV[3] .. 'E:' .. old, ARGV[1])
end
redis.call('PEXPIRE', KEYS[2], t)
local ek = ARGV[3] .. 'E:' .. ARGV[2]
redis.call('SADD', ek, ARGV[1])
if redis.call('PTTL', ek) < tonumber(t) then redis.call('PEXPIRE', ek, t) end
return 1
`)

// AddElicitation records that the session was sent elicitationID.
func (ss *Sessions) AddElicitation(ctx context.Context, id, elicitationID string) error {
	k := ss.keys(id)
	n, err := addElicitScript.Run(ctx, ss.s.c, []string{k[0], k[2]}, id, elicitationID, ss.s.prefix, legacy.MaxElicitations).Int64()
	if err != nil {
		return wrap(err)
	}
	if n == -1 {
		return legacy.ErrNoSession
	}
	return nil
}

var takeElicitScript = goredis.NewScript(`
local ek = ARGV[2] .. 'E:' .. ARGV[1]
local ids = redis.call('SMEMBERS', ek)
redis.call('DEL', ek)
local live = {}
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[2] .. 's:' .. id) == 1 then
    redis.call('LREM', ARGV[2] .. 'e:' .. id, 0, ARGV[1])
    table.insert(live, id)
  end
end
return live
`)

// TakeElicitation returns and forgets the sessions sent elicitationID.
func (ss *Sessions) TakeElicitation(ctx context.Context, elicitationID string) ([]string, error) {
	ids, err := takeElicitScript.Run(ctx, ss.s.c, nil, elicitationID, ss.s.prefix).StringSlice()
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	return ids, wrap(err)
}

var forgetElicitScript = goredis.NewScript(`
local n = redis.call('LREM', KEYS[1], 0, ARGV[2])
if n > 0 then redis.call('SREM', ARGV[3] .. 'E:' .. ARGV[2], ARGV[1]) end
return n
`)

// ForgetElicitation forgets elicitationID for the session.
func (ss *Sessions) ForgetElicitation(ctx context.Context, id, elicitationID string) (bool, error) {
	n, err := forgetElicitScript.Run(ctx, ss.s.c, ss.keys(id)[2:], id, elicitationID, ss.s.prefix).Int64()
	return n > 0, wrap(err)
}

// HasElicitation reports whether the session was sent elicitationID.
func (ss *Sessions) HasElicitation(ctx context.Context, id, elicitationID string) (bool, error) {
	_, err := ss.s.c.LPos(ctx, ss.keys(id)[2], elicitationID, goredis.LPosArgs{}).Result()
	if errors.Is(err, goredis.Nil) {
		return false, nil
	}
	return err == nil, wrap(err)
}

// pipelinedScript runs fn's commands in one round trip. EVALSHA in a
// pipeline does not fall back to EVAL, so a Redis that does not know the
// script yet (it restarted, say) gets it loaded and the pipeline again.
func pipelinedScript(ctx context.Context, c *goredis.Client, sc *goredis.Script, fn func(goredis.Pipeliner) error) ([]goredis.Cmder, error) {
	cmds, err := c.Pipelined(ctx, fn)
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		if lerr := sc.Load(ctx, c).Err(); lerr != nil {
			return nil, lerr
		}
		cmds, err = c.Pipelined(ctx, fn)
	}
	return cmds, err
}
