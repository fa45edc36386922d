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
// Options.AllowedOrigins also turns on CORS for the origins it lists, so
// that their pages can call the endpoint: preflights (OPTIONS) for GET,
// POST and DELETE with the MCP request headers are answered 204, and every
// response names the origin in Access-Control-Allow-Origin and exposes
// Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version and Retry-After.
// Credentials go in the Authorization header, never as cookies, so
// Access-Control-Allow-Credentials is not sent.
//
// A response is a single JSON object unless the request produces
// notifications (progress, log messages, a subscriptions/listen stream) or
// the client prefers text/event-stream; then it is an SSE stream that ends
// with the response.
//
// A subscriptions/listen stream lasts as long as its client stays; it is
// served like any request, on net/http's goroutine for it, with the same
// write deadlines and middleware on HTTP/1.1 and HTTP/2. When an
// http.Server serving the handler shuts down, its listen and standalone
// streams end (a hook the handler registers), so that Shutdown does not
// wait for them.
//
// The HTTP status of an answer comes from one table, Status: a JSON-RPC
// error the specification gives a status (unknown method 404, header and
// _meta errors 400, no room 503 with Retry-After) is answered with it.
// Refusals of authorization are 403 in both eras; an insufficient scope
// carries WWW-Authenticate: Bearer error="insufficient_scope" with the
// scopes needed (Challenge).
//
//	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
//	http.Handle("/mcp", streamable.NewHandler(srv, nil))
//	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
package streamable
