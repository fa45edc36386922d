package servers

import (
	"context"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func newMCPGoServer() *server.MCPServer {
	s := server.NewMCPServer("bench-mcpgo", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("echo the text"), mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, err := req.RequireString("text")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(text), nil
		})
	return s
}

// MCPGo is mark3labs/mcp-go's server with the echo tool, served by its
// Streamable HTTP server and stdio server.
func MCPGo() Impl {
	return Impl{
		Name: "mcpgo",
		HTTP: func() (http.Handler, func()) {
			return server.NewStreamableHTTPServer(newMCPGoServer()), func() {}
		},
		Stdio: func(ctx context.Context, in io.Reader, out io.Writer) error {
			return server.NewStdioServer(newMCPGoServer()).Listen(ctx, in, out)
		},
	}
}
