package server

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

func benchServer() *Server {
	s := newTestServer(nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	AddTool(s, &protocol.Tool{Name: "echo", Description: "echo"}, func(ctx context.Context, req *CallRequest, in echoArgs) (string, error) {
		return in.Text, nil
	})
	return s
}

var benchCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)

// BenchmarkHandleToolsCall measures the core alone: decoding the message,
// serving tools/call of an echo tool and encoding the response.
func BenchmarkHandleToolsCall(b *testing.B) {
	s := benchServer()
	ctx := context.Background()
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		msg, err := jsonrpc.Decode(benchCall)
		if err != nil {
			b.Fatal(err)
		}
		resp := handle(s, ctx, msg, nil)
		out = resp.Append(out[:0])
	}
	_ = out
}

func BenchmarkHandleToolsList(b *testing.B) {
	s := benchServer()
	ctx := context.Background()
	msg := &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: protocol.MethodToolsList, Params: []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)}
	b.ReportAllocs()
	for b.Loop() {
		handle(s, ctx, msg, nil)
	}
}
