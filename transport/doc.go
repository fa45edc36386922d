// Package transport holds the small interfaces that connect MCP transports
// (transport/stdio, transport/streamable, the deprecated HTTP+SSE
// transport/sse, and transport/inmemory for tests) to whatever serves the
// messages, the way net/http connects a server to an http.Handler. A
// transport depends on these interfaces only, never on the server or client
// packages.
//
// A server plugs into any transport through Handler: one interface with
// all a handler offers (Serve for the requests of both eras, Receive for
// the client's other messages, ParamHeaders, Legacy), so a wrapper that
// embeds a Handler keeps every feature. Use adds middleware that way:
//
//	srv := server.New(info, nil)                       // a transport.Handler
//	h := transport.Use(srv, logRequests)               // still one
//	http.Handle("/mcp", streamable.NewHandler(h, nil))
//	go stdio.Serve(ctx, h, os.Stdin, os.Stdout, nil)
package transport
