// Package stdio carries MCP over a byte stream as newline-delimited JSON-RPC,
// the stdio transport: a server reads requests from its standard input and
// writes responses and notifications to its standard output.
//
// Serve runs the server side in front of any transport.Handler. Requests are
// served concurrently; notifications/cancelled cancels the request it names;
// at end of input, in-flight requests are given a short grace period and
// their responses flushed before Serve returns.
//
// What a peer can make the server hold is bounded: a message by
// Options.MaxLineBytes (16 MiB), the requests read and not yet answered by
// Options.MaxPending (4,096) and, with the responses not yet written, by
// Options.MaxPendingBytes (32 MiB): a request beyond them is answered at
// once with a -32603 "server busy" error instead of being kept. The input
// goes on being read meanwhile, so a cancellation or the client's answer to
// a request of the server is never stuck behind busy requests; a peer that
// stops reading its output holds at most Options.MaxConcurrent responses,
// and its requests are refused once they fill the budget.
//
// ServeMessages is the same engine over a MessageReader, whose messages
// each carry the context they are served with: the deprecated HTTP+SSE
// transport hands it every POSTed message with the POST's own principal
// and scopes.
//
//	srv := server.New(protocol.Implementation{Name: "demo", Version: "1.0.0"}, nil)
//	if err := stdio.Serve(ctx, srv, os.Stdin, os.Stdout, nil); err != nil {
//		log.Fatal(err)
//	}
package stdio
