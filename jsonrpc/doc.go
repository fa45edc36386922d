// Package jsonrpc implements the JSON-RPC 2.0 messages that MCP is built on:
// strict decoding of one message, and encoding of requests, notifications and
// responses. It knows nothing about MCP itself.
//
// Decode classifies a message and rejects anything JSON-RPC 2.0 does not
// allow (a missing or wrong "jsonrpc" member, a null request id, a response
// with both result and error):
//
//	msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
//	if err != nil {
//		// err is a *jsonrpc.Error with code -32700 or -32600
//	}
//	if msg.IsRequest() {
//		fmt.Println(msg.Method, msg.ID) // ping 1
//	}
package jsonrpc
