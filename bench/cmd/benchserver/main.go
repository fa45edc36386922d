// Command benchserver serves one implementation's echo server for the
// loopback comparison (make bench): over Streamable HTTP at /mcp, or over
// stdio.
//
//	benchserver -impl gosdk -addr 127.0.0.1:3002
//	benchserver -impl mcpkit -stdio
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	runpprof "runtime/pprof"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
)

func main() {
	name := flag.String("impl", "mcpkit", "the implementation: floor, mcpkit, gosdk or mcpgo")
	addr := flag.String("addr", "127.0.0.1:0", "HTTP listen address; the endpoint is /mcp")
	useStdio := flag.Bool("stdio", false, "serve over stdin/stdout instead of HTTP")
	withPprof := flag.Bool("pprof", false, "also serve net/http/pprof at /debug/pprof/ (HTTP only)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this `file` (stdio too)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = runpprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchserver:", err)
			os.Exit(1)
		}
		defer func() {
			runpprof.StopCPUProfile()
			f.Close()
		}()
	}
	impl, ok := servers.Lookup(*name)
	if !ok {
		fmt.Fprintf(os.Stderr, "benchserver: unknown implementation %q\n", *name)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, impl, *addr, *useStdio, *withPprof); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		stop()
		runpprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(ctx context.Context, impl servers.Impl, addr string, useStdio, withPprof bool) error {
	if useStdio {
		return impl.Stdio(ctx, os.Stdin, os.Stdout)
	}
	h, release := impl.HTTP()
	defer release()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// The address line tells the driver where to connect.
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
