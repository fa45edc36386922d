package streamable

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Header names of revision 2026-07-28.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
)

// checkHeaders validates the request metadata headers against the body.
// Required _meta members are checked by the server core, after this: a
// header is compared with the body only where the body has the value.
func (x *Handler) checkHeaders(h http.Header, msg *jsonrpc.Message) *jsonrpc.Error {
	version, ok := headerValue(h, HeaderProtocolVersion)
	if !ok {
		return protocol.HeaderMismatch("missing " + HeaderProtocolVersion + " header")
	}
	var meta []byte
	if len(msg.Params) > 0 {
		var ambiguous bool
		if meta, ambiguous = member(msg.Params, "_meta"); ambiguous {
			return ambiguousMember("_meta")
		}
	}
	if meta != nil {
		raw, ambiguous := member(meta, protocol.MetaProtocolVersion)
		if ambiguous {
			return ambiguousMember("_meta " + protocol.MetaProtocolVersion)
		}
		if raw != nil {
			var bodyVersion string
			if json.Unmarshal(raw, &bodyVersion) == nil && bodyVersion != version {
				return protocol.HeaderMismatch(HeaderProtocolVersion + " header value '" + version + "' does not match _meta " + protocol.MetaProtocolVersion + " '" + bodyVersion + "'")
			}
		}
	}
	method, ok := headerValue(h, HeaderMethod)
	if !ok {
		return protocol.HeaderMismatch("missing " + HeaderMethod + " header")
	}
	if method != msg.Method {
		return protocol.HeaderMismatch(HeaderMethod + " header value '" + method + "' does not match body method '" + msg.Method + "'")
	}
	param := protocol.NameParam(msg.Method)
	if param == "" {
		return nil
	}
	raw, ok := headerValue(h, HeaderName)
	if !ok {
		return protocol.HeaderMismatch("missing " + HeaderName + " header for " + msg.Method)
	}
	name, err := decodeHeaderValue(raw)
	if err != nil {
		return protocol.HeaderMismatch(HeaderName + " header: " + err.Error())
	}
	var bodyName string
	if len(msg.Params) > 0 {
		v, ambiguous := member(msg.Params, param)
		if ambiguous {
			return ambiguousMember(param)
		}
		if v != nil {
			_ = json.Unmarshal(v, &bodyName)
		}
	}
	if name != bodyName {
		return protocol.HeaderMismatch(HeaderName + " header value '" + name + "' does not match body value '" + bodyName + "'")
	}
	if msg.Method == protocol.MethodToolsCall && x.params != nil {
		if ps := x.params.ParamHeaders(bodyName); len(ps) > 0 {
			args, ambiguous := member(msg.Params, "arguments")
			if ambiguous {
				return ambiguousMember("arguments")
			}
			return checkParamHeaders(h, ps, args)
		}
	}
	return nil
}

// member returns the value of obj's member key as encoding/json decodes
// it into a field of that name, and reports whether obj is ambiguous about
// it: the key present more than once, or also spelt in another case.
// Decoders resolve such objects differently (first or last, exact or
// case-folded), so the value checked against a header could differ from
// the value served; ambiguous bodies are refused instead.
func member(obj []byte, key string) (value []byte, ambiguous bool) {
	n := 0
	_ = jsonrpc.RawMembers(obj, func(k, v []byte) bool {
		if len(k) == len(key) && bytes.EqualFold(k, []byte(key)) {
			n++
			value = v
		}
		return true
	})
	return value, n > 1
}

func ambiguousMember(name string) *jsonrpc.Error {
	return protocol.HeaderMismatch("the request body has more than one member " + name + " (keys compared without case)")
}

// headerValue returns a header's value with surrounding optional white
// space removed; a header that is present more than once is joined as
// HTTP does.
func headerValue(h http.Header, name string) (string, bool) {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	v := vs[0]
	if len(vs) > 1 {
		v = strings.Join(vs, ",")
	}
	return strings.Trim(v, " \t"), true
}

const (
	sentinelPrefix = transport.SentinelPrefix
	sentinelSuffix = transport.SentinelSuffix
)

// decodeHeaderValue undoes the Base64 sentinel encoding
// (=?base64?...?=) and rejects characters a header value may not carry.
func decodeHeaderValue(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f || c >= 0x80 {
			return "", errInvalidChars
		}
	}
	if len(v) >= len(sentinelPrefix)+len(sentinelSuffix) && strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
		if err != nil {
			return "", errBadBase64
		}
		return string(b), nil
	}
	return v, nil
}

type headerError string

func (e headerError) Error() string { return string(e) }

const (
	errInvalidChars = headerError("value contains characters not allowed in a header")
	errBadBase64    = headerError("invalid Base64 in =?base64?...?= value")
)

// checkParamHeaders compares each mirrored tool parameter with its
// Mcp-Param-{Name} header.
func checkParamHeaders(h http.Header, params []transport.HeaderParam, args []byte) *jsonrpc.Error {
	for _, p := range params {
		header := HeaderParamPrefix + p.Name
		value, ambiguous := lookupPath(args, p.Path)
		if ambiguous {
			return ambiguousMember("arguments." + strings.Join(p.Path, "."))
		}
		present := value != nil && string(value) != "null"
		raw, has := headerValue(h, header)
		if !present {
			if has {
				return protocol.HeaderMismatch(header + " header is set but the argument is absent")
			}
			continue
		}
		if !has {
			return protocol.HeaderMismatch("missing " + header + " header for argument " + strings.Join(p.Path, "."))
		}
		got, err := decodeHeaderValue(raw)
		if err != nil {
			return protocol.HeaderMismatch(header + " header: " + err.Error())
		}
		if !paramMatches(p.Type, got, value) {
			return protocol.HeaderMismatch(header + " header value '" + got + "' does not match the argument")
		}
	}
	return nil
}

func lookupPath(obj []byte, path []string) (value []byte, ambiguous bool) {
	for _, k := range path {
		if len(obj) == 0 || obj[0] != '{' {
			return nil, false
		}
		if obj, ambiguous = member(obj, k); ambiguous {
			return nil, true
		}
	}
	return obj, false
}

// paramMatches compares a decoded header value with the JSON argument:
// strings exactly, integers numerically, booleans as true/false. A number
// header must be written as a JSON number (decimal), so that forms such as
// 0x2A or 4_2 that only some readers take for 42 do not match.
func paramMatches(typ, header string, value []byte) bool {
	switch value[0] {
	case '"':
		var s string
		return json.Unmarshal(value, &s) == nil && s == header
	case 't', 'f':
		return string(value) == header
	default:
		if header == "" || (header[0] != '-' && (header[0] < '0' || header[0] > '9')) || !json.Valid([]byte(header)) {
			return false
		}
		a, ok1 := new(big.Float).SetString(header)
		b, ok2 := new(big.Float).SetString(string(value))
		return ok1 && ok2 && a.Cmp(b) == 0
	}
}
