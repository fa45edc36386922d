package client

import "time"

// SetCacheClock replaces the clock of c's result cache.
func SetCacheClock(c *Client, now func() time.Time) {
	c.cache.mu.Lock()
	c.cache.now = now
	c.cache.mu.Unlock()
}

// SetCacheKey changes the authorization context c caches private results
// under, as a client whose user changed would.
func SetCacheKey(c *Client, key string) { c.opts.CacheKey = key }
