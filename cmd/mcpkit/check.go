package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/check"
)

func runCheck(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "check", checkAbout, "[flags] TARGET [--call TOOL [--args JSON]]", "[flags] [--call TOOL [--args JSON]] -- command args...")
	call := s.fs.String("call", "", "also call the tool `TOOL` and check its result")
	argsJSON := s.fs.String("args", "", "the arguments of the --call tool, a `JSON` object")
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	if len(rest) > 0 {
		return s.usageError(fmt.Sprintf("unexpected argument %q", rest[0]))
	}
	var callArgs json.RawMessage
	if *argsJSON != "" {
		if *call == "" {
			return s.usageError("--args needs --call TOOL")
		}
		m, err := readArgsFlag(*argsJSON, e.Stdin)
		if err != nil {
			return s.usageError(err.Error())
		}
		callArgs, _ = json.Marshal(m)
	}
	if s.c.era != "auto" {
		return s.usageError("check probes both eras itself; use --protocol-version to pin a revision")
	}
	opts := &check.Options{
		URL: s.target.URL, Command: s.target.Argv, Header: s.c.headers.h, Timeout: s.c.timeout,
		CallTool: *call, CallArgs: callArgs, ProtocolVersion: s.c.protocolVersion,
	}
	rep, err := check.Run(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			s.errorf("interrupted")
			return exitInterrupted
		}
		// The checker could not start: its error names the target.
		s.errorf("%v", err)
		return exitUnreachable
	}
	if s.c.json {
		err = rep.WriteJSON(e.Stdout)
	} else {
		err = rep.WriteText(e.Stdout)
	}
	if err != nil {
		return s.fail(err, false)
	}
	if !rep.OK() {
		return exitFailed
	}
	return exitOK
}

const checkAbout = `Check the server against the MCP specification: its handshake or
discovery in the eras it speaks, its lists and their pagination, and (with
--call) one tool call. Prints a report with a PASS, WARN, FAIL or SKIP line
per check (a JSON report with --json) and exits 1 when a check failed.
--timeout bounds each request of the check.`
