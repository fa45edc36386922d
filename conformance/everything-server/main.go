// Command everything-server serves the conformance fixtures of package
// conformance/everything over Streamable HTTP (endpoint /mcp) or stdio, in
// both eras: revision 2026-07-28 and the initialize-handshake revisions
// 2025-11-25, 2025-06-18 and 2025-03-26.
//
//	everything-server -addr 127.0.0.1:3001   # http://127.0.0.1:3001/mcp
//	everything-server -stdio
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "HTTP listen address (HOST:PORT); the endpoint is /mcp")
	useStdio := flag.Bool("stdio", false, "serve over stdin/stdout instead of HTTP")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *useStdio, logger); err != nil {
		fmt.Fprintln(os.Stderr, "everything-server:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, useStdio bool, logger *slog.Logger) error {
	// Both eras: the server serves legacy clients (initialize) beside
	// modern ones by default.
	srv := everything.New(&server.Options{Logger: logger})
	defer srv.Close()
	if useStdio {
		return stdio.Serve(ctx, srv, os.Stdin, os.Stdout, &stdio.Options{Logger: logger})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable.NewHandler(srv, &streamable.Options{Logger: logger}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(os.Stderr, "everything-server: serving http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.Close() // end listen streams gracefully, and legacy sessions, first
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
