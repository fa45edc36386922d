package legacy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// BenchmarkSessionToolsCall measures a legacy tools/call of an echo tool
// through a session, to compare with the core's BenchmarkHandleToolsCall.
func BenchmarkSessionToolsCall(b *testing.B) {
	core := server.New(protocol.Implementation{Name: "bench", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	server.AddTool(core, &protocol.Tool{Name: "echo", Description: "echo"}, func(ctx context.Context, req *server.CallRequest, in echoArgs) (string, error) {
		return in.Text, nil
	})
	a := legacy.New(core, nil)
	defer a.Close()
	sess, _ := a.Initialize(context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: protocol.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)})
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		msg, err := jsonrpc.Decode(body)
		if err != nil {
			b.Fatal(err)
		}
		out = sess.Handle(ctx, msg, nil).Append(out[:0])
	}
}

// BenchmarkSessionToolsList measures a legacy tools/list of tools with
// members of every revision, in the newest legacy revision (nothing to
// leave out) and the oldest (copies without most members).
func BenchmarkSessionToolsList(b *testing.B) {
	core := server.New(protocol.Implementation{Name: "bench", Version: "1"}, nil)
	readOnly := true
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		server.AddTool(core, &protocol.Tool{Name: name, Title: "Tool " + name, Description: "d",
			Annotations: &protocol.ToolAnnotations{ReadOnlyHint: &readOnly},
			Icons:       []protocol.Icon{{Src: "https://example.com/i.png"}}},
			func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) { return "", nil })
	}
	a := legacy.New(core, nil)
	defer a.Close()
	for _, v := range []string{protocol.Version2025_11_25, "2024-11-05"} {
		b.Run(v, func(b *testing.B) {
			sess, _ := a.Initialize(context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: protocol.MethodInitialize,
				Params: json.RawMessage(`{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)})
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			ctx := context.Background()
			b.ReportAllocs()
			var out []byte
			for b.Loop() {
				msg, err := jsonrpc.Decode(body)
				if err != nil {
					b.Fatal(err)
				}
				out = sess.Handle(ctx, msg, nil).Append(out[:0])
			}
		})
	}
}
