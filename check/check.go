package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/sse"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// Options say which server to check and how.
type Options struct {
	URL             string          // Streamable HTTP endpoint ("" when Command is set)
	Command         []string        // a stdio server: argv
	Header          http.Header     // extra headers on every HTTP request (credentials)
	Timeout         time.Duration   // per request; 0 means 10s
	CallTool        string          // a tool the operator says is safe to call ("" → no tools/call at all)
	CallArgs        json.RawMessage // its arguments ({} when nil)
	ProtocolVersion string          // modern revision to use; "" → 2026-07-28
}

// Status is the outcome of one check.
type Status string

// The outcomes of a check.
const (
	Pass Status = "PASS"
	Warn Status = "WARN" // a SHOULD is not met
	Fail Status = "FAIL" // a MUST is not met
	Skip Status = "SKIP" // the check does not apply to this target
)

// Result is the outcome of one check.
type Result struct {
	ID     string `json:"id"`               // stable, e.g. "discover.result-type", "http.origin-rejected"
	Title  string `json:"title"`            // one line, human
	Status Status `json:"status"`           // PASS, WARN, FAIL or SKIP
	Sent   string `json:"sent,omitempty"`   // what was sent (method, headers of note), short
	Got    string `json:"got,omitempty"`    // what came back (status, code, member), short
	Spec   string `json:"spec,omitempty"`   // spec section, e.g. "2026-07-28 basic/transports/streamable-http#server-validation"
	Detail string `json:"detail,omitempty"` // why it failed, warned or was skipped
}

// Report is the outcome of checking one server.
type Report struct {
	Target  string   `json:"target"`
	Era     string   `json:"era"` // "modern", "legacy", "dual-era", "legacy (HTTP+SSE)", "unknown"
	Results []Result `json:"results"`
	Pass    int      `json:"pass"`
	Warn    int      `json:"warn"`
	Fail    int      `json:"fail"`
	Skip    int      `json:"skip"`
}

// OK reports whether no check failed.
func (r *Report) OK() bool { return r.Fail == 0 }

// Eras of a server, as Report.Era names them.
const (
	eraModern  = "modern"
	eraLegacy  = "legacy"
	eraDual    = "dual-era"
	eraUnknown = "unknown"
)

// Run checks the server o names and reports every check. It returns an
// error only when the target cannot be reached at all (no HTTP answer, or a
// command that cannot be started or answers nothing). Run sends nothing
// that changes server data: server/discover, the list methods,
// resources/read of listed resources, completion/complete and, only when
// o.CallTool is set, tools/call of that tool.
func Run(ctx context.Context, o *Options) (*Report, error) {
	c, err := newChecker(o)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	rep := &Report{Target: c.target, Era: c.era, Results: c.results}
	for _, r := range rep.Results {
		switch r.Status {
		case Pass:
			rep.Pass++
		case Warn:
			rep.Warn++
		case Fail:
			rep.Fail++
		case Skip:
			rep.Skip++
		}
	}
	return rep, nil
}

// tool is a tool definition as listed.
type tool struct {
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// checker holds one run's state.
type checker struct {
	o        Options
	version  string
	target   string
	http     *httpConn  // nil for a stdio target
	std      *stdioConn // the process modern checks talk to
	stdLeg   *stdioConn // the process of the legacy session
	loopback bool       // the HTTP target is a loopback address
	nextID   atomic.Int64
	results  []Result
	era      string

	modern, legacy bool
	discover       map[string]json.RawMessage // the server/discover result
	caps           map[string]json.RawMessage // its capabilities
	legacyCaps     map[string]json.RawMessage // initialize's capabilities
	session        string                     // the legacy HTTP session id
	sessionVersion string                     // its negotiated version

	sse    *sse.Client // an HTTP+SSE server's stream, until checkSSE
	sseErr error       // why the HTTP+SSE probe found none

	discoverReply *reply // the answer to the server/discover probe
	initReply     *reply // the answer to the initialize probe
	initNote      string // what notifications/initialized got, when not 202

	tools       []tool
	toolsListed bool
	resources   []string // listed resource URIs
	prompts     []string // listed prompt names
	errBodies   []errBody
}

// errBody is an HTTP error answer seen during the HTTP checks.
type errBody struct {
	check string
	r     *reply
}

func newChecker(o *Options) (*checker, error) {
	if o == nil {
		return nil, errors.New("check: no options")
	}
	c := &checker{o: *o, era: eraUnknown}
	if c.o.Timeout <= 0 {
		c.o.Timeout = 10 * time.Second
	}
	if len(c.o.CallArgs) == 0 {
		c.o.CallArgs = json.RawMessage(`{}`)
	}
	c.version = c.o.ProtocolVersion
	if c.version == "" {
		c.version = protocol.Version2026_07_28
	}
	switch {
	case c.o.URL != "" && len(c.o.Command) > 0:
		return nil, errors.New("check: set URL or Command, not both")
	case c.o.URL != "":
		u, err := url.Parse(c.o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("check: %q is not an http(s) URL", c.o.URL)
		}
		c.target = c.o.URL
		c.loopback = isLoopback(u.Hostname())
		c.http = &httpConn{url: c.o.URL, header: c.o.Header, client: &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	case len(c.o.Command) > 0:
		c.target = strings.Join(c.o.Command, " ")
	default:
		return nil, errors.New("check: no target (set URL or Command)")
	}
	return c, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// startProcess starts the stdio server once more.
func (c *checker) startProcess() (*stdioConn, error) {
	cmd, err := stdio.Start(c.o.Command[0], c.o.Command[1:], &stdio.CommandOptions{CloseWait: time.Second})
	if err != nil {
		return nil, err
	}
	return &stdioConn{cmd: cmd}, nil
}

func (c *checker) close() {
	for _, s := range []*stdioConn{c.std, c.stdLeg} {
		if s != nil {
			_ = s.cmd.Close()
		}
	}
	c.std, c.stdLeg = nil, nil
	if c.sse != nil {
		_ = c.sse.Close()
		c.sse = nil
	}
	if c.http != nil {
		c.http.client.CloseIdleConnections()
	}
}

// run runs every check in order.
func (c *checker) run(ctx context.Context) error {
	if err := c.detect(ctx); err != nil {
		return err
	}
	if c.era == eraSSE {
		c.checkSSE(ctx)
		return nil
	}
	c.checkDiscover(ctx)
	c.checkMeta(ctx)
	c.checkVersion(ctx)
	c.checkCapabilities(ctx)
	c.checkLists(ctx)
	c.checkTools()
	c.checkResources(ctx)
	c.checkCall(ctx)
	c.checkHTTP(ctx)
	c.checkLegacy(ctx)
	return nil
}

// id returns a fresh request id.
func (c *checker) id() int64 { return c.nextID.Add(1) }

// meta returns the full per-request _meta of the version used.
func (c *checker) meta() map[string]any {
	return map[string]any{
		protocol.MetaProtocolVersion:    c.version,
		protocol.MetaClientCapabilities: map[string]any{},
		protocol.MetaClientInfo:         clientInfo,
	}
}

// modernReq returns a modern request of method with params and full _meta.
func (c *checker) modernReq(method string, params map[string]any) *request {
	return &request{method: method, params: params, meta: c.meta()}
}

// send sends a modern request over the target's transport, with the
// headers revision 2026-07-28 asks for on HTTP (header version hv).
func (c *checker) send(ctx context.Context, q *request, hv string) (*reply, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	if c.http != nil {
		return c.http.post(ctx, q.body(c.id()), func(r *http.Request) {
			modernHeaders(r.Header, hv, q, c.headerParams(q))
		})
	}
	return c.std.call(ctx, c.id(), q.method, q.encode())
}

// call sends a well-formed modern request.
func (c *checker) call(ctx context.Context, method string, params map[string]any) (*reply, error) {
	return c.send(ctx, c.modernReq(method, params), c.version)
}

// finding collects the problems of one check.
type finding struct {
	Result
	fails, warns []string
}

func (c *checker) begin(id string) *finding {
	d := catalog[id]
	if d.title == "" {
		panic("check: no catalog entry for " + id)
	}
	return &finding{Result: Result{ID: id, Title: d.title, Spec: d.spec}}
}

func (f *finding) fail(format string, args ...any) {
	f.fails = append(f.fails, fmt.Sprintf(format, args...))
}
func (f *finding) warn(format string, args ...any) {
	f.warns = append(f.warns, fmt.Sprintf(format, args...))
}

// end records the finding: FAIL with any failure, else WARN with any
// warning, else PASS.
func (c *checker) end(f *finding) {
	switch {
	case len(f.fails) > 0:
		f.Status = Fail
		f.Detail = strings.Join(append(f.fails, f.warns...), "; ")
	case len(f.warns) > 0:
		f.Status = Warn
		f.Detail = strings.Join(f.warns, "; ")
	default:
		f.Status = Pass
	}
	c.results = append(c.results, f.Result)
}

// skip records a check that does not apply, and why.
func (c *checker) skip(id, reason string) {
	f := c.begin(id)
	f.Status = Skip
	f.Detail = reason
	c.results = append(c.results, f.Result)
}

// skipAll skips several checks for one reason.
func (c *checker) skipAll(reason string, ids ...string) {
	for _, id := range ids {
		c.skip(id, reason)
	}
}
