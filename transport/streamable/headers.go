package streamable

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

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
	param := protocol.NameParam(msg.Method)
	var body bodyMembers
	if len(msg.Params) > 0 {
		var amb string
		if body, amb = scanBody(msg, param); amb != "" {
			return ambiguousMember(amb)
		}
	}
	if body.meta != nil {
		raw, ambiguous := member(body.meta, protocol.MetaProtocolVersion)
		if ambiguous {
			return ambiguousMember("_meta " + protocol.MetaProtocolVersion)
		}
		if raw != nil && raw[0] == '"' && !jsonStringIs(raw, version) {
			bodyVersion, _ := jsonrpc.StringValue(raw)
			return protocol.HeaderMismatch(HeaderProtocolVersion + " header value '" + version + "' does not match _meta " + protocol.MetaProtocolVersion + " '" + bodyVersion + "'")
		}
	}
	method, ok := headerValue(h, HeaderMethod)
	if !ok {
		return protocol.HeaderMismatch("missing " + HeaderMethod + " header")
	}
	if method != msg.Method {
		return protocol.HeaderMismatch(HeaderMethod + " header value '" + method + "' does not match body method '" + msg.Method + "'")
	}
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
	if !jsonStringIs(body.name, name) && !(body.name == nil && name == "") {
		bodyName, _ := jsonrpc.StringValue(body.name)
		return protocol.HeaderMismatch(HeaderName + " header value '" + name + "' does not match body value '" + bodyName + "'")
	}
	if msg.Method == protocol.MethodToolsCall {
		if ps := x.h.ParamHeaders(name); len(ps) > 0 {
			return checkParamHeaders(h, ps, body.arguments)
		}
	}
	return nil
}

// bodyMembers are the params members the header checks compare.
type bodyMembers struct {
	meta, name, arguments []byte
}

// scanBody finds, in one pass, the members of params the headers mirror:
// _meta, the Mcp-Name source (nameKey) and arguments. Names are matched
// exactly, as the server reads them (a "NAME" member is not the "name" a
// header mirrors, and the server ignores it too). A member present more
// than once is reported (by name) as ambiguous: readers of the body could
// disagree about its value. (jsonrpc.Decode has refused such bodies
// already; this holds for any params.) Params that are not an object have
// none of these members.
func scanBody(msg *jsonrpc.Message, nameKey string) (bodyMembers, string) {
	var b bodyMembers
	err := msg.EachParam(func(k []byte, v jsontext.Value) error {
		switch {
		case string(k) == "_meta":
			b.meta = v
		case nameKey != "" && string(k) == nameKey:
			b.name = v
		case string(k) == "arguments":
			b.arguments = v
		}
		return nil
	})
	if name, dup := repeated(err); dup {
		return bodyMembers{}, name
	}
	return b, ""
}

// repeated reports whether err is the refusal of a repeated member name,
// and the name.
func repeated(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	var se *jsonrpc.SyntaxError
	if errors.As(err, &se) && se.Duplicate {
		return se.Member, true
	}
	return "", false
}

// jsonStringIs reports whether raw (a JSON value) is the string s, reading
// it as the server's decoder does, without allocating in the usual case.
func jsonStringIs(raw []byte, s string) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner) == s
	}
	v, ok := jsonrpc.StringValue(raw)
	return ok && v == s
}

// member returns the value of obj's member key, matched exactly as the
// server reads it, and reports whether obj is ambiguous about it: a name
// repeated in it. Decoders resolve such objects differently (first or
// last), so the value checked against a header could differ from the
// value served; ambiguous bodies are refused instead. obj is a value of
// the params, which jsonrpc.Decode (or EachParam) checked whole, so no
// name is repeated in it: the reading stops at the member, which is the
// only one of its name, and reports a repeated name only when one comes
// before it.
func member(obj []byte, key string) (value []byte, ambiguous bool) {
	err := jsonrpc.EachMember(obj, func(k []byte, v jsontext.Value) error {
		if string(k) == key {
			value = v
			return errFound
		}
		return nil
	})
	if err == errFound {
		return value, false
	}
	_, dup := repeated(err)
	return nil, dup
}

// errFound stops the reading of an object at the member sought.
var errFound = errors.New("found")

// paramString returns the string member key of the params object.
func paramString(params []byte, key string) (string, bool) {
	v, _ := member(params, key)
	return jsonrpc.StringValue(v)
}

func ambiguousMember(name string) *jsonrpc.Error {
	return protocol.HeaderMismatch("the request body has more than one member " + name)
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
		return jsonrpc.Unmarshal(value, &s) == nil && s == header
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
