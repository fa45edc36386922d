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
//
// Decode and Unmarshal apply one policy to JSON a peer sent: one JSON text,
// valid UTF-8, no member name repeated in any object, and (for Unmarshal
// into structs) member names matched exactly, so that every reader of a
// message sees the same values. Decode params and other client-sent JSON
// with Unmarshal, not encoding/json:
//
//	var p struct {
//		Name string `json:"name"`
//	}
//	if err := jsonrpc.Unmarshal(msg.Params, &p); err != nil {
//		// *jsonrpc.SyntaxError, or a type error from encoding/json
//	}
package jsonrpc
