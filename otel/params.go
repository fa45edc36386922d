package otel

import (
	"encoding/json"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// request is what a span and a metric describe of a message: read once
// from its params.
type request struct {
	method    string
	target    string // the tool or prompt name: the span name's target
	targetKey bool   // target is a prompt (gen_ai.prompt.name), not a tool
	uri       string
	version   string // _meta's protocol version (modern era)
	arguments jsontext.Value
	meta      metaCarrier
}

// metaCarrier carries the trace context members of _meta (SEP-414's
// unprefixed traceparent, tracestate and baggage) for a propagator.
type metaCarrier struct {
	traceparent, tracestate, baggage string
}

// Get implements propagation.TextMapCarrier.
func (c *metaCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	case "baggage":
		return c.baggage
	}
	return ""
}

// Set implements propagation.TextMapCarrier.
func (c *metaCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.traceparent = value
	case "tracestate":
		c.tracestate = value
	case "baggage":
		c.baggage = value
	}
}

// Keys implements propagation.TextMapCarrier.
func (c *metaCarrier) Keys() []string { return []string{"traceparent", "tracestate", "baggage"} }

func (c *metaCarrier) empty() bool {
	return c.traceparent == "" && c.tracestate == "" && c.baggage == ""
}

// maxContext bounds a trace context member read from a peer (W3C allows
// 512 list members in tracestate; baggage at most 8192 bytes).
const maxContext = 8192

var errStop = errors.New("stop")

// readRequest reads the members of a message's params that describe it.
// A malformed message yields what could be read; the server refuses it.
func readRequest(msg *jsonrpc.Message, withArguments bool) request {
	r := request{method: msg.Method}
	if len(msg.Params) == 0 || msg.Params[0] != '{' {
		return r
	}
	_ = msg.EachParam(func(k []byte, v jsontext.Value) error {
		switch string(k) {
		case "name":
			switch msg.Method {
			case protocol.MethodToolsCall:
				r.target, _ = jsonrpc.StringValue(v)
			case protocol.MethodPromptsGet:
				r.target, _ = jsonrpc.StringValue(v)
				r.targetKey = true
			}
		case "uri":
			switch msg.Method {
			case protocol.MethodResourcesRead, protocol.MethodResourcesSubscribe,
				protocol.MethodResourcesUnsubscribe, protocol.NotificationResourceUpdated:
				r.uri, _ = jsonrpc.StringValue(v)
			}
		case "arguments":
			if withArguments && msg.Method == protocol.MethodToolsCall {
				r.arguments = v
			}
		case "_meta":
			if v.Kind() == '{' {
				_ = jsonrpc.EachMember(v, func(k []byte, v jsontext.Value) error {
					var dst *string
					switch string(k) {
					case "traceparent":
						dst = &r.meta.traceparent
					case "tracestate":
						dst = &r.meta.tracestate
					case "baggage":
						dst = &r.meta.baggage
					case protocol.MetaProtocolVersion:
						dst = &r.version
					default:
						return nil
					}
					if s, ok := jsonrpc.StringValue(v); ok && len(s) <= maxContext {
						*dst = s
					}
					return nil
				})
			}
		}
		return nil
	})
	r.target = clip(r.target, maxName)
	r.uri = clip(r.uri, maxName*8)
	r.version = clip(r.version, 32)
	return r
}

// readCall reads what describes a client's call from its params (which
// carry no _meta).
func readCall(method string, params json.RawMessage, withArguments bool) request {
	msg := jsonrpc.Message{Method: method, Params: params}
	return readRequest(&msg, withArguments)
}

// isToolError reports whether a tools/call result has isError true.
func isToolError(result []byte) bool {
	if len(result) == 0 || result[0] != '{' {
		return false
	}
	isErr := false
	_ = jsonrpc.EachMember(result, func(k []byte, v jsontext.Value) error {
		if string(k) == "isError" {
			isErr = string(v) == "true"
			return errStop
		}
		return nil
	})
	return isErr
}
