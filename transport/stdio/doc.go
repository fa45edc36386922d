// Package stdio carries MCP over a byte stream as newline-delimited JSON-RPC,
// the stdio transport: a server reads requests from its standard input and
// writes responses and notifications to its standard output.
//
// Serve runs the server side in front of any transport.Handler. Requests are
// served concurrently; notifications/cancelled cancels the request it names;
// at end of input, in-flight requests are given a short grace period and
// their responses flushed before Serve returns.
//
//	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
//	if err := stdio.Serve(ctx, srv, os.Stdin, os.Stdout, nil); err != nil {
//		log.Fatal(err)
//	}
package stdio
