// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in package.json) against
// mcpkit's fixtures and judges the results strictly: a scenario passes only
// with at least one successful check and no failed, warned or skipped one,
// so that nothing passes vacuously.
//
// The suite is installed with `npm ci` in this directory (make conformance
// does it); the tests are skipped unless MCPKIT_CONFORMANCE_BIN names the
// directory holding its executables (node_modules/.bin).
package conformance
