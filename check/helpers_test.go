package check

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// echoCall is the safe tool call the tests ask for.
var echoCall = Options{CallTool: "echo", CallArgs: json.RawMessage(`{"text":"hello"}`)}

// everythingHandler returns the everything-server over Streamable HTTP:
// dual-era through the legacy adapter (with options lo), or modern-only.
func everythingHandler(t testing.TB, dual bool, lo *legacy.Options) http.Handler {
	t.Helper()
	if !dual {
		core := everything.New(&server.Options{Legacy: legacy.Options{Disabled: true}})
		t.Cleanup(func() { core.Close() })
		return streamable.NewHandler(core, nil)
	}
	core := everything.New(nil)
	t.Cleanup(func() { core.Close() })
	a := legacy.New(core, lo)
	t.Cleanup(func() { a.Close() })
	return streamable.NewHandler(a, nil)
}

// runCheck serves h and checks it.
func runCheck(t testing.TB, h http.Handler, o Options) *Report {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	o.URL = srv.URL
	rep, err := Run(context.Background(), &o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

func statuses(rep *Report) map[string]Status {
	m := map[string]Status{}
	for _, r := range rep.Results {
		m[r.ID] = r.Status
	}
	return m
}

// exchange is one HTTP request a fixture sees, and what it may change in
// the answer.
type exchange struct {
	req     *http.Request
	method  string // JSON-RPC method of the body, "" when none
	modern  bool   // the body carries _meta
	status  int
	message map[string]any // the JSON-RPC response, nil when none
}

// result returns the response's result object, or nil.
func (e *exchange) result() map[string]any {
	r, _ := e.message["result"].(map[string]any)
	return r
}

// rewriter wraps h: before (when set) may change the request or answer it
// itself (returning true); after (when set) may change each JSON-RPC
// response and the status.
type rewriter struct {
	h      http.Handler
	before func(w http.ResponseWriter, e *exchange) bool
	after  func(e *exchange)
}

func (x *rewriter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	e := &exchange{req: r}
	var head struct {
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &head) == nil {
		e.method = head.Method
		_, e.modern = head.Params["_meta"]
	}
	if x.before != nil && x.before(w, e) {
		return
	}
	if x.after == nil {
		x.h.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	x.h.ServeHTTP(rec, r)
	for k, vs := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	out := rec.Body.Bytes()
	e.status = rec.Code
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		var b bytes.Buffer
		for _, line := range strings.SplitAfter(string(out), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				if m := decodeMap(data); m != nil && m["method"] == nil {
					e.message = m
					x.after(e)
					nb, _ := json.Marshal(e.message)
					line = "data: " + string(nb) + "\n"
				}
			}
			b.WriteString(line)
		}
		out = b.Bytes()
	} else if m := decodeMap(string(out)); m != nil {
		e.message = m
		x.after(e)
		out, _ = json.Marshal(e.message)
	} else {
		x.after(e)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(e.status)
	_, _ = w.Write(out)
}

func decodeMap(s string) map[string]any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil {
		return nil
	}
	return m
}

// writeJSON answers a fixture request itself.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// readBody reads a request body and leaves it readable again.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}
