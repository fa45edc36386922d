package protocol

// ResultType tells a client how to read a result.
type ResultType string

// Result types of revision 2026-07-28.
const (
	ResultComplete      ResultType = "complete"
	ResultInputRequired ResultType = "input_required"
)

// ResultHeader holds the members every result carries. Result types embed
// it; the server fills it before encoding.
type ResultHeader struct {
	// ResultType is set on every result of revision 2026-07-28; it is
	// empty, and left out, in the shapes of earlier revisions.
	ResultType ResultType  `json:"resultType,omitempty"`
	Meta       *ResultMeta `json:"_meta,omitempty"`
}

// Header returns the header, so the server can fill any result.
func (h *ResultHeader) Header() *ResultHeader { return h }

// Result is implemented by every result type (through ResultHeader).
type Result interface {
	Header() *ResultHeader
}

// CacheScope says who may reuse a cached result.
type CacheScope string

// Cache scopes.
const (
	CachePublic  CacheScope = "public"
	CachePrivate CacheScope = "private"
)

// CacheHints are the caching members of cacheable results.
type CacheHints struct {
	TTLMs      int64      `json:"ttlMs"`
	CacheScope CacheScope `json:"cacheScope"`
}

// Hints returns the hints, so the server can fill any cacheable result.
func (c *CacheHints) Hints() *CacheHints { return c }

// Cacheable is implemented by results that carry CacheHints.
type Cacheable interface {
	Hints() *CacheHints
}

// EmptyResult is a result with no members of its own.
type EmptyResult struct {
	ResultHeader
}
