package streamable_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// benchHTTP serves body through the handler in front of the everything
// fixture b.N times, reusing one request whose body reader is reset per
// iteration, and checks the first answer.
func benchHTTP(b *testing.B, body, want string) {
	h := streamable.NewHandler(everything.New(nil), nil)
	rd := bytes.NewReader([]byte(body))
	req := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", rd)
	req.Header = streamable.StandardHeaders(body)
	req.Header.Set("Accept", "application/json")
	serve := func() *httptest.ResponseRecorder {
		rd.Reset([]byte(body))
		req.Body = io.NopCloser(rd)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := serve(); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
		b.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		serve()
	}
}

func BenchmarkToolsCallHTTP(b *testing.B) {
	benchHTTP(b, streamable.CallBody("1", "echo", `{"text":"hello, world"}`), `"text":"hello, world"`)
}

func BenchmarkToolsListHTTP(b *testing.B) {
	benchHTTP(b, streamable.RPC("1", "tools/list", ""), `"name":"echo"`)
}
