// Command mcpkit talks to Model Context Protocol servers from the shell:
// it discovers a server, lists and calls its tools, reads its resources,
// gets its prompts, listens for its change notifications and checks it
// against the specification, in both protocol eras.
//
//	mcpkit discover https://example.com/mcp
//	mcpkit call https://example.com/mcp echo text=hello
//	mcpkit tools -- ./my-server --stdio
//
// Run "mcpkit help" for the full list of subcommands and flags.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/mcpkit/mcpkit/otel"
)

// Exit codes.
const (
	exitOK          = 0   // success
	exitFailed      = 1   // the operation failed (protocol error, tool error, check FAIL)
	exitUsage       = 2   // the command line is wrong
	exitUnreachable = 3   // the target cannot be reached or the connection failed
	exitInterrupted = 130 // interrupted (Ctrl-C)
)

// env is what a run of the command sees of its process: its standard
// streams and whether they are terminals. Tests build one around buffers.
type env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// StdinTTY, StdoutTTY and StderrTTY tell whether the streams are
	// terminals: tables and updating progress lines on stdout and stderr,
	// interactive questions on stdin.
	StdinTTY, StdoutTTY, StderrTTY bool
	// tel traces and measures the MCP traffic when the OTEL_EXPORTER_OTLP_*
	// variables ask for export (see startTelemetry); nil otherwise.
	tel *otel.Telemetry
	// setProcs sets GOMAXPROCS unless the environment chose it, and
	// reports whether it did; nil (in tests, which share one process)
	// leaves it alone.
	setProcs func(n int) bool
}

// isTerminal reports whether f is a character device other than the null
// device.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

func main() {
	e := &env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		StdinTTY: isTerminal(os.Stdin), StdoutTTY: isTerminal(os.Stdout), StderrTTY: isTerminal(os.Stderr),
		setProcs: setProcs,
	}
	// The context ends at the first interrupt; a second one kills the
	// process the usual way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, e, os.Args[1:])
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	// run runs the subcommand with its arguments (after the name).
	run func(ctx context.Context, e *env, args []string) int
}

// commands lists the subcommands in the order help shows them.
func commands() []*command {
	return []*command{
		{"discover", "show the server's identity, era, versions and capabilities", runDiscover},
		{"tools", "list the server's tools", listCommand(listTools)},
		{"resources", "list the server's resources", listCommand(listResources)},
		{"templates", "list the server's resource templates", listCommand(listTemplates)},
		{"prompts", "list the server's prompts", listCommand(listPrompts)},
		{"call", "call a tool", runCall},
		{"task", "follow a task by its id (task get, task wait, task cancel)", runTask},
		{"read", "read a resource", runRead},
		{"prompt", "get a prompt", runPrompt},
		{"complete", "complete an argument of a prompt or resource template", runComplete},
		{"listen", "print the server's change notifications until interrupted", runListen},
		{"check", "check the server against the specification", runCheck},
		{"bench", "put the server under load and report throughput and latency", runBench},
		{"serve", "serve a database as an MCP server (serve sql)", runServe},
		{"auth", "show or forget stored logins (auth status, auth logout)", runAuth},
		{"version", "print mcpkit's version and protocol revisions", runVersion},
		{"help", "show help for mcpkit or a subcommand", runHelp},
	}
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run runs the command line args (without the program name) and returns
// the exit code. ctx ends when the user interrupts. What it writes to a
// terminal has its control characters escaped (see termWriter).
func run(ctx context.Context, e *env, args []string) int {
	e = e.forTerminal()
	if len(args) == 0 {
		topUsage(e.Stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		topUsage(e.Stdout)
		return exitOK
	case "-version", "--version":
		return runVersion(ctx, e, nil)
	}
	c := lookup(args[0])
	if c == nil {
		return usageError(e, "", fmt.Sprintf("unknown subcommand %q", args[0]))
	}
	t, err := startTelemetry(ctx, os.Getenv)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcpkit: %v\n", err)
		return exitUsage
	}
	if t != nil {
		defer t.stop()
		e.tel = t.tel
	}
	return c.run(ctx, e, args[1:])
}

// usageError reports a usage error in one line and returns exitUsage.
func usageError(e *env, sub, msg string) int {
	if sub == "" {
		fmt.Fprintf(e.Stderr, "mcpkit: %s (run 'mcpkit help')\n", msg)
	} else {
		fmt.Fprintf(e.Stderr, "mcpkit %s: %s (run 'mcpkit %s --help')\n", sub, msg, sub)
	}
	return exitUsage
}

func topUsage(w io.Writer) {
	fmt.Fprint(w, `mcpkit talks to Model Context Protocol servers, in both protocol eras.

Usage:
  mcpkit SUBCOMMAND [arguments] TARGET [arguments]

TARGET is an http:// or https:// URL of a Streamable HTTP endpoint, or
"-- command args..." to start a server and speak to it over stdio
(everything after -- is the server's command line).

Subcommands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Flags of every subcommand that connects:
`)
	fs, _ := newFlagSet("", nil)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, `
Servers that ask for authorization get an OAuth login: the authorization
URL is printed on stderr and opened in a browser, and the tokens are kept
for later runs (see "mcpkit help auth").

Exit codes: 0 success, 1 the operation failed, 2 usage error,
3 the target cannot be reached, 130 interrupted.

`+telemetryAbout+`

Run "mcpkit help SUBCOMMAND" or "mcpkit SUBCOMMAND --help" for details.
`)
}

func runHelp(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		topUsage(e.Stdout)
		return exitOK
	}
	if len(args) > 1 {
		return usageError(e, "help", "help takes at most one subcommand")
	}
	c := lookup(args[0])
	if c == nil {
		return usageError(e, "help", fmt.Sprintf("unknown subcommand %q", args[0]))
	}
	if c.name == "help" {
		topUsage(e.Stdout)
		return exitOK
	}
	return c.run(ctx, e, []string{"--help"})
}

// version returns mcpkit's module version, "(devel)" for a work tree.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
