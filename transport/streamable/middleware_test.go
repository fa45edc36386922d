package streamable

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// TestWrappedHandlerKeepsEverything: a server wrapped with middleware keeps
// every feature and every check of the transport — the Mcp-Param-* header
// check, the legacy era (initialize, session requests) — and the
// middleware sees the requests of both eras.
func TestWrappedHandlerKeepsEverything(t *testing.T) {
	checkNoLeak(t)
	core := server.New(testInfo, nil) // both eras, as server.New serves by default
	defer core.Close()
	core.AddToolHandler(&protocol.Tool{Name: "region", InputSchema: json.RawMessage(regionSchema)},
		func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
			return server.TextResult("ok"), nil
		})
	var mu sync.Mutex
	var seen []string
	h := NewHandler(transport.Use(core, func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			era := "modern"
			if req.Session != nil {
				era = "legacy"
			}
			mu.Lock()
			seen = append(seen, era+" "+req.Message.Method)
			mu.Unlock()
			return next(ctx, req)
		}
	}), nil)

	do := func(r *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	// The header check still applies: a mismatched Mcp-Param-Region is
	// refused before the handler runs.
	bad := newPost(callBody("1", "region", `{"region":"us-west1"}`))
	bad.Header.Set(HeaderParamPrefix+"Region", "eu-west1")
	if rec := do(bad); rec.Code != 400 || !strings.Contains(rec.Body.String(), `"code":-32020`) {
		t.Fatalf("mismatched Mcp-Param-Region: %d %s", rec.Code, rec.Body)
	}
	good := newPost(callBody("2", "region", `{"region":"us-west1"}`))
	good.Header.Set(HeaderParamPrefix+"Region", "us-west1")
	if rec := do(good); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"text":"ok"`) {
		t.Fatalf("matching Mcp-Param-Region: %d %s", rec.Code, rec.Body)
	}

	// The legacy era is still served.
	init := `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(init))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	rec := do(r)
	sid := rec.Header().Get(HeaderSessionID)
	if rec.Code != 200 || sid == "" || !strings.Contains(rec.Body.String(), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize through the wrapper: %d %q %s", rec.Code, sid, rec.Body)
	}
	ping := `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`
	r = httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(ping))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set(HeaderSessionID, sid)
	r.Header.Set(HeaderProtocolVersion, "2025-11-25")
	if rec := do(r); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"name":"region"`) || strings.Contains(rec.Body.String(), "resultType") {
		t.Fatalf("legacy tools/list through the wrapper: %d %s", rec.Code, rec.Body)
	}
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(seen, ", ")
	if got != "modern tools/call, modern initialize, legacy tools/list" {
		t.Errorf("the middleware saw %q", got)
	}
}

// TestPanicIsAnInternalError: a panic in middleware (or anything else
// Serve runs) is answered with -32603 and no detail, in both eras — a
// legacy request runs on a goroutine the handler starts itself — and the
// handler goes on serving.
func TestPanicIsAnInternalError(t *testing.T) {
	checkNoLeak(t)
	core := server.New(testInfo, nil)
	defer core.Close()
	server.AddTool(core, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallRequest, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	h := NewHandler(transport.Use(core, func(next transport.ServeFunc) transport.ServeFunc {
		return func(ctx context.Context, req *transport.Request) (protocol.Result, error) {
			if req.Message.Method == protocol.MethodToolsList {
				panic("secret detail")
			}
			return next(ctx, req)
		}
	}), nil)
	post := func(body, sid string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		r.Header = standardHeaders(body)
		if sid != "" {
			r.Header.Set(HeaderSessionID, sid)
			r.Header.Set(HeaderProtocolVersion, "2025-11-25")
		}
		r.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	wantInternal := func(what string, rec *httptest.ResponseRecorder) {
		t.Helper()
		body := rec.Body.String()
		if !strings.Contains(body, `"code":-32603`) || strings.Contains(body, "secret") || strings.Contains(body, "goroutine") {
			t.Errorf("%s: %d %s", what, rec.Code, body)
		}
	}
	wantInternal("modern", post(rpc("1", "tools/list", ""), ""))
	if rec := post(callBody("2", "echo", `{"text":"ok"}`), ""); !strings.Contains(rec.Body.String(), `"text":"ok"`) {
		t.Fatalf("after the panic: %d %s", rec.Code, rec.Body)
	}
	init := `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	rec := post(init, "")
	sid := rec.Header().Get(HeaderSessionID)
	if sid == "" {
		t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	wantInternal("legacy", post(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, sid))
	if rec := post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok"}}}`, sid); !strings.Contains(rec.Body.String(), `"text":"ok"`) {
		t.Fatalf("legacy after the panic: %d %s", rec.Code, rec.Body)
	}
}
