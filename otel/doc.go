// Package otel traces and measures MCP servers and clients with
// OpenTelemetry, by the semantic conventions for MCP: a span per request
// on the server and per call on the client, named
// "{mcp.method.name} {target}" and carrying mcp.method.name,
// jsonrpc.request.id, gen_ai.tool.name, gen_ai.prompt.name,
// gen_ai.operation.name, mcp.resource.uri, mcp.protocol.version,
// mcp.session.id, network.transport, error.type and
// rpc.response.status_code; and the histograms
// mcp.server.operation.duration, mcp.client.operation.duration,
// mcp.server.session.duration and mcp.client.session.duration, in seconds.
// Trace context travels in each request's _meta (traceparent, tracestate,
// baggage) in both eras, so the client's span is the parent of the
// server's across any transport.
//
// The smallest traced server and client:
//
//	tel, _ := otel.New(nil) // the global tracer and meter providers
//	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"}, nil)
//	h := tel.HTTPHandler(streamable.NewHandler(transport.Use(s, tel.ServerMiddleware()), nil))
//	http.Handle("/mcp", h)
//
//	c := client.New(info, &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware()}})
//	sess, _ := c.ConnectURL(ctx, url, &streamable.ClientOptions{
//		HTTPClient: &http.Client{Transport: tel.HTTPTransport(nil)}, // the traceparent header too
//	})
//
// Over stdio, serve transport.Use(s, tel.ServerMiddleware()) with
// stdio.Serve. Nothing is recorded of a tool call's arguments or result
// unless Options.RecordToolCalls says so. Programs that do not import
// this package do not link OpenTelemetry: the server, client and
// transports do not depend on it.
package otel
