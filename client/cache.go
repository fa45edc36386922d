package client

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// cacheable are the methods whose complete results carry caching hints.
var cacheable = map[string]bool{
	protocol.MethodDiscover: true, protocol.MethodToolsList: true, protocol.MethodPromptsList: true,
	protocol.MethodResourcesList: true, protocol.MethodResourceTemplatesList: true, protocol.MethodResourcesRead: true,
}

// cache keeps results for as long as their ttlMs allows. Keys are the
// method and the salient params (without _meta); private results are kept
// under the authorization context as well, and served only for it.
type cache struct {
	mu      sync.Mutex
	entries map[string]cacheEntry
	now     func() time.Time
}

type cacheEntry struct {
	raw     json.RawMessage
	expires time.Time
}

func newCache() *cache { return &cache{entries: map[string]cacheEntry{}, now: time.Now} }

// cacheKey is the key of a public result: the session's target (or the
// session itself, without a target key), the method and the params.
func (s *Session) cacheKey(method string, params json.RawMessage) string {
	return "public\x00" + s.cacheNS + "\x00" + method + "\x00" + canonical(params)
}

// privateKey is the key of a private result: the public key within the
// authorization context.
func (s *Session) privateKey(method string, params json.RawMessage) string {
	return "private\x00" + s.c.opts.CacheKey + "\x00" + s.cacheNS + "\x00" + method + "\x00" + canonical(params)
}

func canonical(params json.RawMessage) string {
	if len(params) == 0 {
		return "{}"
	}
	var v any
	if jsonrpc.Unmarshal(params, &v) != nil {
		return string(params)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (c *cache) get(key string) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if ok && c.now().Before(e.expires) {
		return e.raw, true
	}
	return nil, false
}

// put caches a result under key per its ttlMs.
func (c *cache) put(key string, raw json.RawMessage) {
	var h struct {
		TTLMs *int64 `json:"ttlMs"`
	}
	if jsonrpc.Unmarshal(raw, &h) != nil || h.TTLMs == nil || *h.TTLMs <= 0 {
		return
	}
	c.mu.Lock()
	c.entries[key] = cacheEntry{raw: raw, expires: c.now().Add(time.Duration(*h.TTLMs) * time.Millisecond)}
	c.mu.Unlock()
}

// putResult caches a result under the public or the private key, as its
// cacheScope says.
func (c *cache) putResult(public, private string, raw json.RawMessage) {
	var r struct {
		CacheScope protocol.CacheScope `json:"cacheScope"`
	}
	_ = jsonrpc.Unmarshal(raw, &r)
	if r.CacheScope == protocol.CachePrivate {
		c.put(private, raw)
		return
	}
	c.put(public, raw)
}

// lookup returns a fresh result for the request, public or private.
func (s *Session) lookup(method string, params json.RawMessage) (json.RawMessage, bool) {
	if raw, ok := s.c.cache.get(s.cacheKey(method, params)); ok {
		return raw, true
	}
	return s.c.cache.get(s.privateKey(method, params))
}

// drop removes the entries of method (and, for resources/read, of uri).
func (c *cache) drop(method, uri string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		parts := strings.Split(k, "\x00")
		m := parts[len(parts)-2]
		if m != method {
			continue
		}
		if uri != "" {
			var p struct {
				URI string `json:"uri"`
			}
			if jsonrpc.Unmarshal([]byte(parts[len(parts)-1]), &p) != nil || p.URI != uri {
				continue
			}
		}
		delete(c.entries, k)
	}
}

// invalidate drops what a change notification makes stale.
func (s *Session) invalidate(msg *jsonrpc.Message) {
	if s.c.cache == nil {
		return
	}
	switch msg.Method {
	case protocol.NotificationToolListChanged:
		s.c.cache.drop(protocol.MethodToolsList, "")
	case protocol.NotificationPromptListChanged:
		s.c.cache.drop(protocol.MethodPromptsList, "")
	case protocol.NotificationResourceListChanged:
		s.c.cache.drop(protocol.MethodResourcesList, "")
		s.c.cache.drop(protocol.MethodResourceTemplatesList, "")
	case protocol.NotificationResourceUpdated:
		var p protocol.ResourceUpdatedParams
		if jsonrpc.Unmarshal(msg.Params, &p) == nil {
			s.c.cache.drop(protocol.MethodResourcesRead, p.URI)
		}
	}
}
