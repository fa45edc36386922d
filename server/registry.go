package server

import (
	"context"
	"encoding/base64"
	"sort"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/protocol"
)

// registry holds named entries in a deterministic order (by key), so that
// every replica lists them alike and cursors stay valid across replicas.
type registry[T any] struct {
	byKey map[string]T
	keys  []string     // sorted
	n     atomic.Int32 // len(keys), for readers that hold no lock
}

func (g *registry[T]) len() int { return len(g.keys) }

// count is len without the registry's lock: a method's Offered check on
// every request reads it so.
func (g *registry[T]) count() int { return int(g.n.Load()) }

func (g *registry[T]) get(key string) (T, bool) {
	v, ok := g.byKey[key]
	return v, ok
}

// put adds or replaces an entry and reports whether it replaced one.
func (g *registry[T]) put(key string, v T) bool {
	if g.byKey == nil {
		g.byKey = make(map[string]T)
	}
	_, existed := g.byKey[key]
	g.byKey[key] = v
	if !existed {
		i := sort.SearchStrings(g.keys, key)
		g.keys = append(g.keys, "")
		copy(g.keys[i+1:], g.keys[i:])
		g.keys[i] = key
		g.n.Store(int32(len(g.keys)))
	}
	return existed
}

func (g *registry[T]) remove(key string) bool {
	if _, ok := g.byKey[key]; !ok {
		return false
	}
	delete(g.byKey, key)
	i := sort.SearchStrings(g.keys, key)
	g.keys = append(g.keys[:i], g.keys[i+1:]...)
	g.n.Store(int32(len(g.keys)))
	return true
}

// page returns the entries after cursor that keep accepts (all when keep
// is nil), at most size of them, and the cursor of the next page ("" at
// the end). A cursor names the last key of the previous page, so it
// survives additions and removals.
func (g *registry[T]) page(cursor string, size int, keep func(T) bool) ([]T, string, error) {
	start := 0
	if cursor != "" {
		after, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		start = sort.Search(len(g.keys), func(i int) bool { return g.keys[i] > after })
	}
	if keep == nil {
		end := len(g.keys)
		next := ""
		if size > 0 && end-start > size {
			end = start + size
			next = encodeCursor(g.keys[end-1])
		}
		out := make([]T, 0, end-start)
		for _, k := range g.keys[start:end] {
			out = append(out, g.byKey[k])
		}
		return out, next, nil
	}
	var out []T
	last := ""
	for _, k := range g.keys[start:] {
		v := g.byKey[k]
		if !keep(v) {
			continue
		}
		if size > 0 && len(out) == size {
			// One more entry to list: the page ends with the last one kept.
			return out, encodeCursor(last), nil
		}
		out = append(out, v)
		last = k
	}
	if out == nil {
		out = []T{}
	}
	return out, "", nil
}

const cursorPrefix = "k:"

func encodeCursor(lastKey string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + lastKey))
}

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < len(cursorPrefix) || string(b[:len(cursorPrefix)]) != cursorPrefix {
		return "", protocol.InvalidParams("invalid cursor")
	}
	return string(b[len(cursorPrefix):]), nil
}

func (s *Server) pageSize() int {
	if s.opts.PageSize > 0 {
		return s.opts.PageSize
	}
	return 100
}

var (
	defaultListCache = protocol.CacheHints{TTLMs: 60000, CacheScope: protocol.CachePublic}
	defaultReadCache = protocol.CacheHints{TTLMs: 0, CacheScope: protocol.CachePrivate}
)

func (s *Server) listCache() protocol.CacheHints {
	if s.opts.ListCache != nil {
		return *s.opts.ListCache
	}
	return defaultListCache
}

func (s *Server) discoverCache() protocol.CacheHints {
	if s.opts.DiscoverCache != nil {
		return *s.opts.DiscoverCache
	}
	return defaultListCache
}

func (s *Server) readCache() protocol.CacheHints {
	if s.opts.ReadCache != nil {
		return *s.opts.ReadCache
	}
	return defaultReadCache
}

// listPage serves one page of a list method: the entries after the
// request's cursor that the caller may use, mapped to their definitions,
// the next cursor, and the caching hints. Where authorization is in force
// and an entry looked at needs scopes, the page depends on the caller: its
// hints are then private.
func listPage[E scoped, D any](s *Server, r *Request, g *registry[E], def func(E) D) ([]D, string, protocol.CacheHints, error) {
	hints := s.listCache()
	cursor, err := r.cursorParam()
	if err != nil {
		return nil, "", hints, err
	}
	var keep func(E) bool
	restricted := false
	if r.authz {
		keep = func(e E) bool {
			need := e.needs()
			if len(need) == 0 {
				return true
			}
			restricted = true
			return r.permits(need)
		}
	}
	s.mu.RLock()
	entries, next, err := g.page(cursor, s.pageSize(), keep)
	s.mu.RUnlock()
	if err != nil {
		return nil, "", hints, err
	}
	if restricted {
		hints.CacheScope = protocol.CachePrivate
	}
	out := make([]D, len(entries))
	for i, e := range entries {
		out[i] = def(e)
	}
	return out, next, hints, nil
}

// guard calls a handler, turning a panic into an internal error naming
// what panicked (kind and name, joined only then), so that one bad
// handler cannot take the server down.
func guard[Req, Res any](s *Server, kind, name string, h func(context.Context, Req) (Res, error), ctx context.Context, req Req) (res Res, err error) {
	defer func() {
		if v := recover(); v != nil {
			what := kind + " " + name
			s.logger.Error("handler panicked", "handler", what, "panic", v)
			var zero Res
			res, err = zero, protocol.InternalError("internal error in "+what)
		}
	}()
	return h(ctx, req)
}
