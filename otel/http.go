package otel

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// httpInfo is what HTTPHandler learned of an HTTP request, for the server
// spans of the messages it carries.
type httpInfo struct {
	conn    conn
	sc      trace.SpanContext // from the traceparent header
	bag     baggage.Baggage
	reached atomic.Bool // a message of the request reached the server middleware
}

type httpKey struct{}

func httpFrom(ctx context.Context) *httpInfo {
	hi, _ := ctx.Value(httpKey{}).(*httpInfo)
	return hi
}

// HTTPHandler wraps an MCP endpoint's handler (streamable.NewHandler,
// sse.NewHandler, or either behind auth/resource.Protect): the server spans
// of the messages it carries learn the HTTP request's trace context
// (traceparent header), its protocol version and the client's address;
// and a POST refused before any of its messages reached the server
// middleware — a 400 for a malformed body or a header that disagrees with
// it, a 401 without a valid token, a 403, a 413, a 429 or 503 of a budget
// — gets a SERVER span and a mcp.server.operation.duration measurement
// with error.type set to the HTTP status. Its mcp.method.name is the
// Mcp-Method header when it names a method MCP defines, else _OTHER.
func (t *Telemetry) HTTPHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		hi := &httpInfo{conn: conn{transport: transportTCP, protocolName: "http", protocolVer: protoVersion(r)}}
		if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			hi.conn.peer = host
			hi.conn.peerPort, _ = strconv.Atoi(port)
		}
		if r.Header.Get("traceparent") != "" || r.Header.Get("baggage") != "" {
			ex := t.prop.Extract(context.Background(), propagation.HeaderCarrier(r.Header))
			hi.sc, hi.bag = trace.SpanContextFromContext(ex), baggage.FromContext(ex)
		}
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), httpKey{}, hi)))
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), httpKey{}, hi)))
		if sw.status < 400 || hi.reached.Load() {
			return
		}
		t.refused(r, hi, sw.status, start)
	})
}

// refused records a POST the transport or an authorization layer refused.
func (t *Telemetry) refused(r *http.Request, hi *httpInfo, status int, start time.Time) {
	method := r.Header.Get("Mcp-Method")
	if !knownMethods[method] {
		method = errorOther
	}
	code := strconv.Itoa(status)
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, keyMethod.String(method), keyErrorType.String(code))
	attrs = hi.conn.attrs(attrs)
	ctx := r.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() && hi.sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, hi.sc)
	}
	sattrs := append(attrs[:len(attrs):len(attrs)], keyClientAddress.String(hi.conn.peer), keyClientPort.Int(hi.conn.peerPort))
	_, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(sattrs...))
	span.SetStatus(codes.Error, "refused with HTTP "+code+" "+http.StatusText(status))
	span.End()
	t.serverOp.Record(context.WithoutCancel(r.Context()), time.Since(start).Seconds(), metric.WithAttributes(attrs...))
}

func protoVersion(r *http.Request) string {
	switch r.ProtoMajor {
	case 2:
		return "2"
	case 3:
		return "3"
	}
	return "1." + strconv.Itoa(r.ProtoMinor)
}

// statusWriter remembers the status of a response. Unwrap lets
// http.ResponseController reach the writer's flushing and deadlines.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// HTTPTransport returns an http.RoundTripper that puts the trace context of
// each request's context in its headers (traceparent, tracestate,
// baggage), and the server's address and port on the span current there:
// give it to the client's HTTP transport (streamable.ClientOptions
// HTTPClient) so that HTTP instrumentation between the client and the
// server sees the call's trace. base nil means http.DefaultTransport.
func (t *Telemetry) HTTPTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{t: t, base: base}
}

type roundTripper struct {
	t    *Telemetry
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	span := trace.SpanFromContext(ctx)
	if !span.SpanContext().IsValid() {
		return rt.base.RoundTrip(r)
	}
	r = r.Clone(ctx) // a RoundTripper must not change the request it was given
	rt.t.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
	if ours, _ := ctx.Value(callKey{}).(trace.Span); ours == span && span.IsRecording() {
		host, port := r.URL.Hostname(), r.URL.Port()
		if port == "" {
			port = "80"
			if r.URL.Scheme == "https" {
				port = "443"
			}
		}
		p, _ := strconv.Atoi(port)
		span.SetAttributes(keyServerAddress.String(host), keyServerPort.Int(p))
	}
	return rt.base.RoundTrip(r)
}
