// Package everything builds the everything-server: an MCP server exposing
// every fixture the official conformance suite's server scenarios use
// (tools, resources, templates, prompts, completion, MRTR, subscriptions),
// plus an echo tool for benchmarks. The command in
// conformance/everything-server serves it over Streamable HTTP or stdio.
package everything
