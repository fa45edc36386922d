package loadgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/loadgen"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// newHTTP serves the everything-server, both eras, on a loopback listener.
func newHTTP(t *testing.T) string {
	t.Helper()
	core := everything.New(nil)
	both := legacy.New(core, nil)
	ts := httptest.NewServer(streamable.NewHandler(both, nil))
	t.Cleanup(func() {
		ts.Close()
		both.Close()
		core.Close()
	})
	return ts.URL
}

// newHandler is the everything-server's modern-era HTTP handler, for
// tests that wrap it in a server of their own.
func newHandler(t *testing.T) http.Handler {
	t.Helper()
	core := everything.New(nil)
	t.Cleanup(func() { core.Close() })
	return streamable.NewHandler(core, nil)
}

// newStdio serves the everything-server, both eras, over pipes; the
// cleanup ends the stream and waits for Serve.
func newStdio(t *testing.T) loadgen.Target {
	t.Helper()
	core := everything.New(nil)
	both := legacy.New(core, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := stdio.Serve(context.Background(), both, inR, outW, nil)
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		outR.Close()
		both.Close()
		core.Close()
	})
	return loadgen.Target{Stdin: inW, Stdout: outR}
}

func TestRunEverything(t *testing.T) {
	tests := []struct {
		name     string
		stdio    bool
		era      string
		wantEra  string
		pipeline int
		own      bool // WorkerConns
	}{
		{"http modern", false, loadgen.EraModern, loadgen.EraModern, 0, false},
		{"http legacy", false, loadgen.EraLegacy, loadgen.EraLegacy, 0, false},
		{"http auto", false, "", loadgen.EraModern, 0, false},
		{"http modern worker conns", false, loadgen.EraModern, loadgen.EraModern, 0, true},
		{"http legacy worker conns", false, loadgen.EraLegacy, loadgen.EraLegacy, 0, true},
		{"stdio modern", true, loadgen.EraModern, loadgen.EraModern, 0, false},
		{"stdio legacy", true, loadgen.EraLegacy, loadgen.EraLegacy, 0, false},
		{"stdio modern pipelined", true, loadgen.EraModern, loadgen.EraModern, 8, false},
		{"stdio legacy pipelined", true, loadgen.EraLegacy, loadgen.EraLegacy, 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leakcheck.Check(t)
			var target loadgen.Target
			if tt.stdio {
				target = newStdio(t)
			} else {
				target = loadgen.Target{URL: newHTTP(t) + "/"}
			}
			res, err := loadgen.Run(context.Background(), target, &loadgen.Options{
				Concurrency: 4, Requests: 200, Warmup: 20 * time.Millisecond,
				Tool: "echo", Args: json.RawMessage(`{"text": "héllo <&> \"world\""}`),
				Era: tt.era, Pipeline: tt.pipeline, WorkerConns: tt.own,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Era != tt.wantEra {
				t.Errorf("era %q, want %q", res.Era, tt.wantEra)
			}
			if res.Requests != 200 || res.Errors != 0 || res.Mismatches != 0 {
				t.Errorf("requests %d errors %d mismatches %d (%s), want 200 0 0", res.Requests, res.Errors, res.Mismatches, res.FirstError)
			}
			if res.ReqPerSec <= 0 || res.P50 <= 0 || res.P50 > res.P90 || res.P90 > res.P99 {
				t.Errorf("implausible figures: %+v", res)
			}
		})
	}
}

func TestRunDuration(t *testing.T) {
	res, err := loadgen.Run(context.Background(), loadgen.Target{URL: newHTTP(t)}, &loadgen.Options{
		Concurrency: 2, Duration: 100 * time.Millisecond, Tool: "echo", Args: json.RawMessage(`{"text":"x"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != 0 {
		t.Errorf("requests %d errors %d (%s)", res.Requests, res.Errors, res.FirstError)
	}
	if res.Elapsed < 100*time.Millisecond || res.Elapsed > 2*time.Second {
		t.Errorf("elapsed %v, want about 100ms", res.Elapsed)
	}
}

// TestVerification serves wrong answers and checks that each is counted.
func TestVerification(t *testing.T) {
	tests := []struct {
		name       string
		answer     func(id string) string
		mismatches int64
	}{
		{"wrong text", func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"other"}]}}`
		}, 10},
		{"wrong id", func(id string) string {
			return `{"jsonrpc":"2.0","id":"` + id + `x","result":{"content":[{"type":"text","text":"hi"}]}}`
		}, 10},
		{"no result", func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `}` }, 10},
		{"not JSON", func(id string) string { return `{"jsonrpc"` }, 10},
		{"tool error", func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"isError":true,"content":[{"type":"text","text":"hi"}]}}`
		}, 0},
		{"error response", func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"boom"}}`
		}, 0},
		{"escaped differently", func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"\u0068i"}]}}`
		}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					ID json.RawMessage `json:"id"`
				}
				body, _ := io.ReadAll(r.Body)
				json.Unmarshal(body, &req)
				if r.Header.Get("Mcp-Method") != "tools/call" || r.Header.Get("Mcp-Name") != "echo" {
					http.Error(w, "missing headers", http.StatusBadRequest)
					return
				}
				calls++
				w.Header().Set("Content-Type", "application/json")
				if calls == 1 { // the era probe gets a good answer
					io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"content":[{"type":"text","text":"hi"}]}}`)
					return
				}
				io.WriteString(w, tt.answer(string(req.ID)))
			}))
			defer ts.Close()
			res, err := loadgen.Run(context.Background(), loadgen.Target{URL: ts.URL}, &loadgen.Options{
				Requests: 10, Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`), Era: loadgen.EraModern,
			})
			if err != nil {
				t.Fatal(err)
			}
			wantErrors := int64(10)
			if tt.mismatches < 0 {
				tt.mismatches, wantErrors = 0, 0
			}
			if res.Requests != 10 || res.Errors != wantErrors || res.Mismatches != tt.mismatches {
				t.Errorf("requests %d errors %d mismatches %d, want 10 %d %d (%s)",
					res.Requests, res.Errors, res.Mismatches, wantErrors, tt.mismatches, res.FirstError)
			}
			if wantErrors > 0 && res.FirstError == "" {
				t.Error("no FirstError")
			}
		})
	}
}

func TestSSEResponse(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"+
			": comment\nid: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+string(req.ID)+
			",\ndata: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n\n")
	}))
	defer ts.Close()
	res, err := loadgen.Run(context.Background(), loadgen.Target{URL: ts.URL}, &loadgen.Options{
		Requests: 5, Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 5 || res.Errors != 0 {
		t.Errorf("requests %d errors %d (%s)", res.Requests, res.Errors, res.FirstError)
	}
}

func TestRunOptionErrors(t *testing.T) {
	ctx := context.Background()
	url := loadgen.Target{URL: "http://127.0.0.1:1/"}
	tests := []struct {
		name   string
		target loadgen.Target
		opts   *loadgen.Options
		want   string
	}{
		{"no tool", url, &loadgen.Options{}, "no tool"},
		{"bad era", url, &loadgen.Options{Tool: "echo", Era: "future"}, "unknown era"},
		{"bad args", url, &loadgen.Options{Tool: "echo", Args: json.RawMessage(`[1]`)}, "JSON object"},
		{"no target", loadgen.Target{}, &loadgen.Options{Tool: "echo"}, "neither"},
		{"negative", url, &loadgen.Options{Tool: "echo", Requests: -1}, "negative"},
		{"unreachable", url, &loadgen.Options{Tool: "echo", Era: loadgen.EraModern}, "modern tools/call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadgen.Run(ctx, tt.target, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := loadgen.Run(ctx, newStdio(t), &loadgen.Options{
		Concurrency: 2, Duration: time.Minute, Tool: "echo", Args: json.RawMessage(`{"text":"x"}`), Pipeline: 4,
	})
	if err != context.DeadlineExceeded {
		t.Errorf("err %v, want the context's", err)
	}
}

// TestHTTPWorkerConnections: with WorkerConns, each worker keeps one
// connection for its requests, and dials again when the server closes it.
func TestHTTPWorkerConnections(t *testing.T) {
	h := newHandler(t)
	var served atomic.Int64
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%7 == 0 {
			w.Header().Set("Connection", "close") // every 7th answer closes its connection
		}
		h.ServeHTTP(w, r)
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	res, err := loadgen.Run(context.Background(), loadgen.Target{URL: ts.URL}, &loadgen.Options{
		Concurrency: 3, Requests: 140, Tool: "echo", Args: json.RawMessage(`{"text":"x"}`), Era: loadgen.EraModern,
		WorkerConns: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 140 || res.Errors != 0 {
		t.Fatalf("requests %d errors %d (%s), want 140 0", res.Requests, res.Errors, res.FirstError)
	}
	// 141 answers (the probe too), 20 of which closed their connection:
	// the probe's connection, the workers' 3 and one more after each
	// close.
	if got, want := conns.Load(), int64(1+3+20); got > want {
		t.Errorf("%d connections for %d requests, want at most %d", got, served.Load(), want)
	}
}

// TestHTTPRunCancelled: a run ends with its context even when the server
// never answers, on the workers' own connections or the pool's.
func TestHTTPRunCancelled(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(fmt.Sprint("WorkerConns=", own), func(t *testing.T) {
			leakcheck.Check(t)
			h := newHandler(t)
			release := make(chan struct{})
			var calls atomic.Int64
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) > 1 { // the probe is answered, the load is not
					select {
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				h.ServeHTTP(w, r)
			}))
			defer ts.Close()
			defer close(release)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := loadgen.Run(ctx, loadgen.Target{URL: ts.URL}, &loadgen.Options{
				Concurrency: 2, Duration: time.Minute, Tool: "echo", Args: json.RawMessage(`{"text":"x"}`), Era: loadgen.EraModern,
				WorkerConns: own,
			})
			if err != context.DeadlineExceeded {
				t.Errorf("err %v, want the context's", err)
			}
		})
	}
}

// TestHTTPWorkerConnsNoRedirect: a worker's own connection does not
// follow a redirect; the request counts as failed.
func TestHTTPWorkerConnsNoRedirect(t *testing.T) {
	h := newHandler(t)
	var calls atomic.Int64
	mux := http.NewServeMux()
	mux.Handle("/elsewhere", h)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 { // the probe is answered, the load is redirected
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
			return
		}
		h.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	res, err := loadgen.Run(context.Background(), loadgen.Target{URL: ts.URL + "/mcp"}, &loadgen.Options{
		Concurrency: 2, Requests: 10, Tool: "echo", Args: json.RawMessage(`{"text":"x"}`), Era: loadgen.EraModern,
		WorkerConns: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 10 || res.Errors != 10 || !strings.Contains(res.FirstError, "307") {
		t.Errorf("requests %d errors %d (%s), want 10 failed with 307", res.Requests, res.Errors, res.FirstError)
	}
}
