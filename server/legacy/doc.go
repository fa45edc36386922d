// Package legacy serves the legacy era of MCP — the initialize handshake
// revisions 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05 — with the
// same stateless core (*server.Server) that serves revision 2026-07-28.
//
// Every *server.Server has an Adapter in front of its core (configured by
// server.Options.Legacy), so a server serves both eras by itself; New makes
// another, for a core served with other legacy options.
//
// An Adapter is a dual-era transport.Handler: requests carrying modern
// _meta go to the core unchanged; initialize opens a Session, which
// remembers the negotiated version, the client's capabilities, its log
// level and resource subscriptions, turns each later request into a modern
// one for the core, and maps the typed result back to the shape of the
// negotiated revision (without resultType, cache hints and serverInfo,
// nor the members later revisions added; resource-not-found as -32002).
// When the core answers input_required, the session sends the input
// requests to the client as real JSON-RPC requests (sampling/createMessage,
// elicitation/create, roots/list), waits for the answers and retries the
// core with them, so a tool written once, MRTR-style, serves both eras.
//
//	srv := server.New(info, &server.Options{Legacy: legacy.Options{IdleTimeout: time.Hour}})
//	// ... register tools, resources, prompts on srv ...
//	http.Handle("/mcp", streamable.NewHandler(srv, nil))
package legacy
