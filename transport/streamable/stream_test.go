package streamable

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// progressCall is a tools/call of the progress tool asking for progress.
const progressCall = `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"progress","arguments":{},` +
	`"_meta":{"progressToken":"tok","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

const serverMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test-server","version":"1.0.0"}}`

func TestResponseShapes(t *testing.T) {
	progressEvents := "event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2}}` + "\n\n" +
		"event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"total":2}}` + "\n\n"
	progressResult := `{"jsonrpc":"2.0","id":"p","result":{"resultType":"complete",` + serverMeta + `,"content":[{"type":"text","text":"done"}]}}`
	fixedResult := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",` + serverMeta + `,"content":[{"type":"text","text":"fixed text"}]}}`
	sseHeaders := map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
	jsonHeaders := map[string]string{"Content-Type": "application/json", "X-Accel-Buffering": ""}
	for _, tc := range []struct {
		name    string
		body    string
		accept  string
		status  int
		headers map[string]string
		want    string
	}{
		{"plain call answers JSON", callBody("1", "fixed", "{}"), "application/json, text/event-stream", 200, jsonHeaders, fixedResult},
		{"plain call preferring SSE", callBody("1", "fixed", "{}"), "text/event-stream", 200, sseHeaders, "event: message\ndata: " + fixedResult + "\n\n"},
		{"progress streams", progressCall, "application/json, text/event-stream", 200, sseHeaders, progressEvents + "event: message\ndata: " + progressResult + "\n\n"},
		{"progress without SSE drops notifications", progressCall, "application/json", 200, jsonHeaders, progressResult},
		{"progress with text/* refused", progressCall, "*/*, text/*;q=0", 200, jsonHeaders, progressResult},
		{"progress with wildcard streams", progressCall, "*/*", 200, sseHeaders, progressEvents + "event: message\ndata: " + progressResult + "\n\n"},
		{"error as JSON keeps its status", rpc("2", "unknown/method", ""), "application/json, text/event-stream", 404, jsonHeaders,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: unknown/method"}}`},
		{"error on a stream", rpc("2", "unknown/method", ""), "text/event-stream", 200, sseHeaders,
			"event: message\ndata: " + `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: unknown/method"}}` + "\n\n"},
		{"tool error is a result", callBody("3", "nope", "{}"), "application/json", 200, jsonHeaders,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: nope"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPost(tc.body)
			r.Header.Set("Accept", tc.accept)
			rec := httptest.NewRecorder()
			NewHandler(newTestServer(), nil).ServeHTTP(rec, r)
			if rec.Code != tc.status {
				t.Errorf("status = %d, want %d", rec.Code, tc.status)
			}
			for k, v := range tc.headers {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if got := rec.Body.String(); got != tc.want {
				t.Errorf("body\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestStubResponses covers what a handler may do besides answering: send
// notifications only, or send nothing.
func TestStubResponses(t *testing.T) {
	note := jsonrpc.AppendNotification(nil, protocol.NotificationMessage, json.RawMessage(`{"level":"info","data":"x"}`))
	var kept transport.Notifier // a notifier held past its response
	for _, tc := range []struct {
		name   string
		handle func(ctx context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response
		status int
		ct     string
		want   string
	}{
		{"no response", func(context.Context, *jsonrpc.Message, transport.Notifier) *jsonrpc.Response { return nil },
			http.StatusNoContent, "", ""},
		{"notification then no response", func(_ context.Context, _ *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
			if err := n.Notify(note); err != nil {
				t.Errorf("Notify: %v", err)
			}
			return nil
		}, http.StatusOK, "text/event-stream", "event: message\ndata: " + string(note) + "\n\n"},
		{"error with an HTTP status", func(_ context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
			return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(-32601, "no", nil)}
		}, http.StatusNotFound, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`},
		{"error without one", func(_ context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
			return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(-32603, "boom", nil)}
		}, http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`},
		{"notify after the response fails", func(_ context.Context, req *jsonrpc.Message, n transport.Notifier) *jsonrpc.Response {
			kept = n
			return &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}
		}, http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept = nil
			rec := httptest.NewRecorder()
			NewHandler(&stubHandler{handle: tc.handle}, nil).ServeHTTP(rec, newPost(rpc("1", protocol.MethodToolsList, "")))
			if rec.Code != tc.status || rec.Header().Get("Content-Type") != tc.ct || rec.Body.String() != tc.want {
				t.Errorf("got %d %q %q, want %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body, tc.status, tc.ct, tc.want)
			}
			if kept != nil {
				if err := kept.Notify(note); err == nil {
					t.Errorf("Notify after the response succeeded")
				}
				if rec.Body.String() != tc.want {
					t.Errorf("body changed after the response: %q", rec.Body)
				}
			}
		})
	}
}
