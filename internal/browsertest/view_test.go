package browsertest

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// hostPage loads the bundled host script.
const hostPage = `<!doctype html>
<meta charset="utf-8">
<title>query view host</title>
<body style="margin:0;font-family:sans-serif">
<script type="module" src="/host.js"></script>
</body>`

// bundleHost bundles testdata/host.js with the pinned MCP Apps SDK and
// TypeScript SDK (esbuild from MCPKIT_NODE_MODULES) and returns the bundle.
func bundleHost(t *testing.T) []byte {
	t.Helper()
	modules := os.Getenv("MCPKIT_NODE_MODULES")
	if modules == "" {
		t.Fatal("MCPKIT_NODE_MODULES is not set: it names the npm packages (conformance/node_modules) the host page is bundled from; `make browser` sets it")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "host.js"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "host.js")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(modules, ".bin", "esbuild"), src,
		"--bundle", "--format=esm", "--platform=browser", "--target=es2022", "--log-level=warning", "--outfile="+out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "PATH="+filepath.Join(modules, ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveHost serves the host page and its bundled script on a loopback
// port and returns the page's origin.
func serveHost(t *testing.T, bundle []byte) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/host.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(bundle)
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(hostPage))
	})
	return "http://127.0.0.1:" + serve(t, mux)
}

// serveSQL builds the mcpkit command and runs `mcpkit serve sql` on a copy
// of the demo database, at most maxRows rows a query, listing the page
// origin for CORS; it returns the MCP endpoint's URL. The process is
// stopped, by its PID, when the test ends.
func serveSQL(t *testing.T, maxRows int, pageOrigin string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpkit")
	build := exec.Command("go", "build", "-o", bin, "github.com/mcpkit/mcpkit/cmd/mcpkit")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building mcpkit: %v\n%s", err, b)
	}
	db := filepath.Join(dir, "demo.db")
	if err := sqlserver.EnsureDemo(db); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "sql", "--db", db, "--addr", "127.0.0.1:0",
		"--max-rows", strconv.Itoa(maxRows), "--allow-origin", pageOrigin)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// "mcpkit serve sql: serving ... on http://127.0.0.1:PORT/mcp (...)"
	found := make(chan string, 1)
	read := make(chan struct{})
	var output strings.Builder // read by the test once read is closed
	go func() {
		defer close(read)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			line := lines.Text()
			output.WriteString(line + "\n")
			if i := strings.Index(line, " on http://"); i >= 0 {
				url, _, _ := strings.Cut(line[i+len(" on "):], " ")
				select {
				case found <- url:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { <-read; done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("mcpkit serve sql: %v\n%s", err, output.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("mcpkit serve sql did not stop on SIGINT\n%s", output.String())
		}
	})
	select {
	case url := <-found:
		return url
	case <-read:
		t.Fatalf("mcpkit serve sql exited without serving:\n%s", output.String())
	case <-time.After(time.Minute):
		t.Fatal("mcpkit serve sql did not say where it serves")
	}
	return ""
}

// waitJS polls the page until the expression is true.
func waitJS(ctx context.Context, t *testing.T, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		failed, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!(window.host && window.host.state === 'failed')`))
		if failed || time.Now().After(deadline) {
			state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.host)`))
			t.Fatalf("%s: %s still false (err %v); host %s", what, expr, err, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// view reads the query view inside the host page's iframe.
type view struct {
	ctx   context.Context
	t     *testing.T
	frame *chromedp.Node
}

func (v *view) run(a chromedp.Action[chromedp.Void]) {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(v.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, a); err != nil {
		v.t.Fatalf("in the view: %v", err)
	}
}

func (v *view) text(sel string) string {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(v.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.FromNode(v.frame)))
	if err != nil {
		v.t.Fatalf("reading %s in the view: %v", sel, err)
	}
	return s
}

func (v *view) attr(sel, name string) string {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(v.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name, chromedp.FromNode(v.frame)))
	if err != nil {
		v.t.Fatalf("reading %s[%s] in the view: %v", sel, name, err)
	}
	return s.Value
}

// waitAttr polls until the element's attribute has the value.
func (v *view) waitAttr(sel, name, want string) {
	v.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := v.attr(sel, name)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			v.t.Fatalf("%s[%s] = %q, want %q (view error %q)", sel, name, got, want, v.text("body"))
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// rows returns the table's cells, row by row.
func (v *view) rows() [][]string {
	v.t.Helper()
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(v.text("#rows tbody")), "\n") {
		out = append(out, strings.Split(line, "\t"))
	}
	return out
}

func column(rows [][]string, i int) []string {
	var out []string
	for _, r := range rows {
		if i < len(r) {
			out = append(out, strings.TrimSpace(r[i]))
		}
	}
	return out
}

// TestBrowserQueryView: a host page embeds the query view with the MCP
// Apps SDK's AppBridge and feeds it real query results of `mcpkit serve
// sql`, which it reaches on another origin (the server lists the page's): the table renders, sorts by a column, pages through a truncated
// result by calling the tool again through the host, and draws a chart for
// a label-and-number result. A screenshot is kept under
// MCPKIT_ARTIFACTS (or the test's temporary directory).
func TestBrowserQueryView(t *testing.T) {
	ctx := newBrowser(t)
	origin := serveHost(t, bundleHost(t))
	endpoint := serveSQL(t, 10, origin)
	if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/?mcp="+url.QueryEscape(endpoint))); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "host ready", `window.host && window.host.state === 'ready' && window.host.initialized`)
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.host.mimeType === 'text/html;profile=mcp-app'`)); err != nil || !ok {
		t.Fatalf("view MIME type: %v", err)
	}
	frames, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("#view")))
	if err != nil || len(frames) != 1 {
		t.Fatalf("the view's iframe: %v", err)
	}
	v := &view{ctx: ctx, t: t, frame: frames[0]}

	const paged = "SELECT id, name, country FROM customers ORDER BY id"
	show := func(sql string) {
		t.Helper()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.host.show({sql: `+strconv.Quote(sql)+`})`, chromedp.EvalAwaitPromise))
		if err != nil || !ok {
			state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.host)`))
			t.Fatalf("showing %q: %v; host %s", sql, err, state)
		}
	}
	show(paged)
	v.waitAttr("body", "data-state", "ready")
	if got := v.text("#sql"); got != paged {
		t.Errorf("the view shows SQL %q", got)
	}
	rows := v.rows()
	if len(rows) != 10 || column(rows, 0)[0] != "1" || column(rows, 0)[9] != "10" {
		t.Fatalf("first page: %v", rows)
	}
	if v.attr("#status", "data-truncated") != "true" || !strings.Contains(v.text("#status"), "truncated") {
		t.Errorf("status %q does not say the result is truncated", v.text("#status"))
	}
	if got := v.text(`#rows thead th[data-column="country"]`); !strings.Contains(got, "country") {
		t.Errorf("country header %q", got)
	}

	// Sorting by name, ascending then descending.
	v.run(chromedp.Click(chromedp.CSS(`#rows thead th[data-column="name"]`), chromedp.FromNode(v.frame)))
	v.waitAttr(`#rows thead th[data-column="name"]`, "data-sort", "asc")
	names := column(v.rows(), 1)
	if !sort.StringsAreSorted(names) || len(names) != 10 {
		t.Errorf("names after sorting ascending: %q", names)
	}
	v.run(chromedp.Click(chromedp.CSS(`#rows thead th[data-column="name"]`), chromedp.FromNode(v.frame)))
	v.waitAttr(`#rows thead th[data-column="name"]`, "data-sort", "desc")
	desc := column(v.rows(), 1)
	if !sort.SliceIsSorted(desc, func(i, j int) bool { return desc[i] > desc[j] }) {
		t.Errorf("names after sorting descending: %q", desc)
	}

	// The next page: the view calls query again through the host with the
	// result's cursor; then back.
	v.run(chromedp.Click(chromedp.CSS("#next"), chromedp.FromNode(v.frame)))
	v.waitAttr("#status", "data-page", "2")
	ids := column(v.rows(), 0)
	if len(ids) != 10 || !slices.Contains(ids, "11") || !slices.Contains(ids, "20") {
		t.Errorf("second page ids %q", ids)
	}
	var calls []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if calls, err = chromedp.Run(ctx, chromedp.Evaluate[[]struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}](`window.host.calls`)); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0].Name != "query" || calls[0].Arguments["sql"] != paged || calls[0].Arguments["cursor"] == nil {
		t.Errorf("the view's calls through the host: %+v", calls)
	}
	v.run(chromedp.Click(chromedp.CSS("#prev"), chromedp.FromNode(v.frame)))
	v.waitAttr("#status", "data-page", "1")
	if ids := column(v.rows(), 0); len(ids) != 10 || !slices.Contains(ids, "1") {
		t.Errorf("back on the first page: ids %q", ids)
	}

	// A label-and-number result gets a chart.
	const grouped = "SELECT status, count(*) AS orders FROM orders GROUP BY status ORDER BY orders DESC"
	show(grouped)
	v.waitAttr("body", "data-state", "ready")
	if got := v.text("#sql"); got != grouped {
		t.Errorf("the view shows SQL %q", got)
	}
	bars, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll("#chart rect.bar-rect"), chromedp.FromNode(v.frame)))
	if err != nil || len(bars) != 5 {
		t.Errorf("chart bars: %d (%v), want one per status", len(bars), err)
	}

	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#view")))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("MCPKIT_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "query-view.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
