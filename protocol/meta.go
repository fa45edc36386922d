package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Reserved _meta keys.
const (
	MetaProgressToken      = "progressToken"
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// ProgressToken associates progress notifications with a request: a string
// or an integer, with the same rules as a JSON-RPC id.
type ProgressToken = jsonrpc.ID

// RequestMeta is the _meta of a client request: the per-request protocol
// fields of revision 2026-07-28 plus trace context. Keys it does not name are
// kept in Extra.
//
// A client sends the same clientInfo and clientCapabilities with every
// request, and often the same _meta altogether, so UnmarshalJSON decodes
// each distinct encoding of those once and keeps the result privately;
// every request gets copies of its own, so what one handler changes no
// other request sees.
type RequestMeta struct {
	ProgressToken      *ProgressToken      `json:"progressToken,omitempty"`
	ProtocolVersion    string              `json:"io.modelcontextprotocol/protocolVersion,omitempty"`
	ClientInfo         *Implementation     `json:"io.modelcontextprotocol/clientInfo,omitempty"`
	ClientCapabilities *ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities,omitempty"`
	LogLevel           LoggingLevel        `json:"io.modelcontextprotocol/logLevel,omitempty"`
	Traceparent        string              `json:"traceparent,omitempty"`
	Tracestate         string              `json:"tracestate,omitempty"`
	Baggage            string              `json:"baggage,omitempty"`
	// Extra holds the keys not named above, as received.
	Extra map[string]json.RawMessage `json:"-"`
}

type requestMetaFields RequestMeta

var requestMetaKeys = map[string]bool{
	MetaProgressToken: true, MetaProtocolVersion: true, MetaClientInfo: true,
	MetaClientCapabilities: true, MetaLogLevel: true,
	"traceparent": true, "tracestate": true, "baggage": true,
}

// MarshalJSON encodes the named fields followed by Extra.
func (m RequestMeta) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(requestMetaFields(m))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, m.Extra, requestMetaKeys)
}

// UnmarshalJSON decodes the named fields and keeps the rest in Extra. Keys
// are matched exactly, and b is read with the policy of jsonrpc.Unmarshal
// (repeated names and invalid UTF-8 refused). It is written by hand, on
// jsonrpc.EachMember, because it runs on every request a server serves.
func (m *RequestMeta) UnmarshalJSON(b []byte) error {
	switch firstNonSpace(b) {
	case 'n':
		if string(bytes.TrimSpace(b)) != "null" {
			return errors.New("_meta must be an object")
		}
		return nil // null leaves the value as it is, as for any field
	case '{':
	default:
		return errors.New("_meta must be an object")
	}
	if c := metaCache.get(b); c != nil {
		*m = RequestMeta{ProtocolVersion: c.ProtocolVersion, LogLevel: c.LogLevel}
		if c.ClientInfo != nil {
			m.ClientInfo = c.ClientInfo.clone()
		}
		if c.ClientCapabilities != nil {
			m.ClientCapabilities = c.ClientCapabilities.clone()
		}
		return nil
	}
	if err := m.decode(b); err != nil {
		return err
	}
	if m.ProgressToken == nil && m.Traceparent == "" && m.Tracestate == "" && m.Baggage == "" && m.Extra == nil {
		// Nothing in it is the request's own: the next request of the
		// client is likely to send the same bytes.
		c := &RequestMeta{ProtocolVersion: m.ProtocolVersion, LogLevel: m.LogLevel}
		if m.ClientInfo != nil {
			c.ClientInfo = m.ClientInfo.clone()
		}
		if m.ClientCapabilities != nil {
			c.ClientCapabilities = m.ClientCapabilities.clone()
		}
		metaCache.put(b, c)
	}
	return nil
}

// decode reads the object b into m.
func (m *RequestMeta) decode(b []byte) error {
	*m = RequestMeta{}
	str := func(key string, v []byte, dst *string) error {
		s, ok := jsonrpc.StringValue(v)
		if !ok {
			return errors.New(key + " must be a string")
		}
		*dst = s
		return nil
	}
	return jsonrpc.EachMember(b, func(key []byte, v jsontext.Value) error {
		switch string(key) {
		case MetaProtocolVersion:
			// Known revisions are interned (methods.go): no allocation.
			return str(MetaProtocolVersion, v, &m.ProtocolVersion)
		case MetaClientCapabilities:
			if string(v) == "null" {
				return nil
			}
			if c := capsCache.get(v); c != nil {
				m.ClientCapabilities = c.clone()
				return nil
			}
			c := &ClientCapabilities{}
			if string(v) != "{}" {
				if err := jsonrpc.Unmarshal(v, c); err != nil {
					return err
				}
			}
			capsCache.put(v, c)
			m.ClientCapabilities = c.clone()
		case MetaClientInfo:
			if string(v) == "null" {
				return nil
			}
			if c := infoCache.get(v); c != nil {
				m.ClientInfo = c.clone()
				return nil
			}
			c, err := decodeImplementation(v)
			if err != nil {
				return err
			}
			infoCache.put(v, c)
			m.ClientInfo = c.clone()
		case MetaLogLevel:
			var l string
			if err := str(MetaLogLevel, v, &l); err != nil {
				return err
			}
			m.LogLevel = LoggingLevel(l)
		case MetaProgressToken:
			if string(v) != "null" {
				t := &ProgressToken{}
				if err := t.UnmarshalJSON(v); err != nil {
					return err
				}
				m.ProgressToken = t
			}
		case "traceparent":
			return str("traceparent", v, &m.Traceparent)
		case "tracestate":
			return str("tracestate", v, &m.Tracestate)
		case "baggage":
			return str("baggage", v, &m.Baggage)
		default:
			if m.Extra == nil {
				m.Extra = make(map[string]json.RawMessage)
			}
			m.Extra[string(key)] = append(json.RawMessage(nil), v...)
		}
		return nil
	})
}

// decodeCache maps the encoding of a _meta member to its decoded value,
// which never leaves the cache: callers get clones. It holds at most
// decodeCacheSize entries of at most decodeCacheKey bytes; when full it
// starts over. The entry found last is compared first, without the lock
// or a hash: a client sends the same _meta with every request, and a
// request is looked up more than once on its way.
type decodeCache[T any] struct {
	last atomic.Pointer[cacheEntry[T]]
	mu   sync.RWMutex
	m    map[string]*cacheEntry[T]
}

type cacheEntry[T any] struct {
	key string
	v   *T
}

const (
	decodeCacheSize = 256
	decodeCacheKey  = 2048
)

var (
	capsCache decodeCache[ClientCapabilities]
	infoCache decodeCache[Implementation]
	metaCache decodeCache[RequestMeta]
)

// MetaVersion returns the protocolVersion member of a request's _meta
// object (raw JSON, which the caller has read whole with the policy of
// jsonrpc.Unmarshal, as jsonrpc.Decode does), or "" when it has none or
// is not an object. The _meta a client sends with every request is
// answered from the cache UnmarshalJSON keeps, without reading it again.
func MetaVersion(raw []byte) string {
	if c := metaCache.get(raw); c != nil {
		return c.ProtocolVersion
	}
	if firstNonSpace(raw) != '{' {
		return ""
	}
	var version string
	_ = jsonrpc.EachMember(raw, func(k []byte, v jsontext.Value) error {
		if string(k) != MetaProtocolVersion {
			return nil
		}
		version, _ = jsonrpc.StringValue(v)
		return errFound
	})
	return version
}

// errFound ends a reading that found what it looked for.
var errFound = errors.New("found")

func (c *decodeCache[T]) get(raw []byte) *T {
	if e := c.last.Load(); e != nil && e.key == string(raw) {
		return e.v
	}
	c.mu.RLock()
	e := c.m[string(raw)]
	c.mu.RUnlock()
	if e == nil {
		return nil
	}
	c.last.Store(e)
	return e.v
}

func (c *decodeCache[T]) put(raw []byte, v *T) {
	if len(raw) > decodeCacheKey {
		return
	}
	e := &cacheEntry[T]{key: string(raw), v: v}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= decodeCacheSize {
		c.m = make(map[string]*cacheEntry[T])
	}
	c.m[e.key] = e
	c.mu.Unlock()
	c.last.Store(e)
}

// ResultMeta is the _meta of a result. The server fills ServerInfo; on the
// closing result of subscriptions/listen SubscriptionID is set too.
type ResultMeta struct {
	ServerInfo     *Implementation `json:"io.modelcontextprotocol/serverInfo,omitempty"`
	SubscriptionID *jsonrpc.ID     `json:"io.modelcontextprotocol/subscriptionId,omitempty"`
	// Extra holds further keys, encoded after the named ones.
	Extra map[string]json.RawMessage `json:"-"`

	frozen []byte // the encoding, once Freeze was called
}

// Freeze precomputes the encoding of a ResultMeta that will not change
// again (a server's shared one), so that encoding it costs nothing. It
// returns m.
func (m *ResultMeta) Freeze() *ResultMeta {
	m.frozen = nil
	b, err := m.MarshalJSON()
	if err == nil {
		m.frozen = b
	}
	return m
}

// WithoutServerInfo returns the _meta without ServerInfo, for the shapes
// of revisions that do not define it: m itself when it has none, nil when
// nothing else is left.
func (m *ResultMeta) WithoutServerInfo() *ResultMeta {
	if m == nil || m.ServerInfo == nil {
		return m
	}
	if m.SubscriptionID == nil && len(m.Extra) == 0 {
		return nil
	}
	return &ResultMeta{SubscriptionID: m.SubscriptionID, Extra: m.Extra}
}

type resultMetaFields ResultMeta

var resultMetaKeys = map[string]bool{MetaServerInfo: true, MetaSubscriptionID: true}

// MarshalJSON encodes the named fields followed by Extra.
func (m ResultMeta) MarshalJSON() ([]byte, error) {
	if m.frozen != nil {
		return m.frozen, nil
	}
	b, err := json.Marshal(resultMetaFields(m))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, m.Extra, resultMetaKeys)
}

// UnmarshalJSON decodes the named fields and keeps the rest in Extra.
func (m *ResultMeta) UnmarshalJSON(b []byte) error {
	if err := jsonrpc.Unmarshal(b, (*resultMetaFields)(m)); err != nil {
		return err
	}
	extra, err := collectExtra(b, resultMetaKeys)
	m.Extra = extra
	return err
}

// NotificationMeta is the _meta of a notification; SubscriptionID is set on
// every notification delivered on a subscriptions/listen stream.
type NotificationMeta struct {
	SubscriptionID *jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId,omitempty"`
}

// Meta is free-form _meta on definitions and content blocks.
type Meta map[string]any

func appendExtra(b []byte, extra map[string]json.RawMessage, known map[string]bool) ([]byte, error) {
	if len(extra) == 0 {
		return b, nil
	}
	keys := sortedKeys(extra)
	b = b[:len(b)-1] // drop '}'
	first := len(b) == 1
	for _, k := range keys {
		if known[k] {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		kb, _ := json.Marshal(k)
		b = append(b, kb...)
		b = append(b, ':')
		v := extra[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// collectExtra returns the members of the object b whose keys are not in
// known; it allocates only when there are some.
func collectExtra(b []byte, known map[string]bool) (map[string]json.RawMessage, error) {
	if firstNonSpace(b) != '{' {
		return nil, nil
	}
	var extra map[string]json.RawMessage
	err := jsonrpc.EachMember(b, func(k []byte, v jsontext.Value) error {
		if known[string(k)] {
			return nil
		}
		if extra == nil {
			extra = make(map[string]json.RawMessage)
		}
		extra[string(k)] = append(json.RawMessage(nil), v...)
		return nil
	})
	return extra, err
}

// errNotSimple stops the quick reading of a clientInfo.
var errNotSimple = errors.New("not a simple clientInfo")

// decodeImplementation decodes clientInfo, reading the usual name, title
// and version members directly and anything richer with jsonrpc.Unmarshal.
func decodeImplementation(v []byte) (*Implementation, error) {
	c := &Implementation{}
	if firstNonSpace(v) != '{' {
		return nil, errors.New(MetaClientInfo + " must be an object")
	}
	err := jsonrpc.EachMember(v, func(key []byte, value jsontext.Value) error {
		var dst *string
		switch string(key) {
		case "name":
			dst = &c.Name
		case "version":
			dst = &c.Version
		case "title":
			dst = &c.Title
		default:
			return errNotSimple
		}
		s, ok := jsonrpc.StringValue(value)
		if !ok {
			return errNotSimple
		}
		*dst = s
		return nil
	})
	if err == nil {
		return c, nil
	}
	*c = Implementation{}
	if err := jsonrpc.Unmarshal(v, c); err != nil {
		return nil, err
	}
	return c, nil
}

// CopyTo sets *dst to a copy of m that shares nothing with it.
func (m *RequestMeta) CopyTo(dst *RequestMeta) {
	*dst = *m
	if m.ProgressToken != nil {
		t := *m.ProgressToken
		dst.ProgressToken = &t
	}
	if m.ClientInfo != nil || m.ClientCapabilities != nil {
		// One allocation for both: every request of a legacy session
		// carries a copy of what its client declared.
		both := new(struct {
			info Implementation
			caps ClientCapabilities
		})
		if m.ClientInfo != nil {
			m.ClientInfo.cloneTo(&both.info)
			dst.ClientInfo = &both.info
		}
		if m.ClientCapabilities != nil {
			m.ClientCapabilities.cloneTo(&both.caps)
			dst.ClientCapabilities = &both.caps
		}
	}
	if m.Extra != nil {
		dst.Extra = make(map[string]json.RawMessage, len(m.Extra))
		for k, v := range m.Extra {
			dst.Extra[k] = append(json.RawMessage(nil), v...)
		}
	}
}

// clone returns a copy of c that shares nothing with it.
func (c *ClientCapabilities) clone() *ClientCapabilities {
	out := new(ClientCapabilities)
	c.cloneTo(out)
	return out
}

// cloneTo sets *out to a copy of c that shares nothing with it.
func (c *ClientCapabilities) cloneTo(out *ClientCapabilities) {
	*out = ClientCapabilities{Experimental: cloneObjects(c.Experimental), Extensions: cloneObjects(c.Extensions), Tasks: cloneObject(c.Tasks)}
	if c.Roots != nil {
		r := *c.Roots
		out.Roots = &r
	}
	if c.Sampling != nil {
		out.Sampling = &SamplingCapability{Context: cloneObject(c.Sampling.Context), Tools: cloneObject(c.Sampling.Tools)}
	}
	if c.Elicitation != nil {
		out.Elicitation = &ElicitationCapability{Form: cloneObject(c.Elicitation.Form), URL: cloneObject(c.Elicitation.URL)}
	}
}

func cloneObjects(m map[string]Object) map[string]Object {
	if m == nil {
		return nil
	}
	out := make(map[string]Object, len(m))
	for k, v := range m {
		out[k] = cloneObject(v)
	}
	return out
}

func cloneObject(o Object) Object {
	if o == nil {
		return nil
	}
	out := make(Object, len(o))
	for k, v := range o {
		out[k] = append(json.RawMessage(nil), v...)
	}
	return out
}

// clone returns a copy of i that shares nothing with it.
func (i *Implementation) clone() *Implementation {
	out := new(Implementation)
	i.cloneTo(out)
	return out
}

// cloneTo sets *out to a copy of i that shares nothing with it.
func (i *Implementation) cloneTo(out *Implementation) {
	*out = *i
	if i.Icons != nil {
		out.Icons = make([]Icon, len(i.Icons))
		for n, ic := range i.Icons {
			ic.Sizes = append([]string(nil), ic.Sizes...)
			out.Icons[n] = ic
		}
	}
}
