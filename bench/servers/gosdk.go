package servers

import (
	"context"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func newGoSDKServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoInput) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

// GoSDK is the official Go SDK's server with a typed echo tool, over
// IOTransport and its Streamable HTTP handlers. Its stateful handler
// serves only the handshake era and its stateless one only the modern
// era, so requests are routed on MCP-Protocol-Version between the two.
func GoSDK() Impl {
	return Impl{
		Name: "gosdk",
		HTTP: func() (http.Handler, func()) {
			s := newGoSDKServer()
			get := func(*http.Request) *mcp.Server { return s }
			stateful := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: true})
			stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: true, Stateless: true})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("MCP-Protocol-Version") >= "2026-07-28" {
					stateless.ServeHTTP(w, r)
					return
				}
				stateful.ServeHTTP(w, r)
			})
			return h, func() {}
		},
		Stdio: func(ctx context.Context, in io.Reader, out io.Writer) error {
			s := newGoSDKServer()
			return s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
