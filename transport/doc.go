// Package transport holds the small interfaces that connect MCP transports
// (transport/stdio, transport/streamable) to whatever serves the messages,
// the way net/http connects a server to an http.Handler. A transport depends
// on these interfaces only, never on the server or client packages.
//
// A server plugs into any transport through Handler; the dual-era adapter
// (server/legacy) adds LegacyHandler and Session for the handshake era:
//
//	srv := server.New(info, nil)                       // a transport.Handler
//	http.Handle("/mcp", streamable.NewHandler(srv, nil))
//	go stdio.Serve(ctx, legacy.New(srv, nil), os.Stdin, os.Stdout, nil)
package transport
