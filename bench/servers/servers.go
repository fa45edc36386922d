package servers

import (
	"context"
	"io"
	"net/http"
)

// Impl is one implementation of the echo server.
type Impl struct {
	// Name identifies it in benchmark names and tables: floor, mcpkit,
	// gosdk, mcpgo.
	Name string
	// HTTP returns a Streamable HTTP handler serving both eras, and a
	// function releasing what it holds.
	HTTP func() (http.Handler, func())
	// Stdio serves newline-delimited JSON-RPC from in to out until in
	// ends or ctx is done.
	Stdio func(ctx context.Context, in io.Reader, out io.Writer) error
}

// All returns the implementations, the floor first.
func All() []Impl {
	return []Impl{Floor(), MCPKit(), GoSDK(), MCPGo()}
}

// Lookup returns the implementation called name.
func Lookup(name string) (Impl, bool) {
	for _, i := range All() {
		if i.Name == name {
			return i, true
		}
	}
	return Impl{}, false
}

// EchoInput is the echo tool's input.
type EchoInput struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}
