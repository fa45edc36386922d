// Package check examines an MCP server the way `mcpkit check TARGET` does:
// it talks to a Streamable HTTP endpoint or a stdio server process, works
// out which eras it serves (revision 2026-07-28 with server/discover and
// per-request _meta, the initialize handshake of 2025-11-25 and earlier, or
// both), and runs a list of checks against the specification, each with a
// stable ID such as "discover.result-type" or "http.origin-rejected". A URL
// that is an endpoint of the deprecated HTTP+SSE transport (2024-11-05),
// found as clients find it, gets that transport's checks ("sse.*") only;
// other targets get every check but those.
//
// The checks never change server data: they send server/discover, the list
// methods, resources/read of listed resources, completion/complete and,
// only when Options.CallTool names a tool the operator calls safe,
// tools/call of that tool. Over HTTP they also send raw requests with
// missing or wrong headers, which a conforming server rejects before
// running anything.
//
//	rep, err := check.Run(ctx, &check.Options{URL: "http://127.0.0.1:3001/mcp"})
//	if err != nil {
//		log.Fatal(err) // the target could not be reached at all
//	}
//	rep.WriteText(os.Stdout)
//	if !rep.OK() {
//		os.Exit(1)
//	}
//
// Each Result is PASS, WARN (a SHOULD is not met), FAIL (a MUST is not met)
// or SKIP (the check does not apply: an HTTP check on a stdio target, a
// modern check on a legacy-only server).
package check
