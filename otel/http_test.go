package otel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/auth/resource"
	"github.com/mcpkit/mcpkit/otel"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

const (
	metaFields  = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	headerTrace = "00-11111111111111111111111111111111-2222222222222222-01"
	metaTrace   = "00-33333333333333333333333333333333-4444444444444444-01"
)

// post sends one modern tools/call to url with the extra _meta members and
// headers.
func post(t *testing.T, url, tool, extraMeta string, header map[string]string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"hi"},"_meta":{` + metaFields + extraMeta + `}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServerSpanParent: the _meta trace context is the parent, the HTTP
// header's linked; without the _meta one the header's is the parent.
func TestServerSpanParent(t *testing.T) {
	r := newRecorder(t, nil)
	ts := httptest.NewServer(r.tel.HTTPHandler(streamable.NewHandler(transport.Use(testServer(), r.tel.ServerMiddleware()), nil)))
	defer ts.Close()

	if code := post(t, ts.URL, "echo", "", map[string]string{"traceparent": headerTrace}); code != 200 {
		t.Fatalf("status %d", code)
	}
	if code := post(t, ts.URL, "echo", `,"traceparent":"`+metaTrace+`"`, map[string]string{"traceparent": headerTrace}); code != 200 {
		t.Fatalf("status %d", code)
	}
	spans := r.find("tools/call echo", trace.SpanKindServer)
	if len(spans) != 2 {
		t.Fatalf("%d server spans", len(spans))
	}
	byHeader, byMeta := spans[0], spans[1]
	if got := byHeader.Parent().SpanID().String(); got != "2222222222222222" || len(byHeader.Links()) != 0 {
		t.Errorf("without _meta trace context: parent %s, %d links; want the header's span, none", got, len(byHeader.Links()))
	}
	if got := byMeta.Parent().SpanID().String(); got != "4444444444444444" {
		t.Errorf("with _meta trace context: parent %s, want _meta's", got)
	}
	if l := byMeta.Links(); len(l) != 1 || l[0].SpanContext.SpanID().String() != "2222222222222222" {
		t.Errorf("with _meta trace context: links %v, want the header's span", l)
	}
}

// TestRefusedCounted: POSTs refused before the core (401 by
// auth/resource.Protect, 400 for a header that disagrees with the body)
// are measured and traced with their status as error.type.
func TestRefusedCounted(t *testing.T) {
	r := newRecorder(t, nil)
	inner := streamable.NewHandler(transport.Use(testServer(), r.tel.ServerMiddleware()), nil)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	protected := resource.Protect(inner, &resource.Options{
		Resource:             ts.URL + "/protected",
		AuthorizationServers: []string{"https://issuer.example"},
		Verifier:             &resource.JWTVerifier{Issuer: "https://issuer.example", Resource: ts.URL + "/protected"},
	})
	mux.Handle("/protected", r.tel.HTTPHandler(protected))
	mux.Handle("/open", r.tel.HTTPHandler(inner))

	if code := post(t, ts.URL+"/protected", "echo", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("protected: status %d, want 401", code)
	}
	if code := post(t, ts.URL+"/open", "echo", "", map[string]string{"Mcp-Name": "other"}); code != http.StatusBadRequest {
		t.Fatalf("mismatched Mcp-Name: status %d, want 400", code)
	}
	if code := post(t, ts.URL+"/open", "echo", "", map[string]string{"Mcp-Method": "made/up"}); code != http.StatusBadRequest {
		t.Fatalf("mismatched Mcp-Method: status %d, want 400", code)
	}
	if code := post(t, ts.URL+"/open", "echo", "", nil); code != 200 {
		t.Fatalf("status %d", code)
	}

	counts := map[string]uint64{}
	for _, dp := range serverOps(t, r) {
		m, _ := dp.Attributes.Value("mcp.method.name")
		e, _ := dp.Attributes.Value("error.type")
		counts[m.Emit()+" "+e.Emit()] += dp.Count
	}
	want := map[string]uint64{"tools/call 401": 1, "tools/call 400": 1, "_OTHER 400": 1, "tools/call ": 1}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s: %d measurements, want %d (all: %v)", k, counts[k], n, counts)
		}
	}
	refused := r.find("tools/call", trace.SpanKindServer)
	if len(refused) != 2 {
		t.Fatalf("%d refusal spans for tools/call, want 2", len(refused))
	}
	for _, s := range refused {
		if s.Status().Code.String() != "Error" {
			t.Errorf("refusal span status %v", s.Status())
		}
	}
}

// serverOps returns the data points of mcp.server.operation.duration.
func serverOps(t *testing.T, r *recorder) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []metricdata.HistogramDataPoint[float64]
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == otel.MetricServerOperationDuration {
				out = append(out, m.Data.(metricdata.Histogram[float64]).DataPoints...)
			}
		}
	}
	return out
}

// TestPeerNamesBounded: a method or tool the server does not know goes
// into metrics as _OTHER or not at all, so that a peer cannot grow the
// number of series; spans keep the method, not an unknown tool's name.
func TestPeerNamesBounded(t *testing.T) {
	r := newRecorder(t, nil)
	ts := httptest.NewServer(r.tel.HTTPHandler(streamable.NewHandler(transport.Use(testServer(), r.tel.ServerMiddleware()), nil)))
	defer ts.Close()
	for _, tool := range []string{"nope-1", "nope-2"} {
		post(t, ts.URL, tool, "", nil)
	}
	for _, dp := range serverOps(t, r) {
		if v, ok := dp.Attributes.Value("gen_ai.tool.name"); ok {
			t.Errorf("an unknown tool's name %q went into a metric", v.Emit())
		}
	}
	for _, s := range r.ended() {
		if strings.Contains(s.Name(), "nope") {
			t.Errorf("span named %q", s.Name())
		}
		if _, ok := attr(s, "gen_ai.tool.name"); ok {
			t.Errorf("span %q names an unknown tool", s.Name())
		}
	}
}
