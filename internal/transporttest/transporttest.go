// Package transporttest helps the transports' tests script a handler with
// functions that return whole JSON-RPC responses.
package transporttest

import (
	"encoding/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// Raw is a result already encoded.
type Raw struct {
	protocol.ResultHeader
	JSON json.RawMessage
}

// MarshalJSON returns the encoded result.
func (r *Raw) MarshalJSON() ([]byte, error) { return r.JSON, nil }

// Serve turns a scripted response into what Handler.Serve returns: the
// result as it is, the error, or ErrNoResponse for nil.
func Serve(resp *jsonrpc.Response) (protocol.Result, error) {
	switch {
	case resp == nil:
		return nil, transport.ErrNoResponse
	case resp.Error != nil:
		return nil, resp.Error
	}
	return &Raw{JSON: resp.Result}, nil
}
