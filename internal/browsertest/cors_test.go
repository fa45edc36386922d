package browsertest

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// callerPage is the page on origin A: functions that call an MCP server on
// another origin with fetch, a modern tools/call each, and keep what they
// saw in window.calls[name].
const callerPage = `<!doctype html>
<meta charset="utf-8">
<title>caller</title>
<script>
window.calls = {};
function request(id, tool) {
  return {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'Accept': 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': tool,
    },
    body: JSON.stringify({jsonrpc: '2.0', id, method: 'tools/call', params: {
      name: tool, arguments: {},
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': {name: 'page', version: '1'},
        progressToken: 'p-' + id,
      },
    }}),
  };
}
// call starts a tools/call and reads its answer chunk by chunk; abortOnFirst
// aborts it once the first chunk has arrived.
function call(name, url, tool, abortOnFirst) {
  const c = {chunks: [], text: '', done: false, error: null, status: 0, aborted: false};
  window.calls[name] = c;
  const ctrl = new AbortController();
  (async () => {
    try {
      const res = await fetch(url, {...request(Object.keys(window.calls).length, tool), signal: ctrl.signal});
      c.status = res.status;
      c.contentType = res.headers.get('Content-Type');
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        const s = dec.decode(value, {stream: true});
        c.chunks.push(s);
        c.text += s;
        if (abortOnFirst && !c.aborted) {
          c.aborted = true;
          ctrl.abort();
        }
      }
      c.done = true;
    } catch (e) {
      c.error = String(e && e.name || e);
      c.done = true;
    }
  })();
  return true;
}
</script>
<p>caller</p>`

// mcpFixture is the MCP server of the browser tests: "stream" sends a
// progress notification and answers once released; "block" sends one and
// waits to be cancelled.
type mcpFixture struct {
	srv       *server.Server
	release   chan struct{}
	cancelled chan struct{}
	calls     chan string // the tools called

	mu       sync.Mutex
	requests []string // "METHOD status" of every HTTP request
}

func newMCPFixture(t *testing.T) *mcpFixture {
	f := &mcpFixture{release: make(chan struct{}), cancelled: make(chan struct{}), calls: make(chan string, 16)}
	f.srv = server.New(protocol.Implementation{Name: "browser-fixture", Version: "1"}, nil)
	t.Cleanup(func() { f.srv.Close() })
	server.AddTool(f.srv, &protocol.Tool{Name: "stream"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		f.calls <- "stream"
		if err := req.Progress(1, 2, "half way"); err != nil {
			return "", err
		}
		select {
		case <-f.release:
			return "stream done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	server.AddTool(f.srv, &protocol.Tool{Name: "block"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		f.calls <- "block"
		if err := req.Progress(0, 1, "started"); err != nil {
			return "", err
		}
		<-ctx.Done()
		close(f.cancelled)
		return "", ctx.Err()
	})
	return f
}

// handler serves the fixture over Streamable HTTP with the origins listed,
// recording each request's method and status.
func (f *mcpFixture) handler(port string, origins []string) http.Handler {
	h := streamable.NewHandler(f.srv, &streamable.Options{AllowedOrigins: origins, AllowedHosts: []string{mcpHost + ":" + port}})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+http.StatusText(sw.status))
		f.mu.Unlock()
	})
}

func (f *mcpFixture) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// statusWriter notes the status written; Unwrap keeps
// http.ResponseController (flushes, deadlines) working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// lateHandler lets a handler be set once the port it is served on is known.
type lateHandler struct {
	mu sync.Mutex
	h  http.Handler
}

func (l *lateHandler) set(h http.Handler) { l.mu.Lock(); l.h = h; l.mu.Unlock() }

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	h := l.h
	l.mu.Unlock()
	h.ServeHTTP(w, r)
}

type callState struct {
	Chunks      []string `json:"chunks"`
	Text        string   `json:"text"`
	Done        bool     `json:"done"`
	Error       *string  `json:"error"`
	Status      int      `json:"status"`
	ContentType string   `json:"contentType"`
}

func readCall(ctx context.Context, t *testing.T, name string) callState {
	t.Helper()
	c, err := chromedp.Run(ctx, chromedp.Evaluate[callState](`window.calls[`+quoteJS(name)+`]`))
	if err != nil {
		t.Fatalf("reading call %s: %v", name, err)
	}
	return c
}

// waitCall polls the page until cond holds for the call.
func waitCall(ctx context.Context, t *testing.T, name string, cond func(callState) bool) callState {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c := readCall(ctx, t, name)
		if cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s: still %+v", name, c)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func quoteJS(s string) string { return "'" + s + "'" }

func startCall(ctx context.Context, t *testing.T, name, url, tool string, abortOnFirst bool) {
	t.Helper()
	js := "call(" + quoteJS(name) + "," + quoteJS(url) + "," + quoteJS(tool) + "," + map[bool]string{true: "true", false: "false"}[abortOnFirst] + ")"
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil || !ok {
		t.Fatalf("%s: %v", js, err)
	}
}

// TestBrowserCORS: a page on origin A calls the MCP server on origin B with
// fetch. When A is on the server's list, the call goes through (a tools/call
// answered as an SSE stream the page reads as it arrives) and aborting a
// fetch cancels the handler; when it is not, the browser blocks the call and
// the server refuses it.
func TestBrowserCORS(t *testing.T) {
	ctx := newBrowser(t)
	appPort := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(callerPage))
	}))
	appOrigin := "http://" + appHost + ":" + appPort

	t.Run("listed", func(t *testing.T) {
		f := newMCPFixture(t)
		late := &lateHandler{}
		port := serve(t, late)
		late.set(f.handler(port, []string{appOrigin}))
		url := "http://" + mcpHost + ":" + port + "/mcp"
		if err := chromedp.Do(ctx, chromedp.Navigate(appOrigin+"/")); err != nil {
			t.Fatal(err)
		}

		startCall(ctx, t, "stream", url, "stream", false)
		first := waitCall(ctx, t, "stream", func(c callState) bool { return len(c.Chunks) > 0 || c.Done })
		if first.Error != nil || first.Done {
			t.Fatalf("stream call: %+v (server saw %v)", first, f.log())
		}
		if first.ContentType != "text/event-stream" {
			t.Errorf("Content-Type %q, want text/event-stream", first.ContentType)
		}
		if !contains(first.Text, "notifications/progress") || contains(first.Text, "stream done") {
			t.Errorf("first chunks %q: want the progress notification alone", first.Text)
		}
		close(f.release) // only now may the result come
		final := waitCall(ctx, t, "stream", func(c callState) bool { return c.Done })
		if final.Error != nil || !contains(final.Text, "stream done") {
			t.Errorf("stream call ended %+v", final)
		}

		startCall(ctx, t, "block", url, "block", true)
		select {
		case <-f.cancelled:
		case <-time.After(20 * time.Second):
			t.Fatalf("aborting the fetch did not cancel the handler; page saw %+v", readCall(ctx, t, "block"))
		}
		if c := waitCall(ctx, t, "block", func(c callState) bool { return c.Done }); c.Error == nil || *c.Error != "AbortError" {
			t.Errorf("aborted call ended %+v", c)
		}
	})

	for _, tc := range []struct {
		name    string
		origins []string
	}{
		{"unlisted", []string{"http://other.test"}},
		{"cors off", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newMCPFixture(t)
			late := &lateHandler{}
			port := serve(t, late)
			late.set(f.handler(port, tc.origins))
			url := "http://" + mcpHost + ":" + port + "/mcp"
			if err := chromedp.Do(ctx, chromedp.Navigate(appOrigin+"/")); err != nil {
				t.Fatal(err)
			}
			startCall(ctx, t, "stream", url, "stream", false)
			c := waitCall(ctx, t, "stream", func(c callState) bool { return c.Done })
			if c.Error == nil || *c.Error != "TypeError" {
				t.Errorf("the browser let the call through: %+v", c)
			}
			log := f.log()
			if len(log) != 1 || log[0] != "OPTIONS Forbidden" && log[0] != "OPTIONS Method Not Allowed" {
				t.Errorf("server saw %v, want one refused preflight", log)
			}
			select {
			case tool := <-f.calls:
				t.Errorf("the server ran %s for a blocked page", tool)
			default:
			}
		})
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && indexOf(s, sub) >= 0
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
