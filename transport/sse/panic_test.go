package sse

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// TestPanicOnStream: a panic in middleware serving a POSTed request is
// answered on the stream with -32603 and no detail, and the stream goes on
// serving.
func TestPanicOnStream(t *testing.T) {
	checkLeaks(t)
	s, _ := testServer(t)
	h := transport.Use(s, func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			if req.Message.Method == protocol.MethodToolsList {
				panic("secret detail")
			}
			return next(ctx, req)
		}
	})
	hs := serveHTTP(t, NewHandler(h, nil))
	st := openStream(t, hs, "/sse")
	st.initialize()
	if code, b := st.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", code, b)
	}
	if m := st.message(); m != `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}` {
		t.Fatalf("after a panic: %s", m)
	}
	if code, b := st.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`); code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", code, b)
	}
	if m := st.message(); !strings.Contains(m, "echo: still here") {
		t.Fatalf("the stream after a panic: %s", m)
	}
}
