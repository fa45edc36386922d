// Package client is an MCP client for servers of both eras: revision
// 2026-07-28 (stateless, per-request _meta) and the initialize-handshake
// revisions up to 2025-11-25, over stdio or Streamable HTTP.
//
// Connect detects the server's era as the specification prescribes — a
// server/discover probe on stdio, a modern request whose 400 answer is
// inspected on HTTP — and returns a Session whose methods speak the right
// shape. Input the server asks for (elicitation, sampling, roots) is
// answered by the handlers set in Options, whether it arrives as an MRTR
// input_required result or, from a legacy server, as a request; list and
// read results are cached for as long as the server allows.
//
//	c := client.New(protocol.Implementation{Name: "agent", Version: "1.0.0"}, nil)
//	s, err := c.Connect(ctx, streamable.NewClient("http://127.0.0.1:3001/mcp", nil))
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer s.Close()
//	res, err := s.CallTool(ctx, "echo", map[string]any{"text": "hi"}, nil)
//
// Every method of a Session goes through Session.Call, which is public:
// an extension's methods are called by name with the same era handling,
// input rounds, retries and cancellation as the built-in ones.
// CallOptions.Meta adds members (a trace context, an extension's) to the
// _meta of every round of a call, never replacing the client's own.
//
// Options.Middleware wraps, per session, every call (one logical call with
// all its input rounds: the method, params and extra _meta on the way in,
// the raw result or error on the way out) and every message the server
// sends outside a response (notifications, and its requests for input,
// legacy requests and MRTR input requests alike, with the answer). The
// innermost call returns a result of a type an extension defines as it
// came, so that a middleware can turn it into the complete result:
//
//	tasks := client.Middleware{Call: func(next client.CallFunc) client.CallFunc {
//		return func(ctx context.Context, c *client.Call) (json.RawMessage, error) {
//			c.Meta["traceparent"] = traceparent // every round carries it
//			res, err := next(ctx, c)
//			if err == nil && isTask(res) {
//				return pollToEnd(ctx, next, res) // its own calls through next
//			}
//			return res, err
//		}
//	}}
package client
