package otel

import (
	"context"
	"errors"
	"strconv"
	"sync"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/mcpkit/mcpkit/otel"

// Options configure a Telemetry. The zero value uses the global tracer and
// meter providers and W3C trace context and baggage.
type Options struct {
	// TracerProvider makes the tracer; nil means the global one
	// (go.opentelemetry.io/otel.GetTracerProvider).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the duration histograms; nil means the global
	// one.
	MeterProvider metric.MeterProvider
	// Propagator reads and writes trace context in _meta and HTTP headers;
	// nil means W3C trace context and baggage, the format MCP's _meta
	// carries (traceparent, tracestate, baggage).
	Propagator propagation.TextMapPropagator
	// RecordToolCalls records a tool call's arguments and result
	// (gen_ai.tool.call.arguments, gen_ai.tool.call.result) on its spans.
	// They may hold anything a user or a model wrote: off by default, as
	// the conventions say (opt-in).
	RecordToolCalls bool
	// MaxRecordedBytes bounds each recorded argument or result; longer
	// ones are cut and end with "…". 0 means 4096.
	MaxRecordedBytes int
}

// Telemetry records the spans and metrics of the OpenTelemetry semantic
// conventions for MCP: a server span per request, a client span per call,
// and the mcp.server.operation.duration, mcp.client.operation.duration,
// mcp.server.session.duration and mcp.client.session.duration histograms.
// Its middleware and handlers are safe for concurrent use; one Telemetry
// serves any number of servers and clients.
type Telemetry struct {
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	recordMax int
	recordOn  bool

	serverOp, clientOp           metric.Float64Histogram
	serverSession, clientSession metric.Float64Histogram

	// outgoing are the legacy era's server-to-client requests waiting for
	// their answers, by session and id.
	mu       sync.Mutex
	outgoing map[outKey]trace.Span
}

// Durations are the histograms' bucket boundaries, in seconds, as the
// conventions advise for all four.
var Durations = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// The metric names of the conventions.
const (
	MetricServerOperationDuration = "mcp.server.operation.duration"
	MetricClientOperationDuration = "mcp.client.operation.duration"
	MetricServerSessionDuration   = "mcp.server.session.duration"
	MetricClientSessionDuration   = "mcp.client.session.duration"
)

// New returns a Telemetry configured by opts (nil for the defaults). An
// instrument the meter provider refuses is replaced by a no-op one, and the
// error returned with the Telemetry, which works regardless.
func New(opts *Options) (*Telemetry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = gotel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = gotel.GetMeterProvider()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	if o.MaxRecordedBytes <= 0 {
		o.MaxRecordedBytes = 4096
	}
	t := &Telemetry{
		tracer:    o.TracerProvider.Tracer(ScopeName),
		prop:      o.Propagator,
		recordOn:  o.RecordToolCalls,
		recordMax: o.MaxRecordedBytes,
		outgoing:  map[outKey]trace.Span{},
	}
	meter := o.MeterProvider.Meter(ScopeName)
	var errs []error
	histogram := func(name, desc string) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(Durations...))
		if err != nil {
			errs = append(errs, err)
		}
		return h // a no-op instrument when err != nil
	}
	t.serverOp = histogram(MetricServerOperationDuration,
		"MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.")
	t.clientOp = histogram(MetricClientOperationDuration,
		"The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.")
	t.serverSession = histogram(MetricServerSessionDuration, "The duration of the MCP session as observed on the MCP server.")
	t.clientSession = histogram(MetricClientSessionDuration, "The duration of the MCP session as observed on the MCP client.")
	return t, errors.Join(errs...)
}

// Attribute keys of the conventions (and of the registries they refer to).
const (
	keyMethod          = attribute.Key("mcp.method.name")
	keySessionID       = attribute.Key("mcp.session.id")
	keyResourceURI     = attribute.Key("mcp.resource.uri")
	keyProtocolVersion = attribute.Key("mcp.protocol.version")
	keyOperation       = attribute.Key("gen_ai.operation.name")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyPromptName      = attribute.Key("gen_ai.prompt.name")
	keyToolArguments   = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult      = attribute.Key("gen_ai.tool.call.result")
	keyRequestID       = attribute.Key("jsonrpc.request.id")
	keyStatusCode      = attribute.Key("rpc.response.status_code")
	keyErrorType       = attribute.Key("error.type")
	keyTransport       = attribute.Key("network.transport")
	keyProtocolName    = attribute.Key("network.protocol.name")
	keyProtocolVer     = attribute.Key("network.protocol.version")
	keyClientAddress   = attribute.Key("client.address")
	keyClientPort      = attribute.Key("client.port")
	keyServerAddress   = attribute.Key("server.address")
	keyServerPort      = attribute.Key("server.port")
)

// Values of the conventions.
const (
	operationExecuteTool = "execute_tool"
	errorToolError       = "tool_error"
	errorOther           = "_OTHER"
	transportPipe        = "pipe"
	transportTCP         = "tcp"
	transportUnix        = "unix"
)

// knownMethods are the methods whose names go into metrics as they are;
// any other name a peer sends is recorded as _OTHER there, so that a peer
// cannot grow the number of time series. (Spans keep the name, cut to
// maxName bytes.)
var knownMethods = setOf(
	"server/discover", "tools/list", "tools/call", "resources/list", "resources/read",
	"resources/templates/list", "prompts/list", "prompts/get", "completion/complete",
	"subscriptions/listen", "initialize", "ping", "logging/setLevel", "resources/subscribe",
	"resources/unsubscribe", "notifications/initialized", "elicitation/create",
	"sampling/createMessage", "roots/list", "notifications/cancelled", "notifications/progress",
	"notifications/message", "notifications/resources/updated", "notifications/resources/list_changed",
	"notifications/tools/list_changed", "notifications/prompts/list_changed",
	"notifications/subscriptions/acknowledged", "notifications/roots/list_changed",
	"notifications/elicitation/complete",
	// The Tasks extension's methods.
	"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "notifications/tasks/status",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// maxName bounds a name a peer chose (a method, a tool, a prompt, a URI)
// on a span.
const maxName = 256

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}

// metricMethod is the method name a metric records.
func metricMethod(method string) string {
	if knownMethods[method] {
		return method
	}
	return errorOther
}

// errorType classifies an error for error.type: the JSON-RPC error code,
// or a word of the caller's context.
func errorType(err error) (errType string, code string) {
	var je *jsonrpc.Error
	switch {
	case errors.As(err, &je):
		c := strconv.FormatInt(je.Code, 10)
		return c, c
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", ""
	case errors.Is(err, context.Canceled):
		return "cancelled", ""
	}
	return errorOther, ""
}

// recorded returns b as a recorded value, bounded.
func (t *Telemetry) recorded(b []byte) string {
	if len(b) <= t.recordMax {
		return string(b)
	}
	return clip(string(b), t.recordMax) + "…"
}
