package transport

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// TestAppendResponse: AppendResponse appends exactly what Respond's
// response encodes to, after what dst held, and nothing when Respond has
// no response.
func TestAppendResponse(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tool := &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: "a \"quoted\" line\n"}},
		StructuredContent: json.RawMessage(`{ "n" : 1 }`)}
	tool.ResultType = protocol.ResultComplete
	for _, c := range []struct {
		name string
		ctx  context.Context
		id   jsonrpc.ID
		res  protocol.Result
		err  error
	}{
		{"tool", ctx, jsonrpc.IntID(7), tool, nil},
		{"tool error", ctx, jsonrpc.StringID("s"), &protocol.CallToolResult{IsError: true}, nil},
		{"bad structured content", ctx, jsonrpc.IntID(1), &protocol.CallToolResult{StructuredContent: json.RawMessage(`{`)}, nil},
		{"nil tool result", ctx, jsonrpc.IntID(2), (*protocol.CallToolResult)(nil), errors.New("failed")},
		{"other result", ctx, jsonrpc.IntID(3), &protocol.EmptyResult{}, nil},
		{"error", ctx, jsonrpc.IntID(4), nil, protocol.InvalidParams("no")},
		{"cancelled", cancelled, jsonrpc.IntID(5), nil, context.Canceled},
	} {
		prefix := []byte("held;")
		got, ok := AppendResponse(c.ctx, prefix, c.id, c.res, c.err)
		resp := Respond(c.ctx, c.id, c.res, c.err)
		if (resp != nil) != ok {
			t.Errorf("%s: AppendResponse reports %v, Respond gave %v", c.name, ok, resp)
			continue
		}
		want := "held;"
		if resp != nil {
			want += string(resp.Append(nil))
		}
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}
