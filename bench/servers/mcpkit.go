package servers

import (
	"context"
	"io"
	"net/http"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// MCPKit is mcpkit's everything-server (whose echo tool is the one
// compared); it serves both eras.
func MCPKit() Impl {
	return Impl{
		Name: "mcpkit",
		HTTP: func() (http.Handler, func()) {
			core := everything.New(nil)
			return streamable.NewHandler(core, nil), func() { core.Close() }
		},
		Stdio: func(ctx context.Context, in io.Reader, out io.Writer) error {
			core := everything.New(nil)
			defer core.Close()
			return stdio.Serve(ctx, core, in, out, nil)
		},
	}
}
