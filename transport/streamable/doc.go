// Package streamable serves MCP over Streamable HTTP (revision 2026-07-28)
// as an http.Handler in front of any transport.Handler, such as
// *server.Server.
//
// Every request passes a validation pipeline before it reaches the
// handler: Origin and Host (DNS-rebinding protection), method (POST only),
// Content-Type, Accept, body size, one JSON-RPC message per body, and the
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers checked
// against the body. Failures are answered with a JSON-RPC error body and the
// status the specification assigns.
//
// A response is a single JSON object unless the request produces
// notifications (progress, log messages, a subscriptions/listen stream) or
// the client prefers text/event-stream; then it is an SSE stream that ends
// with the response.
//
// A subscriptions/listen stream lasts as long as its client stays. On
// HTTP/1.x the handler takes its connection over from net/http (the
// KeepListenStreams option turns this off) and, with a handler that
// implements transport.AsyncHandler as *server.Server does, an idle stream
// then holds no goroutine: about 6 KiB of memory each. http.Server.Shutdown
// ends such streams through a hook the handler registers; a program that
// serves the handler otherwise calls Handler.CloseStreams when it stops.
//
//	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
//	http.Handle("/mcp", streamable.NewHandler(srv, nil))
//	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
package streamable
