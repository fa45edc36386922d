package otel_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/otel"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// A traced server and a traced client over Streamable HTTP: the client's
// span is the parent of the server's, across the wire, through _meta.
// (A program would give New its OTLP exporter's providers, or set the
// global ones.)
func Example() {
	spans := tracetest.NewSpanRecorder()
	tel, _ := otel.New(&otel.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))})

	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "forecast"},
		func(ctx context.Context, req *server.CallRequest, in struct {
			City string `json:"city"`
		}) (string, error) {
			return "Sunny in " + in.City, nil
		})
	ts := httptest.NewServer(tel.HTTPHandler(streamable.NewHandler(transport.Use(s, tel.ServerMiddleware()), nil)))
	defer ts.Close()

	c := client.New(protocol.Implementation{Name: "agent", Version: "1.0.0"},
		&client.Options{Middleware: []client.Middleware{tel.ClientMiddleware()}})
	ctx := context.Background()
	sess, err := c.ConnectURL(ctx, ts.URL, &streamable.ClientOptions{HTTPClient: &http.Client{Transport: tel.HTTPTransport(nil)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	if _, err := sess.CallTool(ctx, "forecast", map[string]any{"city": "Lyon"}, nil); err != nil {
		fmt.Println(err)
		return
	}

	ids := map[string]string{}
	for _, span := range spans.Ended() {
		ids[span.SpanContext().SpanID().String()] = span.Name()
	}
	for _, span := range spans.Ended() {
		if parent, ok := ids[span.Parent().SpanID().String()]; ok {
			fmt.Printf("%s (%s) is a child of %s\n", span.Name(), span.SpanKind(), parent)
		}
	}
	// Output:
	// tools/call forecast (server) is a child of tools/call forecast
}
