// Command everything-client is the client side of the conformance suite:
// `conformance client --command everything-client` runs it once per
// scenario, with the scenario in MCP_CONFORMANCE_SCENARIO, the protocol
// version in MCP_CONFORMANCE_PROTOCOL_VERSION and the server URL as the last
// argument. It drives package client through what each scenario checks and
// exits; it gives up by itself before the suite's timeout, so that a hung
// scenario never leaves it running.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: everything-client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	version := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	// A hard stop too, should anything ignore the context.
	time.AfterFunc(28*time.Second, func() {
		fmt.Fprintln(os.Stderr, "everything-client: giving up")
		os.Exit(3)
	})
	if err := run(ctx, scenario, version, url, logger); err != nil {
		fmt.Fprintf(os.Stderr, "everything-client: %s: %v\n", scenario, err)
		os.Exit(1)
	}
}
