package transport

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ParseHeaderParams finds the x-mcp-header annotations of a tool's input
// schema and checks them against the rules of revision 2026-07-28: a
// non-empty token name, unique regardless of case, on a string, integer or
// boolean property reachable from the root through "properties" alone. An
// annotation anywhere else makes the whole definition invalid.
func ParseHeaderParams(inputSchema json.RawMessage) ([]HeaderParam, error) {
	if len(inputSchema) == 0 {
		return nil, nil
	}
	var root any
	if err := jsonrpc.Unmarshal(inputSchema, &root); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	w := &headerWalker{seen: map[string]bool{}}
	w.walk(root, nil, true)
	if w.err != nil {
		return nil, w.err
	}
	sort.Slice(w.params, func(i, j int) bool { return w.params[i].Name < w.params[j].Name })
	return w.params, nil
}

type headerWalker struct {
	params []HeaderParam
	seen   map[string]bool
	err    error
}

// walk visits a subschema; path is its chain of properties names and
// reachable says whether that chain consists of properties keys only.
func (w *headerWalker) walk(node any, path []string, reachable bool) {
	if w.err != nil {
		return
	}
	switch n := node.(type) {
	case []any:
		for _, v := range n {
			w.walk(v, path, false)
		}
	case map[string]any:
		if v, ok := n["x-mcp-header"]; ok {
			w.annotation(n, v, path, reachable)
		}
		for k, v := range n {
			switch k {
			case "x-mcp-header":
			case "properties":
				props, ok := v.(map[string]any)
				if !ok {
					continue
				}
				for name, sub := range props {
					p := append(append([]string(nil), path...), name)
					w.walk(sub, p, reachable)
				}
			case "const", "enum", "default", "examples":
				// Values, not schemas.
			default:
				w.walk(v, path, false)
			}
		}
	}
}

func (w *headerWalker) annotation(n map[string]any, v any, path []string, reachable bool) {
	name, ok := v.(string)
	where := "/" + strings.Join(path, "/")
	switch {
	case !ok:
		w.err = fmt.Errorf("x-mcp-header at %s must be a string", where)
	case !reachable || len(path) == 0:
		w.err = fmt.Errorf("x-mcp-header %q at %s is not on a property reachable through properties alone", name, where)
	case !IsToken(name):
		w.err = fmt.Errorf("x-mcp-header %q at %s is not a valid HTTP header name token", name, where)
	case w.seen[strings.ToLower(name)]:
		w.err = fmt.Errorf("x-mcp-header %q is used twice (names are compared without case)", name)
	}
	if w.err != nil {
		return
	}
	typ, _ := n["type"].(string)
	switch typ {
	case "string", "integer", "boolean":
	default:
		w.err = fmt.Errorf("x-mcp-header %q at %s must annotate a string, integer or boolean property", name, where)
		return
	}
	w.seen[strings.ToLower(name)] = true
	w.params = append(w.params, HeaderParam{Name: name, Path: path, Type: typ})
}

// IsToken reports whether s is an RFC 9110 token (1*tchar), the syntax of
// HTTP field names.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Base64 sentinel of header values that are not plain visible ASCII.
const (
	SentinelPrefix = "=?base64?"
	SentinelSuffix = "?="
)

// EncodeHeaderValue encodes a header value as revision 2026-07-28 requires:
// as it is when it is plain visible ASCII, otherwise (non-ASCII, control
// characters, surrounding white space, or the look of the sentinel) as
// =?base64?{Base64 of the UTF-8}?=.
func EncodeHeaderValue(v string) string {
	safe := v == strings.TrimSpace(v)
	for i := 0; safe && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			safe = false
		}
	}
	if safe && !(strings.HasPrefix(v, SentinelPrefix) && strings.HasSuffix(v, SentinelSuffix)) {
		return v
	}
	return SentinelPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + SentinelSuffix
}
