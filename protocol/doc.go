// Package protocol holds the Model Context Protocol's wire vocabulary: method
// names, protocol versions, reserved _meta keys, error codes and the Go types
// of every request and result, as schema/2026-07-28/schema.ts defines them.
//
// It has no behaviour beyond encoding: the server, the client and the
// transports share these types.
//
//	res := &protocol.CallToolResult{
//		Content: []protocol.Content{&protocol.TextContent{Text: "hello"}},
//	}
//	b, _ := json.Marshal(res)
//	// {"resultType":"","content":[{"type":"text","text":"hello"}]}
//
// Errors on the wire are *protocol.Error values (an alias of jsonrpc.Error);
// the constructors here build them with the codes and data shapes the
// specification assigns.
package protocol
