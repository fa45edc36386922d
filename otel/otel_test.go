package otel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/otel"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// recorder holds what a Telemetry recorded, in memory.
type recorder struct {
	spans   *tracetest.SpanRecorder
	metrics *sdkmetric.ManualReader
	tel     *otel.Telemetry
}

func newRecorder(t *testing.T, opts *otel.Options) *recorder {
	t.Helper()
	r := &recorder{spans: tracetest.NewSpanRecorder(), metrics: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.metrics))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	var o otel.Options
	if opts != nil {
		o = *opts
	}
	o.TracerProvider, o.MeterProvider = tp, mp
	tel, err := otel.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	r.tel = tel
	return r
}

// ended returns the spans ended so far.
func (r *recorder) ended() []sdktrace.ReadOnlySpan { return r.spans.Ended() }

// find returns the ended spans with the name and kind.
func (r *recorder) find(name string, kind trace.SpanKind) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.ended() {
		if s.Name() == name && s.SpanKind() == kind {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) (string, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, ok := attr(s, k)
		switch {
		case v == "*" && !ok:
			t.Errorf("span %q (%v): no %s", s.Name(), s.SpanKind(), k)
		case v == "-" && ok:
			t.Errorf("span %q (%v): %s = %q, want none", s.Name(), s.SpanKind(), k, got)
		case v != "*" && v != "-" && got != v:
			t.Errorf("span %q (%v): %s = %q, want %q", s.Name(), s.SpanKind(), k, got, v)
		}
	}
}

// testServer has a tool that answers, one that fails (isError) and one
// that asks for the user's name (an MRTR round, or elicitation/create in
// a legacy session).
func testServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "traced", Version: "1.0.0"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallRequest, in echoArgs) (string, error) {
		return in.Text, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "fail"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "", errors.New("it failed")
	})
	server.AddTool(s, &protocol.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		res, err := req.Elicit("name", &protocol.ElicitParams{
			Message:         "Name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Hello, %v!", res.Content["name"]), nil
	})
	return s
}

func testClient(r *recorder, era client.Era) *client.Client {
	return client.New(protocol.Implementation{Name: "tracing-test", Version: "1.0.0"}, &client.Options{
		Era:        era,
		Middleware: []client.Middleware{r.tel.ClientMiddleware()},
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
}

type connectFunc func(t *testing.T, r *recorder, c *client.Client) *client.Session

func connectHTTP(t *testing.T, r *recorder, c *client.Client) *client.Session {
	h := r.tel.HTTPHandler(streamable.NewHandler(transport.Use(testServer(), r.tel.ServerMiddleware()), nil))
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	sess, err := c.ConnectURL(context.Background(), ts.URL, &streamable.ClientOptions{
		HTTPClient: &http.Client{Transport: r.tel.HTTPTransport(nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func connectStdio(t *testing.T, r *recorder, c *client.Client) *client.Session {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stdio.Serve(ctx, transport.Use(testServer(), r.tel.ServerMiddleware()), inR, outW, nil)
		outW.Close()
	}()
	sess, err := c.Connect(ctx, stdio.NewConn(outR, inW, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sess.Close()
		inW.Close()
		cancel()
		<-done
	})
	return sess
}

// TestTraceAcrossTheWire runs a traced client against a traced server over
// Streamable HTTP in both eras and stdio, and checks one trace: the
// client's span is the parent of the server's, with the conventions' names
// and attributes; an MRTR call's rounds are inside one operation; a tool
// error carries error.type.
func TestTraceAcrossTheWire(t *testing.T) {
	for _, tc := range []struct {
		name      string
		era       client.Era
		connect   connectFunc
		transport string
		version   string
	}{
		{"http-modern", client.EraModern, connectHTTP, "tcp", protocol.Version2026_07_28},
		{"http-legacy", client.EraLegacy, connectHTTP, "tcp", protocol.Version2025_11_25},
		{"stdio-modern", client.EraModern, connectStdio, "pipe", protocol.Version2026_07_28},
		{"stdio-legacy", client.EraLegacy, connectStdio, "pipe", protocol.Version2025_11_25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(t, nil)
			sess := tc.connect(t, r, testClient(r, tc.era))
			ctx := context.Background()
			if _, err := sess.CallTool(ctx, "echo", map[string]any{"text": "secret argument"}, nil); err != nil {
				t.Fatal(err)
			}
			res, err := sess.CallTool(ctx, "fail", nil, nil)
			if err != nil || !res.IsError {
				t.Fatalf("fail: %v %+v", err, res)
			}
			if res, err := sess.CallTool(ctx, "greet", nil, nil); err != nil || res.Content[0].(*protocol.TextContent).Text != "Hello, Ada!" {
				t.Fatalf("greet: %v %+v", err, res)
			}
			legacy := tc.era == client.EraLegacy

			// One client span, one server span, parent and child.
			cs := r.find("tools/call echo", trace.SpanKindClient)
			ss := r.find("tools/call echo", trace.SpanKindServer)
			if len(cs) != 1 || len(ss) != 1 {
				t.Fatalf("tools/call echo: %d client and %d server spans, want 1 and 1", len(cs), len(ss))
			}
			if ss[0].Parent().SpanID() != cs[0].SpanContext().SpanID() || ss[0].SpanContext().TraceID() != cs[0].SpanContext().TraceID() {
				t.Errorf("the server span's parent is %v, want the client span %v", ss[0].Parent(), cs[0].SpanContext())
			}
			common := map[string]string{
				"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version": tc.version, "network.transport": tc.transport,
				"error.type": "-", "gen_ai.tool.call.arguments": "-", "gen_ai.tool.call.result": "-",
			}
			wantAttrs(t, cs[0], common)
			wantAttrs(t, ss[0], common)
			wantAttrs(t, ss[0], map[string]string{"jsonrpc.request.id": "*"})
			if legacy {
				wantAttrs(t, ss[0], map[string]string{"mcp.session.id": "*"})
			}
			if tc.transport == "tcp" {
				wantAttrs(t, ss[0], map[string]string{"network.protocol.name": "http", "network.protocol.version": "1.1", "client.address": "127.0.0.1"})
				wantAttrs(t, cs[0], map[string]string{"server.address": "127.0.0.1", "server.port": "*"})
			}
			for _, s := range r.ended() {
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.Emit(), "secret argument") {
						t.Errorf("span %q records the tool's arguments (%s) without being asked to", s.Name(), kv.Key)
					}
				}
			}

			// A tool error.
			for _, kind := range []trace.SpanKind{trace.SpanKindClient, trace.SpanKindServer} {
				fs := r.find("tools/call fail", kind)
				if len(fs) != 1 {
					t.Fatalf("tools/call fail: %d %v spans", len(fs), kind)
				}
				wantAttrs(t, fs[0], map[string]string{"error.type": "tool_error"})
				if fs[0].Status().Code.String() != "Error" {
					t.Errorf("tools/call fail %v: status %v, want Error", kind, fs[0].Status())
				}
			}

			// The MRTR call: one client span; every round and every input
			// request inside it.
			gc := r.find("tools/call greet", trace.SpanKindClient)
			if len(gc) != 1 {
				t.Fatalf("tools/call greet: %d client spans", len(gc))
			}
			op := gc[0].SpanContext()
			gs := r.find("tools/call greet", trace.SpanKindServer)
			wantRounds := 2
			if legacy {
				wantRounds = 1 // the session asks the client within the one request
			}
			if len(gs) != wantRounds {
				t.Fatalf("tools/call greet: %d server spans, want %d", len(gs), wantRounds)
			}
			for _, s := range gs {
				if s.Parent().SpanID() != op.SpanID() || s.SpanContext().TraceID() != op.TraceID() {
					t.Errorf("a round of tools/call greet is not inside the call's span")
				}
			}
			answers := r.find("elicitation/create", trace.SpanKindServer) // the client answering
			if len(answers) != 1 || answers[0].SpanContext().TraceID() != op.TraceID() {
				t.Fatalf("elicitation/create answered in %d spans (or another trace)", len(answers))
			}
			if legacy {
				// The server asked the client: a CLIENT span inside the
				// request's span, parent of the client's answer.
				asks := r.find("elicitation/create", trace.SpanKindClient)
				if len(asks) != 1 {
					t.Fatalf("elicitation/create asked in %d client spans", len(asks))
				}
				if asks[0].Parent().SpanID() != gs[0].SpanContext().SpanID() {
					t.Errorf("the server's elicitation/create span is not inside tools/call greet")
				}
				if answers[0].Parent().SpanID() != asks[0].SpanContext().SpanID() {
					t.Errorf("the client's answer is not a child of the server's request")
				}
			} else if answers[0].Parent().SpanID() != op.SpanID() {
				t.Errorf("the client's answer is not inside the call's span")
			}

			checkMetrics(t, r, tc.transport, tc.version)
		})
	}
}

// checkMetrics checks the operation histograms' names, units and
// attributes.
func checkMetrics(t *testing.T, r *recorder, transportName, version string) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otel.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Errorf("%s is a %T, want a float64 histogram", m.Name, m.Data)
				continue
			}
			if m.Unit != "s" {
				t.Errorf("%s has unit %q, want s", m.Name, m.Unit)
			}
			for _, dp := range h.DataPoints {
				if !slices.Equal(dp.Bounds, otel.Durations) {
					t.Errorf("%s bounds %v", m.Name, dp.Bounds)
				}
				get := func(k string) string { v, _ := dp.Attributes.Value(attribute.Key(k)); return v.Emit() }
				if get("mcp.method.name") != "tools/call" || get("gen_ai.tool.name") != "fail" {
					continue
				}
				found[m.Name] = true
				if get("error.type") != "tool_error" || get("gen_ai.operation.name") != "execute_tool" ||
					get("mcp.protocol.version") != version || get("network.transport") != transportName {
					t.Errorf("%s: attributes %v", m.Name, dp.Attributes.ToSlice())
				}
				if dp.Count != 1 {
					t.Errorf("%s: count %d, want 1", m.Name, dp.Count)
				}
			}
		}
	}
	for _, name := range []string{otel.MetricServerOperationDuration, otel.MetricClientOperationDuration} {
		if !found[name] {
			t.Errorf("no %s data point for tools/call fail", name)
		}
	}
}

// waitFor polls cond until it holds (the server ends its spans after the
// client has its answer).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
