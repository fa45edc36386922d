package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/mcpkit/mcpkit/protocol"
)

func runVersion(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "version", `Print mcpkit's version, the Go version it was built with and the
protocol revisions it speaks.`, "[--json]")
	s.fs = flag.NewFlagSet("version", flag.ContinueOnError)
	s.fs.SetOutput(io.Discard)
	s.fs.BoolVar(&s.c.json, "json", false, "print machine-readable JSON")
	rest, code, done := s.parse(args, false)
	if done {
		return code
	}
	if len(rest) > 0 {
		return s.usageError(fmt.Sprintf("unexpected argument %q", rest[0]))
	}
	v := struct {
		Version string   `json:"version"`
		Go      string   `json:"go"`
		Modern  []string `json:"modernVersions"`
		Legacy  []string `json:"legacyVersions"`
	}{version(), runtime.Version(), protocol.ModernVersions, protocol.LegacyVersions}
	if s.c.json {
		if err := writeJSON(e.Stdout, v); err != nil {
			return s.fail(err, false)
		}
		return exitOK
	}
	fmt.Fprintf(e.Stdout, "mcpkit %s (%s)\nprotocol: %s (modern), %s (legacy)\n",
		v.Version, v.Go, strings.Join(v.Modern, ", "), strings.Join(v.Legacy, ", "))
	return exitOK
}
