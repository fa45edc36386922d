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
package client
