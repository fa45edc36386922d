package otel_test

import (
	"context"
	"encoding/json"
	"maps"
	"os/exec"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/otel"
	"github.com/mcpkit/mcpkit/protocol"
)

// TestRecordToolCalls: arguments and results are recorded only when asked
// for, and bounded.
func TestRecordToolCalls(t *testing.T) {
	r := newRecorder(t, &otel.Options{RecordToolCalls: true, MaxRecordedBytes: 200})
	sess := connectStdio(t, r, testClient(r, client.EraModern))
	ctx := context.Background()
	if _, err := sess.CallTool(ctx, "echo", map[string]any{"text": "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 400)
	if _, err := sess.CallTool(ctx, "echo", map[string]any{"text": long}, nil); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []trace.SpanKind{trace.SpanKindClient, trace.SpanKindServer} {
		spans := r.find("tools/call echo", kind)
		if len(spans) != 2 {
			t.Fatalf("%d %v spans", len(spans), kind)
		}
		if got, _ := attr(spans[0], "gen_ai.tool.call.arguments"); got != `{"text":"hi"}` {
			t.Errorf("%v: arguments %q", kind, got)
		}
		if got, _ := attr(spans[0], "gen_ai.tool.call.result"); !strings.Contains(got, `"hi"`) {
			t.Errorf("%v: result %q", kind, got)
		}
		got, _ := attr(spans[1], "gen_ai.tool.call.arguments")
		if !strings.HasSuffix(got, "…") || len(got) > 200+len("…") {
			t.Errorf("%v: long arguments recorded as %q, want at most 200 bytes and …", kind, got)
		}
	}
}

// TestSessionDurations: a legacy session's life on the server, and a
// client session's.
func TestSessionDurations(t *testing.T) {
	r := newRecorder(t, nil)
	sess := connectStdio(t, r, testClient(r, client.EraLegacy))
	ended := r.tel.SessionStarted(sess)
	if err := sess.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	sess.Close()
	ended(nil)
	seen := map[string]bool{}
	waitFor(t, "the server's session duration", func() bool {
		var rm metricdata.ResourceMetrics
		if err := r.metrics.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch m.Name {
				case otel.MetricServerSessionDuration, otel.MetricClientSessionDuration:
					if m.Unit != "s" {
						t.Errorf("%s: unit %q", m.Name, m.Unit)
					}
					for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
						v, _ := dp.Attributes.Value("mcp.protocol.version")
						tr, _ := dp.Attributes.Value("network.transport")
						if v.Emit() != protocol.Version2025_11_25 || tr.Emit() != "pipe" {
							t.Errorf("%s: attributes %v", m.Name, dp.Attributes.ToSlice())
						}
						seen[m.Name] = true
					}
				}
			}
		}
		return seen[otel.MetricServerSessionDuration] && seen[otel.MetricClientSessionDuration]
	})
}

// TestNestedCallsInOneOperation: a middleware inside the tracing one that
// makes further calls for a call (as a Tasks extension polls tasks/get)
// keeps them inside the call's span, through Session.Call and through
// next.
func TestNestedCallsInOneOperation(t *testing.T) {
	r := newRecorder(t, nil)
	var sess *client.Session
	poller := client.Middleware{Call: func(next client.CallFunc) client.CallFunc {
		return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
			raw, err := next(ctx, c)
			if err != nil || c.Method != protocol.MethodToolsCall {
				return raw, err
			}
			// Through the session: a span of its own inside the call's.
			if err := sess.Call(ctx, protocol.MethodToolsList, nil, nil, &client.CallOptions{NoCache: true}); err != nil {
				return nil, err
			}
			// Through next, with the call's Meta.
			_, err = next(ctx, &client.Call{Method: protocol.MethodToolsList, Meta: maps.Clone(c.Meta), Options: &client.CallOptions{NoCache: true}})
			return raw, err
		}
	}}
	c := client.New(protocol.Implementation{Name: "poller", Version: "1"}, &client.Options{
		Era:        client.EraModern,
		Middleware: []client.Middleware{r.tel.ClientMiddleware(), poller},
	})
	sess = connectStdio(t, r, c)
	if _, err := sess.CallTool(context.Background(), "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	op := r.find("tools/call echo", trace.SpanKindClient)
	if len(op) != 1 {
		t.Fatalf("%d call spans", len(op))
	}
	id := op[0].SpanContext().SpanID()
	pings := r.find("tools/list", trace.SpanKindClient)
	if len(pings) != 1 || pings[0].Parent().SpanID() != id {
		t.Fatalf("the nested tools/list's client span is not a child of the call's")
	}
	var viaSession, viaNext int
	for _, s := range r.find("tools/list", trace.SpanKindServer) {
		switch s.Parent().SpanID() {
		case pings[0].SpanContext().SpanID():
			viaSession++
		case id:
			viaNext++
		}
	}
	if viaSession != 1 || viaNext != 1 {
		t.Errorf("server tools/list spans: %d children of the nested call's span (want 1), %d of the call's (want 1)", viaSession, viaNext)
	}
}

// TestCoreDoesNotLinkOpenTelemetry: programs that do not import this
// package do not link OpenTelemetry.
func TestCoreDoesNotLinkOpenTelemetry(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "../server/...", "../client/...", "../transport/...", "../protocol/...", "../jsonrpc/...", "../auth/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "go.opentelemetry.io/") {
			t.Errorf("the core depends on %s", dep)
		}
	}
}
