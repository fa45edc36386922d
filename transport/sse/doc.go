// Package sse serves and speaks the HTTP+SSE transport of MCP revision
// 2024-11-05, which revision 2025-03-26 deprecated in favour of Streamable
// HTTP. It is served for the clients of that era that never learnt the new
// transport.
//
// A client opens a stream with a GET; the server's first event, endpoint,
// names the URL the client then POSTs its messages to, one JSON-RPC
// message per request, each answered 202 Accepted: the responses, and
// every other message of the server (notifications, its requests for
// sampling, elicitation or roots), come as message events on the stream.
// The stream is the connection: one initialize, one legacy session, ending
// with it.
//
// Handler serves it in front of any transport.Handler, such as
// *server.Server. Each stream runs stdio.Serve over the messages POSTed to
// it, with the GET's context, so requests are served exactly as on stdio:
// concurrently, cancelled by notifications/cancelled, within the same
// limits. The checks of Streamable HTTP apply (Origin and Host, body size,
// Content-Type), as does its CORS for Options.AllowedOrigins, and a POST must come from the principal of the GET
// (transport.WithPrincipal): another's is refused with 403. A POST without
// a sessionId is answered 405, which sends a client probing for Streamable
// HTTP back to the GET, as the specification's backwards-compatibility
// procedure has it.
//
// Mount it beside the Streamable HTTP endpoint; by default the message
// endpoint is the stream's own path:
//
//	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
//	mux := http.NewServeMux()
//	mux.Handle("/mcp", streamable.NewHandler(srv, nil))
//	mux.Handle("/sse", sse.NewHandler(srv, nil))
//
// or, with separate paths as other servers have them, announce the message
// path and mount the handler at both:
//
//	h := sse.NewHandler(srv, &sse.Options{MessagePath: "/messages"})
//	mux.Handle("/sse", h)
//	mux.Handle("/messages", h)
//
// Dial is the client side: a transport.ClientConn for package client,
// which speaks the initialize handshake over it.
package sse
