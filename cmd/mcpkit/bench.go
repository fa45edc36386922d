package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/loadgen"
)

func runBench(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "bench", `Put a server under load: call one tool from concurrent workers for a
duration (-d) or a number of requests (-n), after a warm-up, and report
requests per second, latency percentiles (p50, p90, p99) and errors.

Every response is verified: it must answer its request's id with a
result that is not a tool error, and when the tool is echo its content
must carry the text sent. Responses that fail are counted as mismatches
and errors; any error makes the exit code 1.

Over HTTP each worker has its own connection (and, in the legacy era,
its own session). A stdio server is started once and shared by all
workers; -pipeline lets each worker keep that many requests in flight.
--era auto tries a modern request first and falls back to the
initialize handshake. --timeout bounds the run beyond its warm-up and
duration.`,
		"[flags] TARGET", "[flags] -- command args...")
	tool := s.fs.String("tool", "echo", "call the tool `NAME`")
	argsJSON := s.fs.String("args", `{"text":"hello, world"}`, "the tool's arguments as a `JSON` object, or @file (@- for stdin)")
	concurrency := s.fs.Int("c", 16, "run `N` concurrent workers")
	duration := s.fs.Duration("d", 5*time.Second, "measure for `DURATION` (0: until -n requests)")
	requests := s.fs.Int64("n", 0, "stop after `N` measured requests (0: no limit)")
	warmup := s.fs.Duration("warmup", time.Second, "load the server for `DURATION` before measuring")
	pipeline := s.fs.Int("pipeline", 1, "keep `N` requests in flight per worker (stdio targets)")
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	if len(rest) > 0 {
		return s.usageError(fmt.Sprintf("unexpected argument %q", rest[0]))
	}
	switch {
	case *concurrency < 1:
		return s.usageError("-c must be at least 1")
	case *duration < 0 || *warmup < 0 || *requests < 0:
		return s.usageError("-d, -n and --warmup must not be negative")
	case *duration == 0 && *requests == 0:
		return s.usageError("give -d or -n a positive value")
	case *pipeline < 1:
		return s.usageError("--pipeline must be at least 1")
	case *pipeline > 1 && s.target.URL != "":
		return s.usageError("--pipeline applies to stdio targets only")
	case s.c.protocolVersion != "":
		return s.usageError("--protocol-version is not supported by bench; use --era")
	case s.c.logLevel != "":
		return s.usageError("--log-level is not supported by bench")
	}
	m, err := readArgsFlag(*argsJSON, e.Stdin)
	if err != nil {
		return s.usageError(err.Error())
	}
	rawArgs, err := json.Marshal(m)
	if err != nil || m == nil {
		rawArgs = []byte(`{}`)
	}
	opts := &loadgen.Options{
		Concurrency: *concurrency, Requests: *requests, Duration: *duration, Warmup: *warmup,
		Tool: *tool, Args: rawArgs, Era: s.c.era, Pipeline: *pipeline,
	}

	rctx, cancel := context.WithCancel(s.interrupt)
	defer cancel()
	if s.c.timeout > 0 {
		var c2 context.CancelFunc
		rctx, c2 = context.WithTimeout(rctx, *warmup+*duration+s.c.timeout)
		defer c2()
	}
	t := loadgen.Target{URL: s.target.URL, Header: s.c.headers.h}
	var proc *benchProcess
	if s.target.URL == "" {
		proc, err = startBenchProcess(s.target.Argv, rawWriter(e.Stderr))
		if err != nil {
			return s.fail(err, true)
		}
		defer proc.stop()
		t.Stdin, t.Stdout = proc.stdin, proc.stdout
	}
	if !s.c.json {
		s.status.progress(fmt.Sprintf("benchmarking %s ...", s.target))
	}
	res, err := loadgen.Run(rctx, t, opts)
	s.status.clear()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && s.interrupt.Err() == nil {
			s.errorf("timed out")
			return exitFailed
		}
		return s.fail(err, false)
	}
	if s.c.json {
		out := benchJSON{
			Target: s.target.String(), Tool: *tool, Era: res.Era, Concurrency: *concurrency, Pipeline: *pipeline,
			Requests: res.Requests, Errors: res.Errors, Mismatches: res.Mismatches,
			ElapsedSeconds: res.Elapsed.Seconds(), ReqPerSec: res.ReqPerSec,
			P50ms: ms(res.P50), P90ms: ms(res.P90), P99ms: ms(res.P99), FirstError: res.FirstError,
		}
		if err := writeJSON(e.Stdout, out); err != nil {
			return s.fail(err, false)
		}
	} else {
		writeBenchText(e.Stdout, s.target.String(), *tool, *concurrency, *pipeline, res)
	}
	if res.Errors > 0 {
		return exitFailed
	}
	return exitOK
}

// benchJSON is the --json output of bench.
type benchJSON struct {
	Target         string  `json:"target"`
	Tool           string  `json:"tool"`
	Era            string  `json:"era"`
	Concurrency    int     `json:"concurrency"`
	Pipeline       int     `json:"pipeline"`
	Requests       int64   `json:"requests"`
	Errors         int64   `json:"errors"`
	Mismatches     int64   `json:"mismatches"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	ReqPerSec      float64 `json:"reqPerSec"`
	P50ms          float64 `json:"p50ms"`
	P90ms          float64 `json:"p90ms"`
	P99ms          float64 `json:"p99ms"`
	FirstError     string  `json:"firstError,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func writeBenchText(w io.Writer, target, tool string, c, pipeline int, r *loadgen.Result) {
	fmt.Fprintf(w, "target       %s (%s era)\n", target, r.Era)
	if pipeline > 1 {
		fmt.Fprintf(w, "load         %s, %d workers, %d in flight each\n", tool, c, pipeline)
	} else {
		fmt.Fprintf(w, "load         %s, %d workers\n", tool, c)
	}
	fmt.Fprintf(w, "requests     %d in %.2fs\n", r.Requests, r.Elapsed.Seconds())
	fmt.Fprintf(w, "throughput   %.0f req/s\n", r.ReqPerSec)
	fmt.Fprintf(w, "latency      p50 %s  p90 %s  p99 %s\n", fmtLatency(r.P50), fmtLatency(r.P90), fmtLatency(r.P99))
	fmt.Fprintf(w, "errors       %d (%d mismatches)\n", r.Errors, r.Mismatches)
	if r.FirstError != "" {
		fmt.Fprintf(w, "first error  %s\n", oneLine(r.FirstError))
	}
}

func fmtLatency(d time.Duration) string {
	return fmt.Sprintf("%.3fms", ms(d))
}

// benchProcess is a stdio server started for bench, whose streams
// loadgen drives directly.
type benchProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan struct{}
}

func startBenchProcess(argv []string, stderr io.Writer) (*benchProcess, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &benchProcess{cmd: cmd, stdin: stdin, stdout: stdout, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop closes the server's input, as the stdio transport prescribes, and
// escalates to SIGTERM and SIGKILL if it does not exit.
func (p *benchProcess) stop() {
	p.stdin.Close()
	for _, sig := range []os.Signal{nil, syscall.SIGTERM, os.Kill} {
		if sig != nil {
			p.cmd.Process.Signal(sig)
		}
		select {
		case <-p.exited:
			return
		case <-time.After(2 * time.Second):
		}
	}
	<-p.exited
}
