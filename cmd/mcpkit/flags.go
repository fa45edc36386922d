package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// commonFlags are the flags of every subcommand that connects.
type commonFlags struct {
	headers         headerFlag
	timeout         time.Duration
	json            bool
	protocolVersion string
	era             string
	logLevel        string
	auth            authFlags
}

// headerFlag collects repeated --header 'Name: value' flags.
type headerFlag struct{ h http.Header }

func (f *headerFlag) String() string { return "" }

func (f *headerFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return fmt.Errorf("want 'Name: value', got %q", v)
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(name, strings.TrimSpace(value))
	return nil
}

// defaultTimeout is --timeout's default: longer than a server's statement
// timeout (serve sql's --statement-timeout, 30s by default) and its grace,
// so that a slow statement ends with the server's message naming the
// limit, not with the client giving up first.
const defaultTimeout = 60 * time.Second

// listFlag collects a repeated flag's values.
type listFlag []string

func (f *listFlag) String() string { return strings.Join(*f, ",") }

func (f *listFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// newFlagSet returns a flag set with the common flags; c may be nil (for
// help, which only prints them).
func newFlagSet(name string, c *commonFlags) (*flag.FlagSet, *commonFlags) {
	if c == nil {
		c = &commonFlags{}
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&c.headers, "header", "add the HTTP header `'Name: value'` to every request (repeatable; HTTP targets)")
	fs.DurationVar(&c.timeout, "timeout", defaultTimeout, "give up after `DURATION` (0 for no limit)")
	fs.BoolVar(&c.json, "json", false, "print machine-readable JSON")
	fs.StringVar(&c.protocolVersion, "protocol-version", "", "speak protocol revision `V` (default: the newest both sides speak)")
	fs.StringVar(&c.era, "era", "auto", "protocol `ERA`: auto, modern or legacy")
	fs.StringVar(&c.logLevel, "log-level", "", "print the server's log messages at `LEVEL` and above to stderr (debug, info, notice, warning, error, ...)")
	c.auth.register(fs)
	return fs, c
}

// sub is a subcommand being run: its flags, its parsed target and the
// streams it writes to.
type sub struct {
	name     string
	synopsis []string // usage lines after "mcpkit NAME "
	about    string
	fs       *flag.FlagSet
	c        *commonFlags
	e        *env
	target   target
	status   *status
	// interrupt is the run's context: it ends when the user interrupts.
	interrupt context.Context
}

func newSub(ctx context.Context, e *env, name, about string, synopsis ...string) *sub {
	fs, c := newFlagSet(name, nil)
	return &sub{name: name, synopsis: synopsis, about: about, fs: fs, c: c, e: e, interrupt: ctx,
		status: &status{w: e.Stderr, tty: e.StderrTTY}}
}

// usage prints the subcommand's help.
func (s *sub) usage(w io.Writer) {
	fmt.Fprintln(w, "Usage:")
	for _, l := range s.synopsis {
		fmt.Fprintf(w, "  mcpkit %s %s\n", s.name, l)
	}
	fmt.Fprintf(w, "\n%s\n\nFlags:\n", strings.TrimSpace(s.about))
	s.fs.SetOutput(w)
	s.fs.PrintDefaults()
	s.fs.SetOutput(io.Discard)
}

// parse parses the subcommand's arguments, flags anywhere before "--", and
// returns the positional arguments. When it returns done, the run is over
// with code (help printed, or a usage error reported).
func (s *sub) parse(args []string, needTarget bool) (positional []string, code int, done bool) {
	own, argv, hasCommand := splitCommand(args)
	if err := s.fs.Parse(reorder(s.fs, own)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			s.usage(s.e.Stdout)
			return nil, exitOK, true
		}
		return nil, s.usageError(err.Error()), true
	}
	positional = s.fs.Args()
	if !needTarget {
		if hasCommand {
			return nil, s.usageError(`unexpected "--"`), true
		}
		return positional, 0, false
	}
	t, rest, err := parseTarget(positional, argv, hasCommand)
	if err != nil {
		return nil, s.usageError(err.Error()), true
	}
	s.target = t
	if err := s.checkCommon(); err != nil {
		return nil, s.usageError(err.Error()), true
	}
	return rest, 0, false
}

func (s *sub) usageError(msg string) int { return usageError(s.e, s.name, msg) }

// checkCommon validates the common flags.
func (s *sub) checkCommon() error {
	switch s.c.era {
	case "auto", "modern", "legacy":
	default:
		return fmt.Errorf("--era must be auto, modern or legacy, not %q", s.c.era)
	}
	if v := s.c.protocolVersion; v != "" {
		legacy := false
		for _, l := range protocol.LegacyVersions {
			legacy = legacy || l == v
		}
		switch {
		case s.c.era == "modern" && legacy:
			return fmt.Errorf("--protocol-version %s is a legacy revision, but --era is modern", v)
		case s.c.era == "legacy" && protocol.IsModern(v):
			return fmt.Errorf("--protocol-version %s is a modern revision, but --era is legacy", v)
		}
	}
	if l := s.c.logLevel; l != "" && protocol.LoggingLevel(l).Severity() < 0 {
		return fmt.Errorf("--log-level %q is not a level (debug, info, notice, warning, error, critical, alert, emergency)", l)
	}
	if s.c.timeout < 0 {
		return errors.New("--timeout must not be negative")
	}
	if s.target.URL == "" && len(s.c.headers.h) > 0 {
		return errors.New("--header applies to HTTP targets only")
	}
	if err := s.c.auth.check(); err != nil {
		return err
	}
	return nil
}

// reorder moves the flags in args before the positional arguments, so
// that flags may follow them ("mcpkit call URL echo text=hi --json"). A
// flag's value is the next argument unless the flag is boolean or written
// -name=value.
func reorder(fs *flag.FlagSet, args []string) []string {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // flag.Parse reports it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(flags, positional...)
}

// clientOptions returns the client options the common flags ask for.
func (s *sub) clientOptions() *client.Options {
	o := &client.Options{ProtocolVersion: s.c.protocolVersion}
	switch s.c.era {
	case "modern":
		o.Era = client.EraModern
	case "legacy":
		o.Era = client.EraLegacy
	default:
		// A pinned revision implies its era.
		if v := s.c.protocolVersion; protocol.IsModern(v) {
			o.Era = client.EraModern
		} else if v != "" {
			for _, l := range protocol.LegacyVersions {
				if l == v {
					o.Era = client.EraLegacy
				}
			}
		}
	}
	if s.c.logLevel != "" {
		o.LogLevel = protocol.LoggingLevel(s.c.logLevel)
		o.OnLog = s.status.log
	}
	return o
}

// opContext returns the context of the subcommand's work: the run's,
// bounded by --timeout.
func (s *sub) opContext() (context.Context, context.CancelFunc) {
	if s.c.timeout > 0 {
		return context.WithTimeout(s.interrupt, s.c.timeout)
	}
	return context.WithCancel(s.interrupt)
}

// connect connects to the target with a client made with o (from
// clientOptions, adjusted). On failure it reports the error and returns
// the exit code.
func (s *sub) connect(ctx context.Context, o *client.Options) (*client.Session, int) {
	var hc *http.Client
	if s.target.URL != "" {
		hc = s.httpClient()
		if hc != nil && o.ProbeTimeout == 0 {
			// A login may happen during the era probe, the first request:
			// give it the whole operation's time, not the probe's 5s.
			o.ProbeTimeout = s.c.timeout
			if o.ProbeTimeout == 0 {
				o.ProbeTimeout = 24 * time.Hour
			}
		}
	}
	if tel := s.e.tel; tel != nil {
		// Traced: every call, and the traceparent header of every request.
		o.Middleware = append([]client.Middleware{tel.ClientMiddleware()}, o.Middleware...)
		if s.target.URL != "" {
			traced := &http.Client{}
			if hc != nil {
				*traced = *hc
			}
			traced.Transport = tel.HTTPTransport(traced.Transport)
			hc = traced
		}
	}
	cl := client.New(protocol.Implementation{Name: "mcpkit", Version: version()}, o)
	var sess *client.Session
	var err error
	if s.target.URL != "" {
		sess, err = cl.ConnectURL(ctx, s.target.URL, &streamable.ClientOptions{Header: s.c.headers.h, HTTPClient: hc})
	} else {
		sess, err = cl.ConnectCommand(ctx, s.target.Argv[0], s.target.Argv[1:], &stdio.CommandOptions{Stderr: rawWriter(s.e.Stderr)})
	}
	if err != nil {
		return nil, s.fail(err, true)
	}
	if o.LogLevel != "" && sess.Era() == client.EraLegacy && sess.ServerCapabilities().Logging != nil {
		if err := sess.SetLogLevel(ctx, o.LogLevel); err != nil {
			sess.Close()
			return nil, s.fail(err, false)
		}
	}
	return sess, 0
}

// fail reports err in one line on stderr and returns its exit code.
// connecting tells whether the connection was being made.
func (s *sub) fail(err error, connecting bool) int {
	s.status.clear()
	msg, code := describe(err, connecting)
	if s.interrupt.Err() != nil {
		msg, code = "interrupted", exitInterrupted
	} else if errors.Is(err, context.DeadlineExceeded) {
		msg = "timed out after " + s.c.timeout.String()
		if connecting {
			msg += " connecting to " + s.target.String()
		}
	} else if connecting {
		msg = "cannot connect to " + s.target.String() + ": " + msg
	}
	s.errorf("%s", msg)
	return code
}

// errorf prints an error line for the subcommand.
func (s *sub) errorf(format string, args ...any) {
	s.status.clear()
	fmt.Fprintf(s.e.Stderr, "mcpkit %s: %s\n", s.name, oneLine(fmt.Sprintf(format, args...)))
}

// open connects within the operation's context. On success it returns the
// session, that context and a cleanup the caller defers (closing the
// session, then ending the context); otherwise a nil session and the exit
// code.
func (s *sub) open(o *client.Options) (*client.Session, context.Context, func(), int) {
	octx, cancel := s.opContext()
	sess, code := s.connect(octx, o)
	if sess == nil {
		cancel()
		return nil, nil, nil, code
	}
	return sess, octx, func() {
		sess.Close()
		cancel()
	}, 0
}
