package streamable

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzServeHTTP feeds arbitrary bodies and header values through the
// handler in front of the real server core. Whatever arrives, the handler
// must not panic, must answer with a valid status and, when it answers an
// error with a body, the body must be JSON.
func FuzzServeHTTP(f *testing.F) {
	seeds := []struct{ body, accept, method, name, param string }{
		{rpc("1", "tools/list", ""), "application/json, text/event-stream", "tools/list", "", ""},
		{callBody("1", "fixed", "{}"), "application/json", "tools/call", "fixed", ""},
		{callBody(`"s"`, "echo", `{"text":"hi"}`), "text/event-stream", "tools/call", "echo", ""},
		{progressCall, "application/json, text/event-stream", "tools/call", "progress", ""},
		{callBody("2", "region", `{"region":"Hello","count":3,"dry":true,"place":{"zone":"z"}}`), "*/*", "tools/call", "region", "=?base64?SGVsbG8=?="},
		{callBody("2", "region", `{"region":"=?base64?SGVsbG8="}`), "*/*", "tools/call", "region", "=?base64?SGVsbG8="},
		{rpc("3", "prompts/get", `"name":"hello"`), "text/*", "prompts/get", "=?base64?aGVsbG8=?=", ""},
		{rpc("4", "resources/read", `"uri":"test://x"`), "application/json", "resources/read", "test://x", ""},
		{rpc("5", "subscriptions/listen", `"notifications":{}`), "application/json", "subscriptions/listen", "", ""},
		{rpc("6", "server/discover", ""), "", "server/discover", "", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "", "", ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "", "", "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "", "", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fixed","name":"echo"}}`, "", "tools/call", "fixed", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`, "", "tools/call", "", ""},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, "image/png", "x", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`, "", "tools/list", "", ""},
		{`{"jsonrpc":`, "", "", "", ""},
		{"", "", "", "", ""},
		{"\x00\xff", "", "", "", ""},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.accept, s.method, s.name, s.param)
	}
	srv := newTestServer()
	// Closed, so that a subscriptions/listen request answers at once with
	// its closing result instead of holding the stream open.
	_ = srv.Close()
	h := NewHandler(srv, &Options{MaxBodyBytes: 1 << 16, KeepAlive: -1})
	f.Fuzz(func(t *testing.T, body []byte, accept, method, name, param string) {
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(HeaderProtocolVersion, "2026-07-28")
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if method != "" {
			r.Header.Set(HeaderMethod, method)
		}
		if name != "" {
			r.Header.Set(HeaderName, name)
		}
		for _, p := range []string{"Region", "Count", "Dry", "Zone"} {
			if param != "" {
				r.Header.Set(HeaderParamPrefix+p, param)
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)

		if rec.Code < 200 || rec.Code > 599 {
			t.Fatalf("status %d", rec.Code)
		}
		out := rec.Body.Bytes()
		ct := rec.Header().Get("Content-Type")
		switch {
		case rec.Code == http.StatusAccepted || rec.Code == http.StatusNoContent:
			if len(out) != 0 {
				t.Fatalf("status %d with body %q", rec.Code, out)
			}
		case ct == "text/event-stream":
			if rec.Code != http.StatusOK {
				t.Fatalf("stream with status %d", rec.Code)
			}
			for _, ev := range parseSSE(t, string(out)) {
				if !json.Valid([]byte(ev)) {
					t.Fatalf("event is not JSON: %q", ev)
				}
			}
		case rec.Code >= 400 || len(out) > 0:
			if ct != "application/json" {
				t.Fatalf("status %d with Content-Type %q", rec.Code, ct)
			}
			if !json.Valid(out) || strings.ContainsRune(string(out), '\n') {
				t.Fatalf("status %d body is not single-line JSON: %q", rec.Code, out)
			}
			var m wireError
			if err := json.Unmarshal(out, &m); err != nil || m.JSONRPC != "2.0" || (m.Error == nil) == (m.Result == nil) {
				t.Fatalf("status %d body is not one JSON-RPC response: %s", rec.Code, out)
			}
			if rec.Code >= 400 && m.Error == nil {
				t.Fatalf("status %d with a result: %s", rec.Code, out)
			}
		}
	})
}

// FuzzDecodeHeaderValue checks the Base64 sentinel decoding: it never
// panics, accepts only header-safe input, leaves non-sentinel values as they
// are, and decodes what a client encodes.
func FuzzDecodeHeaderValue(f *testing.F) {
	for _, s := range []string{
		"us-west1", "", "=?base64?SGVsbG8=?=", "=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=",
		"=?base64?SGVsbG8=", "=?base64??=", "=?base64?=", "=?base64?SGVsbG9=?=", "caf\u00e9", "a\tb", "a\nb",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := decodeHeaderValue(v)
		safe := true
		for i := 0; i < len(v); i++ {
			if c := v[i]; (c < 0x20 && c != '\t') || c >= 0x7f {
				safe = false
			}
		}
		sentinel := len(v) >= len(sentinelPrefix)+len(sentinelSuffix) &&
			strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix)
		switch {
		case !safe:
			if err == nil {
				t.Fatalf("accepted unsafe value %q", v)
			}
		case !sentinel:
			if err != nil || got != v {
				t.Fatalf("literal %q decoded to %q, %v", v, got, err)
			}
		case err == nil:
			inner := v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)]
			if enc := base64.StdEncoding.EncodeToString([]byte(got)); enc != inner {
				t.Fatalf("%q decoded to %q, which encodes as %q", v, got, enc)
			}
		}

		// Whatever a client would send for v decodes back to v.
		enc := sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + sentinelSuffix
		back, err := decodeHeaderValue(enc)
		if err != nil || back != v {
			t.Fatalf("round trip of %q: %q, %v", v, back, err)
		}
	})
}
