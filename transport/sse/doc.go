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
// *server.Server. Each stream runs stdio.ServeMessages over the messages
// POSTed to it, so requests are served exactly as on stdio: concurrently,
// cancelled by notifications/cancelled or with the stream, within the same
// limits. The checks of Streamable HTTP apply (Origin and Host, body size,
// Content-Type), as does its CORS for Options.AllowedOrigins.
//
// Each message is authorized by its own POST: authentication middleware in
// front of the handler (auth/resource.Protect) checks every POST's token,
// and the message is served with what it put on the POST's context (the
// principal, the granted scopes), never with the GET's; only the
// cancellation is the stream's. A POST must come from the principal of
// the GET (transport.WithPrincipal): another's is refused with 403. A POST
// without a sessionId is answered 405, which sends a client probing for
// Streamable HTTP back to the GET, as the specification's
// backwards-compatibility procedure has it.
//
// What clients can make the server hold is bounded. A stream holds at most
// Options.MaxStreamBytes (16 MiB) of messages not yet answered and of
// responses not yet written, counted from before a body is read: a POST
// beyond it is answered 429 with Retry-After, unread, and a client that
// stops reading its stream soon has its POSTs refused. All the streams
// together hold at most Options.MaxBufferedBytes (256 MiB): beyond it, 503
// with Retry-After. At most Options.MaxStreams (1,000) streams are open,
// and one principal may open a hundredth of them
// (Options.MaxStreamsPerPrincipal; 429 beyond it), while callers without a
// principal, which nothing tells apart, share them all.
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
