package servers

import (
	"context"
	"io"
	"net/http"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// MCPKit is mcpkit's everything-server (whose echo tool is the one
// compared) behind the legacy adapter, so it serves both eras.
func MCPKit() Impl {
	return Impl{
		Name: "mcpkit",
		HTTP: func() (http.Handler, func()) {
			core := everything.New(nil)
			both := legacy.New(core, nil)
			return streamable.NewHandler(both, nil), func() { both.Close(); core.Close() }
		},
		Stdio: func(ctx context.Context, in io.Reader, out io.Writer) error {
			core := everything.New(nil)
			defer core.Close()
			both := legacy.New(core, nil)
			defer both.Close()
			return stdio.Serve(ctx, both, in, out, nil)
		},
	}
}
