package otel

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
)

// callKey marks the context of a call this package traces: the RoundTripper
// of HTTPTransport describes only such spans.
type callKey struct{}

// ClientMiddleware returns the client middleware that traces and measures
// calls: put it first in client.Options.Middleware.
//
// Each call — one logical operation, with all its MRTR input rounds and,
// for a legacy server, the requests the server makes while answering — gets
// a CLIENT span named "{mcp.method.name} {target}" in the caller's context,
// whose trace context goes into the _meta of every round (traceparent,
// tracestate, baggage), so that the server's spans are its children. Its
// duration goes to mcp.client.operation.duration. The server's requests
// for input (elicitation, sampling, roots: a legacy server's requests and
// an MRTR round's input requests alike) get SERVER spans inside the call's
// span, or inside the server's span when the request's _meta carries it.
//
// A middleware after this one that makes calls of its own for a call (a
// Tasks extension polling tasks/get until the task ends) makes them with
// the context it was given: through Session.Call they get CLIENT spans of
// their own, children of the logical call's span; through the next
// CallFunc, a Call that copies the given one's Meta carries that span's
// context to the server. Either way the polling is part of one operation.
func (t *Telemetry) ClientMiddleware() client.Middleware {
	return client.Middleware{
		Call: func(next client.CallFunc) client.CallFunc {
			return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
				return t.call(ctx, c, next)
			}
		},
		Incoming: func(next client.IncomingFunc) client.IncomingFunc {
			return func(ctx context.Context, m *client.Incoming) (json.RawMessage, error) {
				if !m.Request {
					return next(ctx, m)
				}
				return t.incoming(ctx, m, next)
			}
		},
	}
}

// sessionConn describes a client session's connection.
func sessionConn(s *client.Session) (conn, string) {
	if s == nil {
		return conn{}, ""
	}
	c := conn{transport: transportPipe}
	switch s.Transport() {
	case client.TransportStreamableHTTP, client.TransportSSE:
		c = conn{transport: transportTCP, protocolName: "http"}
	case client.TransportStdio, client.TransportInMemory:
	default:
		c = conn{}
	}
	return c, s.ProtocolVersion()
}

func (t *Telemetry) call(ctx context.Context, c *client.Call, next client.CallFunc) (json.RawMessage, error) {
	start := time.Now()
	r := readCall(c.Method, c.Params, t.recordOn)
	cn, version := sessionConn(c.Session())

	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, keyMethod.String(c.Method))
	if c.Method == protocol.MethodToolsCall {
		attrs = append(attrs, keyOperation.String(operationExecuteTool))
	}
	if r.target != "" {
		if r.targetKey {
			attrs = append(attrs, keyPromptName.String(r.target))
		} else {
			attrs = append(attrs, keyToolName.String(r.target))
		}
	}
	if version != "" {
		attrs = append(attrs, keyProtocolVersion.String(version))
	}
	if cn.transport != "" {
		attrs = cn.attrs(attrs)
	}
	metricAttrs := attrs
	if r.uri != "" {
		attrs = append(attrs, keyResourceURI.String(r.uri))
	}
	if t.recordOn && len(r.arguments) > 0 {
		attrs = append(attrs, keyToolArguments.String(t.recorded(r.arguments)))
	}
	name := c.Method
	if r.target != "" {
		name += " " + r.target
	}
	sctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	sctx = context.WithValue(sctx, callKey{}, span)

	var carrier metaCarrier
	t.prop.Inject(sctx, &carrier)
	if c.Meta == nil {
		c.Meta = make(map[string]json.RawMessage, 3)
	}
	for _, k := range carrier.Keys() {
		if v := carrier.Get(k); v != "" {
			b, _ := json.Marshal(v)
			c.Meta[k] = b
		} else {
			delete(c.Meta, k)
		}
	}

	raw, err := next(sctx, c)

	var o outcome
	switch {
	case err != nil:
		o.errType, o.code = errorType(err)
		o.desc = err.Error()
	case c.Method == protocol.MethodToolsCall:
		if isToolError(raw) {
			o.errType = errorToolError
		}
		if t.recordOn {
			span.SetAttributes(keyToolResult.String(t.recorded(raw)))
		}
	}
	o.end(span)
	m := append(metricAttrs[:len(metricAttrs):len(metricAttrs)], o.attrs(nil)...)
	t.clientOp.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(m...))
	return raw, err
}

// incoming traces the client's answer to a server's request for input.
func (t *Telemetry) incoming(ctx context.Context, m *client.Incoming, next client.IncomingFunc) (json.RawMessage, error) {
	msg := readCall(m.Method, m.Params, false)
	pctx := ctx
	var links []trace.Link
	if !msg.meta.empty() {
		ex := t.prop.Extract(context.Background(), &msg.meta)
		if sc := trace.SpanContextFromContext(ex); sc.IsValid() {
			if amb := trace.SpanContextFromContext(ctx); amb.IsValid() && !amb.Equal(sc) {
				links = append(links, trace.Link{SpanContext: amb})
			}
			pctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		}
	}
	sctx, span := t.tracer.Start(pctx, clip(m.Method, maxName), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(keyMethod.String(clip(m.Method, maxName))), trace.WithLinks(links...))
	res, err := next(sctx, m)
	var o outcome
	if err != nil {
		o.errType, o.code = errorType(err)
		o.desc = err.Error()
	}
	o.end(span)
	return res, err
}

// SessionStarted starts measuring a client session for
// mcp.client.session.duration; call the function it returns when the
// session ends (after Session.Close), with the error it ended with, or nil.
func (t *Telemetry) SessionStarted(s *client.Session) (ended func(err error)) {
	start := time.Now()
	cn, version := sessionConn(s)
	attrs := make([]attribute.KeyValue, 0, 5)
	if knownVersion(version) {
		attrs = append(attrs, keyProtocolVersion.String(version))
	}
	if cn.transport != "" {
		attrs = cn.attrs(attrs)
	}
	return func(err error) {
		a := attrs
		if err != nil {
			et, _ := errorType(err)
			a = append(a[:len(a):len(a)], keyErrorType.String(et))
		}
		t.clientSession.Record(context.Background(), time.Since(start).Seconds(), metric.WithAttributes(a...))
	}
}
