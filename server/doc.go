// Package server is the stateless core of an MCP server (revision
// 2026-07-28): registries of tools, resources, resource templates, prompts
// and completions, and Server.ServeModern, which answers one request from
// the request alone — its _meta carries the protocol version and the
// client's capabilities — with a typed result or an error. Server.Serve
// puts the legacy era (package server/legacy: initialize, sessions) in
// front of it, so a Server serves the clients of both eras; it is a
// transport.Handler, which transports (transport/stdio,
// transport/streamable) serve.
//
// A tool is a Go function. Its input schema is inferred from the argument
// type (see package schema for the struct tags), arguments are validated
// before the function runs, and a Go error becomes a tool result with
// isError set:
//
//	type args struct {
//		City string `json:"city" description:"City name"`
//	}
//	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"}, nil)
//	server.AddTool(s, &protocol.Tool{Name: "forecast", Description: "Tomorrow's weather"},
//		func(ctx context.Context, req *server.CallRequest, in args) (string, error) {
//			return "Sunny in " + in.City, nil
//		})
//	http.Handle("/mcp", streamable.NewHandler(s, nil)) // or stdio.Serve(ctx, s, os.Stdin, os.Stdout, nil)
//	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
//
// Handlers that need the user or the client's model ask in straight-line Go
// (multi round-trip requests): Request.Elicit, CreateMessage and ListRoots
// return the client's answer on the retry that carries it, and
// ErrInputRequired until then, which the handler returns as it is. The
// server seals what it needs to resume into requestState (AES-GCM, bound to
// the method, the salient params, the principal and an expiry).
//
// Features may need OAuth scopes: register them with RequireScopes. Where
// authentication middleware put the caller's scopes on the context
// (WithScopes), lists leave out what the caller may not use (and are then
// cacheScope "private"), and using it is refused with
// protocol.InsufficientScope (HTTP 403). A legacy session is bound to the
// principal (WithPrincipal) of its initialize.
//
// Change notifications reach subscriptions/listen streams through a Feed;
// AddTool and the other registration methods announce list changes
// themselves, NotifyResourceUpdated announces a resource change. A
// replicated deployment implements Feed (package feed) over its broker.
//
// A handler's log records reach the client that asked for them (a log
// level in the request's _meta, or logging/setLevel in a legacy session)
// through log/slog: slog.New(NewLogHandler(req.Request, "name")). The
// server's own diagnostics (recovered panics, store and feed failures,
// refused requestState) go to Options.Logger, structured; tracing and
// metrics are middleware (package otel).
package server
