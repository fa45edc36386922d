package otel

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// ServerMiddleware returns the middleware that traces and measures what a
// server receives, in both eras and on every transport: install it with
// transport.Use (transport.Use(s, tel.ServerMiddleware())).
//
// Each request and notification gets a SERVER span named
// "{mcp.method.name} {target}" (the tool or prompt name) whose parent is
// the trace context of the message's _meta (traceparent, tracestate,
// baggage) or, when there is none, the transport's: the span current in
// the context (an HTTP server instrumentation in front) or the
// traceparent header HTTPHandler read. The other one, when both exist, is
// linked. Its duration goes to mcp.server.operation.duration. The legacy
// era's requests to the client (elicitation/create, sampling/createMessage,
// roots/list) get CLIENT spans inside the request's span, ended by the
// client's answer, and carry their trace context in _meta; a legacy
// session's life goes to mcp.server.session.duration.
func (t *Telemetry) ServerMiddleware() transport.Middleware {
	return func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			if req.Message.IsResponse() {
				t.answered(req)
				return next(ctx, req)
			}
			return t.serve(ctx, req, next)
		}
	}
}

// conn describes the connection a message came on.
type conn struct {
	transport    string // network.transport
	protocolName string // network.protocol.name
	protocolVer  string // network.protocol.version
	peer         string // client.address
	peerPort     int
}

// connOf describes the connection of ctx: HTTP when HTTPHandler or
// net/http served it, a pipe (stdio, in memory) otherwise.
func connOf(ctx context.Context) conn {
	if hi := httpFrom(ctx); hi != nil {
		return hi.conn
	}
	if a, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr); ok {
		c := conn{transport: transportTCP, protocolName: "http"}
		if a.Network() == "unix" {
			c.transport = transportUnix
		}
		return c
	}
	return conn{transport: transportPipe}
}

func (c *conn) attrs(dst []attribute.KeyValue) []attribute.KeyValue {
	dst = append(dst, keyTransport.String(c.transport))
	if c.protocolName != "" {
		dst = append(dst, keyProtocolName.String(c.protocolName))
	}
	if c.protocolVer != "" {
		dst = append(dst, keyProtocolVer.String(c.protocolVer))
	}
	return dst
}

// parent returns the context a server span starts in, and the links: the
// _meta trace context is the parent when valid, else the transport's.
func (t *Telemetry) parent(ctx context.Context, r *request, hi *httpInfo) (context.Context, []trace.Link) {
	transportSC := trace.SpanContextFromContext(ctx)
	if !transportSC.IsValid() && hi != nil {
		transportSC = hi.sc
	}
	var metaSC trace.SpanContext
	var bag baggage.Baggage
	if !r.meta.empty() {
		ex := t.prop.Extract(context.Background(), &r.meta)
		metaSC, bag = trace.SpanContextFromContext(ex), baggage.FromContext(ex)
	}
	if bag.Len() == 0 && hi != nil {
		bag = hi.bag
	}
	if bag.Len() > 0 {
		ctx = baggage.ContextWithBaggage(ctx, bag)
	}
	switch {
	case metaSC.IsValid():
		ctx = trace.ContextWithRemoteSpanContext(ctx, metaSC)
		if transportSC.IsValid() && !transportSC.Equal(metaSC) {
			return ctx, []trace.Link{{SpanContext: transportSC}}
		}
	case transportSC.IsValid() && !trace.SpanContextFromContext(ctx).IsValid():
		ctx = trace.ContextWithRemoteSpanContext(ctx, transportSC)
	}
	return ctx, nil
}

// serve traces and measures one request or notification.
func (t *Telemetry) serve(ctx context.Context, req *transport.Request, next transport.ServeFunc) (protocol.Result, error) {
	start := time.Now()
	msg := req.Message
	hi := httpFrom(ctx)
	if hi != nil {
		hi.reached.Store(true)
	}
	r := readRequest(msg, t.recordOn)
	c := connOf(ctx)
	version, sessionID := r.version, ""
	if req.Session != nil {
		version, sessionID = req.Session.Version(), req.Session.ID()
	}

	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs, keyMethod.String(clip(msg.Method, maxName)))
	if msg.IsRequest() {
		attrs = append(attrs, keyRequestID.String(clip(msg.ID.String(), maxName)))
	}
	if version != "" {
		attrs = append(attrs, keyProtocolVersion.String(version))
	}
	if sessionID != "" {
		attrs = append(attrs, keySessionID.String(sessionID))
	}
	if r.uri != "" {
		attrs = append(attrs, keyResourceURI.String(r.uri))
	}
	if msg.Method == protocol.MethodToolsCall {
		attrs = append(attrs, keyOperation.String(operationExecuteTool))
	}
	attrs = c.attrs(attrs)
	if c.peer != "" {
		attrs = append(attrs, keyClientAddress.String(c.peer), keyClientPort.Int(c.peerPort))
	}
	if t.recordOn && len(r.arguments) > 0 {
		attrs = append(attrs, keyToolArguments.String(t.recorded(r.arguments)))
	}

	pctx, links := t.parent(ctx, &r, hi)
	sctx, span := t.tracer.Start(pctx, clip(msg.Method, maxName), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...), trace.WithLinks(links...))

	served := req
	var out *outgoing
	if req.Kind == transport.KindSession && req.Notifier != nil && msg.IsRequest() {
		out = &outgoing{t: t, n: req.Notifier, ctx: sctx, session: sessionID, version: version, conn: c}
		cp := *req
		cp.Notifier = out
		served = &cp
	}
	res, err := next(sctx, served)
	if out != nil {
		out.finish()
	}

	o := outcome{}
	switch {
	case err != nil && errors.Is(err, transport.ErrNoResponse):
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		o.errType = "cancelled"
	case err != nil:
		we := protocol.WireError(err)
		o.code = strconv.FormatInt(we.Code, 10)
		o.errType, o.desc = o.code, we.Message
	case msg.Method == protocol.MethodToolsCall:
		if ct, ok := res.(*protocol.CallToolResult); ok {
			if ct.IsError {
				o.errType = errorToolError
			}
			if t.recordOn {
				if b, err := transport.EncodeResult(ct); err == nil {
					span.SetAttributes(keyToolResult.String(t.recorded(b)))
				}
			}
		}
	case msg.Method == protocol.MethodInitialize:
		if op, ok := res.(*transport.Opened); ok && op.Session != nil {
			version, sessionID = op.Session.Version(), op.Session.ID()
			span.SetAttributes(keySessionID.String(sessionID), keyProtocolVersion.String(version))
			t.watchSession(op.Session, start, version, c)
		}
	}
	// A name the peer chose names the span and goes into metrics only when
	// the server knew it (no invalid-params or unknown-method error).
	known := o.code != strconv.Itoa(protocol.CodeInvalidParams) && o.code != strconv.Itoa(protocol.CodeMethodNotFound)
	if r.target != "" && known {
		span.SetName(clip(msg.Method, maxName) + " " + r.target)
		if r.targetKey {
			span.SetAttributes(keyPromptName.String(r.target))
		} else {
			span.SetAttributes(keyToolName.String(r.target))
		}
	}
	o.end(span)

	m := make([]attribute.KeyValue, 0, 10)
	method := metricMethod(msg.Method)
	if !known && o.code == strconv.Itoa(protocol.CodeMethodNotFound) {
		method = errorOther
	}
	m = append(m, keyMethod.String(method))
	if msg.Method == protocol.MethodToolsCall {
		m = append(m, keyOperation.String(operationExecuteTool))
	}
	if r.target != "" && known {
		if r.targetKey {
			m = append(m, keyPromptName.String(r.target))
		} else {
			m = append(m, keyToolName.String(r.target))
		}
	}
	if knownVersion(version) {
		m = append(m, keyProtocolVersion.String(version))
	}
	m = c.attrs(m)
	m = o.attrs(m)
	t.serverOp.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(m...))
	return res, err
}

// knownVersion reports whether v is a revision mcpkit knows: the only
// versions that go into metrics.
func knownVersion(v string) bool {
	for _, k := range protocol.ModernVersions {
		if v == k {
			return true
		}
	}
	for _, k := range protocol.LegacyVersions {
		if v == k {
			return true
		}
	}
	return false
}

// outcome is how an operation ended.
type outcome struct {
	errType string // error.type; "" when it succeeded
	code    string // rpc.response.status_code: the JSON-RPC error code
	desc    string // the span status description: the error's message
}

func (o *outcome) attrs(dst []attribute.KeyValue) []attribute.KeyValue {
	if o.errType != "" {
		dst = append(dst, keyErrorType.String(o.errType))
	}
	if o.code != "" {
		dst = append(dst, keyStatusCode.String(o.code))
	}
	return dst
}

// end sets the span's outcome and ends it.
func (o *outcome) end(span trace.Span) {
	if o.errType != "" {
		span.SetAttributes(o.attrs(nil)...)
		span.SetStatus(codes.Error, clip(o.desc, 1024))
	}
	span.End()
}

// watchSession records a legacy session's duration when it ends. The
// goroutine lives as long as the session (which ends when closed, or when
// idle for its timeout).
func (t *Telemetry) watchSession(s transport.Session, start time.Time, version string, c conn) {
	attrs := make([]attribute.KeyValue, 0, 4)
	if knownVersion(version) {
		attrs = append(attrs, keyProtocolVersion.String(version))
	}
	attrs = c.attrs(attrs)
	go func() {
		<-s.Done()
		t.serverSession.Record(context.Background(), time.Since(start).Seconds(), metric.WithAttributes(attrs...))
	}()
}
