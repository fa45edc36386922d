package otel

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// outKey names a server-to-client request: its session and id.
type outKey struct {
	session string
	id      string
}

// maxOutgoing bounds the server-to-client requests one request may have
// waiting with a span (the legacy adapter asks one at a time).
const maxOutgoing = 64

// outgoing is the Notifier a legacy session's request is served with: it
// gives each request the server sends the client (elicitation/create,
// sampling/createMessage, roots/list) a CLIENT span inside the request's
// span, with its trace context in the request's _meta. The client's answer
// (through Receive) ends the span; the request's end ends those left.
type outgoing struct {
	t       *Telemetry
	n       transport.Notifier
	ctx     context.Context
	session string
	version string
	conn    conn

	mu   sync.Mutex
	keys []outKey
	done bool
}

// Notify implements transport.Notifier.
func (o *outgoing) Notify(msg []byte) error {
	if !bytes.Contains(msg, []byte(`"id"`)) {
		return o.n.Notify(msg) // a notification
	}
	m, err := jsonrpc.Decode(msg)
	if err != nil || !m.IsRequest() {
		return o.n.Notify(msg)
	}
	o.mu.Lock()
	if o.done || len(o.keys) >= maxOutgoing {
		o.mu.Unlock()
		return o.n.Notify(msg)
	}
	key := outKey{o.session, m.ID.String()}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, keyMethod.String(m.Method), keyRequestID.String(m.ID.String()), keySessionID.String(o.session))
	if o.version != "" {
		attrs = append(attrs, keyProtocolVersion.String(o.version))
	}
	attrs = o.conn.attrs(attrs)
	sctx, span := o.t.tracer.Start(o.ctx, m.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	o.keys = append(o.keys, key)
	o.mu.Unlock()

	o.t.mu.Lock()
	if old, ok := o.t.outgoing[key]; ok {
		old.End()
	}
	o.t.outgoing[key] = span
	o.t.mu.Unlock()

	if p, ok := withTraceMeta(o.t, sctx, m.Params); ok {
		msg = jsonrpc.AppendRequest(nil, m.ID, m.Method, p)
	}
	return o.n.Notify(msg)
}

// finish ends the spans of the requests the client did not answer.
func (o *outgoing) finish() {
	o.mu.Lock()
	o.done = true
	keys := o.keys
	o.keys = nil
	o.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	o.t.mu.Lock()
	defer o.t.mu.Unlock()
	for _, k := range keys {
		if span, ok := o.t.outgoing[k]; ok {
			delete(o.t.outgoing, k)
			span.SetAttributes(keyErrorType.String("no_answer"))
			span.SetStatus(codes.Error, "the request ended before the client answered")
			span.End()
		}
	}
}

// answered ends the span of the server-to-client request a client's
// response answers.
func (t *Telemetry) answered(req *transport.Request) {
	if req.Session == nil {
		return
	}
	key := outKey{req.Session.ID(), req.Message.ID.String()}
	t.mu.Lock()
	span, ok := t.outgoing[key]
	if ok {
		delete(t.outgoing, key)
	}
	t.mu.Unlock()
	if !ok {
		return
	}
	if e := req.Message.Error; e != nil {
		code := strconv.FormatInt(e.Code, 10)
		span.SetAttributes(keyErrorType.String(code), keyStatusCode.String(code))
		span.SetStatus(codes.Error, clip(e.Message, 1024))
	}
	span.End(trace.WithTimestamp(time.Now()))
}

// withTraceMeta returns params with the trace context of ctx in its _meta,
// when params is an object without _meta (or absent); ok is false when
// nothing was added.
func withTraceMeta(t *Telemetry, ctx context.Context, params json.RawMessage) (json.RawMessage, bool) {
	var c metaCarrier
	t.prop.Inject(ctx, &c)
	if c.traceparent == "" {
		return nil, false
	}
	if len(params) > 0 && params[0] != '{' {
		return nil, false
	}
	hasMeta := false
	if len(params) > 0 {
		_ = jsonrpc.EachMember(params, func(k []byte, _ jsontext.Value) error {
			if string(k) == "_meta" {
				hasMeta = true
				return errStop
			}
			return nil
		})
	}
	if hasMeta {
		return nil, false
	}
	meta := map[string]string{"traceparent": c.traceparent}
	if c.tracestate != "" {
		meta["tracestate"] = c.tracestate
	}
	if c.baggage != "" {
		meta["baggage"] = c.baggage
	}
	mb, _ := json.Marshal(meta)
	out := make([]byte, 0, len(params)+len(mb)+12)
	out = append(out, `{"_meta":`...)
	out = append(out, mb...)
	if len(params) > 2 {
		rest := bytes.TrimSpace(params[1:])
		if len(rest) > 1 {
			out = append(out, ',')
		}
		out = append(out, rest...)
	} else {
		out = append(out, '}')
	}
	return out, true
}
