package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Without the OTLP variables, no exporter is made.
func TestNoTelemetryWithoutEnv(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "x", "OTEL_RESOURCE_ATTRIBUTES": "a=b", "OTEL_EXPORTER_OTLP_HEADERS": "k=v"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"},
	} {
		tel, err := startTelemetry(context.Background(), func(k string) string { return env[k] })
		if tel != nil || err != nil {
			t.Errorf("%v: telemetry %v, %v; want none", env, tel, err)
		}
	}
	_, err := startTelemetry(context.Background(), func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}[k]
	})
	if err == nil {
		t.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=grpc accepted")
	}
}

// otlpReceiver is an OTLP/HTTP receiver on loopback that keeps the names
// of the spans and metrics it is sent, by service.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   map[string]bool // "service span-name kind"
	metrics map[string]bool // "service metric-name"
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		for _, rs := range req.ResourceSpans {
			svc := ""
			for _, a := range rs.Resource.GetAttributes() {
				if a.Key == "service.name" {
					svc = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					o.spans[svc+" "+s.Name+" "+s.Kind.String()] = true
				}
			}
		}
		b, _ := proto.Marshal(&colltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		for _, rm := range req.ResourceMetrics {
			svc := ""
			for _, a := range rm.Resource.GetAttributes() {
				if a.Key == "service.name" {
					svc = a.Value.GetStringValue()
				}
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					o.metrics[svc+" "+m.Name] = true
				}
			}
		}
		b, _ := proto.Marshal(&collmetrics.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

func (o *otlpReceiver) has(spans, metrics []string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range spans {
		if !o.spans[s] {
			return false
		}
	}
	for _, m := range metrics {
		if !o.metrics[m] {
			return false
		}
	}
	return true
}

// TestTelemetryExported: with OTEL_EXPORTER_OTLP_ENDPOINT set, `mcpkit
// serve sql` and a client command export their spans and metrics to an
// OTLP/HTTP receiver.
func TestTelemetryExported(t *testing.T) {
	recv := &otlpReceiver{spans: map[string]bool{}, metrics: map[string]bool{}}
	ts := httptest.NewServer(recv)
	defer ts.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ts.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "100")
	t.Setenv("OTEL_SERVICE_NAME", "")
	url, _ := serveSQL(t)
	t.Setenv("OTEL_SERVICE_NAME", "mcpkit-cli-test")
	if r := mcpkit(t, "tools", url); r.code != exitOK {
		t.Fatalf("tools: %d %s", r.code, r.stderr)
	}
	spans := []string{"mcpkit tools/list SPAN_KIND_SERVER", "mcpkit-cli-test tools/list SPAN_KIND_CLIENT"}
	metrics := []string{"mcpkit mcp.server.operation.duration", "mcpkit-cli-test mcp.client.operation.duration"}
	deadline := time.Now().Add(20 * time.Second)
	for !recv.has(spans, metrics) {
		if time.Now().After(deadline) {
			recv.mu.Lock()
			t.Fatalf("the receiver got spans %v and metrics %v; want %v and %v", recv.spans, recv.metrics, spans, metrics)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
