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
//		// err is a *jsonrpc.Error with code -32700, -32600 or -32602
//	}
//	if msg.IsRequest() {
//		fmt.Println(msg.Method, msg.ID) // ping 1
//	}
//
// Decode and Unmarshal apply one policy to JSON a peer sent, the defaults
// of github.com/go-json-experiment/json (the module that becomes
// encoding/json/v2) and its jsontext: one JSON text, valid UTF-8, no
// member name repeated in any object, nesting bounded, and (for
// Unmarshal into structs) member names matched exactly, so that every
// reader of a message sees the same values. Decode params and other
// peer-sent JSON with Unmarshal, not encoding/json:
//
//	var p struct {
//		Name string `json:"name"`
//	}
//	if err := jsonrpc.Unmarshal(msg.Params, &p); err != nil {
//		// *jsonrpc.SyntaxError, or a *json.SemanticError of go-json-experiment
//	}
//
// Decode reads a message once: the params it returns are checked, and a
// params object is split into its members as it is read, which
// Message.EachParam hands out without reading them again. EachMember does
// the same for any object, StringValue reads one string, and Any keeps
// numbers exact where an any would make them float64. Encoding stays
// with encoding/json and the hand-written Append functions.
package jsonrpc
