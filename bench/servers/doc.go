// Package servers builds the same echo server with each implementation
// the benchmarks compare: mcpkit, the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), mark3labs/mcp-go and a bare
// net/http floor that decodes the JSON-RPC request and writes the echo
// result with no MCP machinery at all.
//
// Each Impl serves the tool "echo" ({"text": string} → that text as text
// content) over Streamable HTTP, in both eras where the implementation
// has them, and over a stdio stream:
//
//	for _, impl := range servers.All() {
//		h, stop := impl.HTTP()
//		defer stop()
//		http.Handle("/"+impl.Name, h)
//	}
package servers
