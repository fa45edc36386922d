// Package legacy serves the legacy era of MCP — the initialize handshake
// revisions 2025-11-25, 2025-06-18 and 2025-03-26 — with the same stateless
// core (*server.Server) that serves revision 2026-07-28.
//
// An Adapter is a dual-era handler for the transports: requests carrying
// modern _meta go to the core unchanged; initialize opens a Session, which
// remembers the negotiated version, the client's capabilities, its log
// level and resource subscriptions, turns each later request into a modern
// one for the core, and maps the result back to the legacy shape. When the
// core answers input_required, the session sends the input requests to the
// client as real JSON-RPC requests (sampling/createMessage,
// elicitation/create, roots/list), waits for the answers and retries the
// core with them, so a tool written once, MRTR-style, serves both eras.
//
//	core := server.New(info, nil)
//	// ... register tools, resources, prompts on core ...
//	both := legacy.New(core, nil)
//	http.Handle("/mcp", streamable.NewHandler(both, nil))
package legacy
