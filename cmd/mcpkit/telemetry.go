package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpkit/mcpkit/otel"
)

// telemetryAbout is the help text of the exported telemetry.
const telemetryAbout = `Telemetry: when OTEL_EXPORTER_OTLP_ENDPOINT (or the per-signal
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) is
set, the spans and metrics of the OpenTelemetry conventions for MCP are
exported over OTLP/HTTP (protobuf), configured by the standard
OTEL_EXPORTER_OTLP_* variables (headers, timeout, certificates) and
OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES; OTEL_SDK_DISABLED=true,
OTEL_TRACES_EXPORTER=none and OTEL_METRICS_EXPORTER=none turn them off.
Without those variables nothing is exported.`

// telemetry is what the command exports, or nil: spans and metrics go
// through tel; stop flushes and ends the exporters.
type telemetry struct {
	tel  *otel.Telemetry
	stop func()
}

// startTelemetry sets up OTLP/HTTP export when the standard environment
// variables ask for it, and returns nil when they do not: then no exporter
// is made and nothing leaves the process.
func startTelemetry(ctx context.Context, getenv func(string) string) (*telemetry, error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	traces := (base || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") && getenv("OTEL_TRACES_EXPORTER") != "none"
	metrics := (base || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "") && getenv("OTEL_METRICS_EXPORTER") != "none"
	if !traces && !metrics {
		return nil, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if p := getenv(v); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("%s=%s: mcpkit exports OTLP over HTTP only (http/protobuf)", v, p)
		}
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "mcpkit"),
		attribute.String("service.version", version())), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	opts := &otel.Options{}
	var stops []func(context.Context) error
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		opts.TracerProvider = tp
		stops = append(stops, tp.Shutdown)
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			for _, s := range stops {
				_ = s(ctx)
			}
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		opts.MeterProvider = mp
		stops = append(stops, mp.Shutdown)
	}
	tel, err := otel.New(opts)
	if err != nil {
		return nil, err
	}
	return &telemetry{tel: tel, stop: func() {
		// What is left is sent before the process exits, for at most 5s.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var errs []error
		for _, s := range stops {
			errs = append(errs, s(ctx))
		}
		_ = errors.Join(errs...)
	}}, nil
}
