package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Eras that Options.Era names.
const (
	EraAuto   = "auto"   // try a modern request first, fall back to the handshake
	EraModern = "modern" // revision 2026-07-28: every request carries its _meta
	EraLegacy = "legacy" // initialize handshake, then plain requests
)

// DefaultDuration is how long a run lasts when Options gives neither
// Requests nor Duration.
const DefaultDuration = 5 * time.Second

// Options configure a run. The zero value (plus a Tool) runs one worker
// for DefaultDuration with no warm-up.
type Options struct {
	// Concurrency is the number of workers, each with its own requests in
	// flight (and, on HTTP, its own connection and legacy session); 0
	// means 1.
	Concurrency int
	// Requests stops the measured phase after this many requests; 0 means
	// no limit. With Duration also set, the first limit reached ends it.
	Requests int64
	// Duration bounds the measured phase; 0 means no limit, or
	// DefaultDuration when Requests is 0 too.
	Duration time.Duration
	// Warmup is a phase of the same load before the measured one, whose
	// requests are verified but not counted.
	Warmup time.Duration
	// Tool is the tool to call; required.
	Tool string
	// Args is the tool's arguments, a JSON object; nil means {}.
	Args json.RawMessage
	// Era is EraModern, EraLegacy or EraAuto ("" means EraAuto).
	Era string
	// Pipeline is, on stdio, how many requests each worker keeps in
	// flight without waiting for their responses; 0 means 1. HTTP
	// ignores it.
	Pipeline int
	// WorkerConns has each HTTP worker send its requests on a keep-alive
	// connection of its own, writing each request and reading its
	// response itself (net/http's Request.Write and ReadResponse), instead
	// of through an http.Client's pool and the goroutines of its
	// transport. The load generator then costs about as much per request
	// as on stdio, which matters when an HTTP server is compared with a
	// stdio one. Redirects are not followed (a 3xx counts as a failed
	// request). Setup's requests still use the pool; a Target with its
	// own HTTPClient, or an https URL, ignores it.
	WorkerConns bool
	// OnMeasure, if set, is called as the measured phase starts (after
	// the warm-up), so a caller can sample the server's resource usage.
	OnMeasure func()
}

// Target is the server under load: a Streamable HTTP endpoint (URL) or a
// stdio stream (Stdin and Stdout of a server process, or pipes to an
// in-process stdio.Serve).
type Target struct {
	// URL is the Streamable HTTP endpoint.
	URL string
	// HTTPClient sends the HTTP requests; nil means a client whose
	// connection pool fits the concurrency.
	HTTPClient *http.Client
	// Header is added to every HTTP request (credentials, for instance).
	Header http.Header
	// Stdin receives the requests of a stdio server, Stdout is where its
	// responses are read from. Run does not close them.
	Stdin  io.Writer
	Stdout io.Reader
}

// Result is the outcome of the measured phase.
type Result struct {
	// Era is the era the run spoke (after detection, for EraAuto).
	Era string `json:"era"`
	// Requests counts the requests that completed, successfully or not.
	Requests int64 `json:"requests"`
	// Errors counts the requests that failed: transport errors, JSON-RPC
	// error responses, tool errors and mismatches.
	Errors int64 `json:"errors"`
	// Mismatches counts the responses that arrived but failed
	// verification: a wrong id, no result, or not the echoed text.
	Mismatches int64 `json:"mismatches"`
	// Elapsed is the duration of the measured phase.
	Elapsed time.Duration `json:"elapsed_ns"`
	// ReqPerSec is the rate of successful requests.
	ReqPerSec float64 `json:"req_per_sec"`
	// P50, P90 and P99 are latency percentiles of all completed requests.
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	// FirstError describes the first failure, or is empty.
	FirstError string `json:"first_error,omitempty"`
}

// driver runs the load on one kind of transport.
type driver interface {
	// setup connects (and, for the legacy era, shakes hands), detecting
	// the era when asked to; it returns the era it settled on.
	setup(ctx context.Context, era string) (string, error)
	// run drives the load until lim says stop, recording into st.
	run(ctx context.Context, lim *limiter, st *stats) error
	// close releases what setup acquired.
	close()
}

// Run puts t under the load o describes and returns the measured result.
// An error means the run could not start or was cut short (ctx ended, the
// stream broke); failed requests are counted in the Result instead.
func Run(ctx context.Context, t Target, o *Options) (*Result, error) {
	if o == nil || o.Tool == "" {
		return nil, errors.New("loadgen: no tool to call")
	}
	opts := *o
	opts.Concurrency = max(opts.Concurrency, 1)
	opts.Pipeline = max(opts.Pipeline, 1)
	if opts.Requests < 0 || opts.Duration < 0 || opts.Warmup < 0 {
		return nil, errors.New("loadgen: negative Requests, Duration or Warmup")
	}
	if opts.Requests == 0 && opts.Duration == 0 {
		opts.Duration = DefaultDuration
	}
	if len(opts.Args) == 0 {
		opts.Args = json.RawMessage(`{}`)
	}
	switch opts.Era {
	case "":
		opts.Era = EraAuto
	case EraAuto, EraModern, EraLegacy:
	default:
		return nil, fmt.Errorf("loadgen: unknown era %q", opts.Era)
	}
	v, err := newVerifier(opts.Tool, opts.Args)
	if err != nil {
		return nil, err
	}
	var d driver
	switch {
	case t.URL != "" && (t.Stdin != nil || t.Stdout != nil):
		return nil, errors.New("loadgen: target has both a URL and a stdio stream")
	case t.URL != "":
		d = newHTTPDriver(t, &opts, v)
	case t.Stdin != nil && t.Stdout != nil:
		d = newStdioDriver(t, &opts, v)
	default:
		return nil, errors.New("loadgen: target has neither a URL nor a stdio stream")
	}
	era, err := d.setup(ctx, opts.Era)
	if err != nil {
		d.close()
		return nil, err
	}
	defer d.close()
	if opts.Warmup > 0 {
		if err := d.run(ctx, newLimiter(0, opts.Warmup), &stats{}); err != nil {
			return nil, err
		}
	}
	st := &stats{}
	if opts.OnMeasure != nil {
		opts.OnMeasure()
	}
	start := time.Now()
	err = d.run(ctx, newLimiter(opts.Requests, opts.Duration), st)
	elapsed := time.Since(start)
	if err != nil {
		return nil, err
	}
	return st.result(era, elapsed), nil
}

// limiter hands out permission to issue requests until a count or a
// deadline is reached.
type limiter struct {
	limit    int64
	deadline time.Time
	issued   atomic.Int64
}

func newLimiter(n int64, d time.Duration) *limiter {
	l := &limiter{limit: n}
	if d > 0 {
		l.deadline = time.Now().Add(d)
	}
	return l
}

// take reports whether one more request may be issued.
func (l *limiter) take(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	if l.limit > 0 && l.issued.Add(1) > l.limit {
		return false
	}
	return l.deadline.IsZero() || time.Now().Before(l.deadline)
}

// stats collects the outcomes of one phase. It is safe for concurrent use.
type stats struct {
	mu         sync.Mutex
	lat        []time.Duration
	errors     int64
	mismatches int64
	first      error
}

// add records one completed request: its latency and its failure, if any.
func (s *stats) add(lat time.Duration, err error) {
	s.mu.Lock()
	s.lat = append(s.lat, lat)
	if err != nil {
		s.errors++
		if errors.As(err, new(*mismatchError)) {
			s.mismatches++
		}
		if s.first == nil {
			s.first = err
		}
	}
	s.mu.Unlock()
}

// merge adds the outcomes of o, a worker's private stats.
func (s *stats) merge(o *stats) {
	s.mu.Lock()
	s.lat = append(s.lat, o.lat...)
	s.errors += o.errors
	s.mismatches += o.mismatches
	if s.first == nil {
		s.first = o.first
	}
	s.mu.Unlock()
}

func (s *stats) result(era string, elapsed time.Duration) *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &Result{Era: era, Requests: int64(len(s.lat)), Errors: s.errors, Mismatches: s.mismatches, Elapsed: elapsed}
	if elapsed > 0 {
		r.ReqPerSec = float64(r.Requests-r.Errors) / elapsed.Seconds()
	}
	if s.first != nil {
		r.FirstError = s.first.Error()
	}
	if len(s.lat) > 0 {
		slices.Sort(s.lat)
		r.P50, r.P90, r.P99 = percentile(s.lat, 50), percentile(s.lat, 90), percentile(s.lat, 99)
	}
	return r
}

// percentile returns the p-th percentile of sorted (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}
