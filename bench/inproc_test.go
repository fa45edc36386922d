package bench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/bench/servers"
)

const (
	echoText    = "hello, benchmark"
	modernMeta  = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	initialize  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// callLine returns a tools/call echo request with id, in the era.
func callLine(id int, modern bool) string {
	meta := ""
	if modern {
		meta = modernMeta
	}
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + echoText + `"}` + meta + `}}`
}

// httpClient drives a handler in process, as one client would.
type httpClient struct {
	h      http.Handler
	header http.Header
	rd     bytes.Reader
	req    *http.Request
}

func newHTTPClient(h http.Handler, modern bool) *httpClient {
	c := &httpClient{h: h, header: http.Header{}}
	c.header.Set("Content-Type", "application/json")
	c.header.Set("Accept", "application/json, text/event-stream")
	c.req = httptest.NewRequest(http.MethodPost, "http://localhost/mcp", &c.rd)
	if modern {
		c.header.Set("MCP-Protocol-Version", "2026-07-28")
		c.header.Set("Mcp-Method", "tools/call")
		c.header.Set("Mcp-Name", "echo")
	}
	return c
}

// post serves body and returns the recorded response.
func (c *httpClient) post(body string) *httptest.ResponseRecorder {
	c.rd.Reset([]byte(body))
	c.req.Body = io.NopCloser(&c.rd)
	c.req.Header = c.header.Clone()
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, c.req)
	return rec
}

// handshake opens a legacy session.
func (c *httpClient) handshake(tb testing.TB) {
	rec := c.post(initialize)
	if rec.Code != http.StatusOK {
		tb.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	if s := rec.Header().Get("Mcp-Session-Id"); s != "" {
		c.header.Set("Mcp-Session-Id", s)
	}
	c.header.Set("MCP-Protocol-Version", "2025-11-25")
	if rec := c.post(initialized); rec.Code/100 != 2 {
		tb.Fatalf("initialized: %d %s", rec.Code, rec.Body)
	}
}

// BenchmarkHTTP serves one tools/call echo per iteration through each
// implementation's Streamable HTTP handler, so allocs/op and B/op are per
// request (the server's side plus the recorder's).
func BenchmarkHTTP(b *testing.B) {
	for _, impl := range servers.All() {
		for _, era := range []string{"modern", "legacy"} {
			b.Run(impl.Name+"/"+era, func(b *testing.B) {
				h, release := impl.HTTP()
				defer release()
				modern := era == "modern"
				c := newHTTPClient(h, modern)
				if !modern {
					c.handshake(b)
				}
				body := callLine(1, modern)
				if rec := c.post(body); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), echoText) {
					b.Fatalf("got %d %s", rec.Code, rec.Body)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					c.post(body)
				}
			})
		}
	}
}

// stdioPipe runs an implementation's stdio loop over pipes.
type stdioPipe struct {
	in   io.WriteCloser
	out  *bufio.Reader
	done chan error
}

func startStdio(b *testing.B, impl servers.Impl, modern bool) *stdioPipe {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	return startStdioOver(b, impl, modern, inR, inW, outR, outW)
}

// startStdioOS is startStdio over operating-system pipes, as a server
// process reads and writes them.
func startStdioOS(b *testing.B, impl servers.Impl, modern bool) *stdioPipe {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		inR.Close()
		outR.Close()
	})
	return startStdioOver(b, impl, modern, inR, inW, outR, outW)
}

func startStdioOver(b *testing.B, impl servers.Impl, modern bool, inR io.Reader, inW io.WriteCloser, outR io.Reader, outW io.WriteCloser) *stdioPipe {
	p := &stdioPipe{in: inW, out: bufio.NewReaderSize(outR, 64<<10), done: make(chan error, 1)}
	go func() {
		err := impl.Stdio(context.Background(), inR, outW)
		outW.Close()
		p.done <- err
	}()
	b.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-p.done
	})
	if !modern {
		io.WriteString(inW, initialize+"\n")
		if _, err := p.out.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
		io.WriteString(inW, initialized+"\n")
	}
	io.WriteString(inW, callLine(1, modern)+"\n")
	line, err := p.out.ReadSlice('\n')
	if err != nil || !bytes.Contains(line, []byte(echoText)) {
		b.Fatalf("first call: %v %s", err, line)
	}
	return p
}

// BenchmarkStdio sends tools/call echo requests over each implementation's
// stdio loop: "sequential" waits for each response before the next
// request, "pipelined" has one goroutine write every request while the
// benchmark reads the responses.
func BenchmarkStdio(b *testing.B) {
	for _, impl := range servers.All() {
		for _, era := range []string{"modern", "legacy"} {
			modern := era == "modern"
			b.Run(impl.Name+"/"+era+"/sequential", func(b *testing.B) {
				p := startStdio(b, impl, modern)
				var line []byte
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					line = append(append(line[:0], callLine(i+2, modern)...), '\n')
					p.in.Write(line)
					if _, err := p.out.ReadSlice('\n'); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(impl.Name+"/"+era+"/c16", func(b *testing.B) {
				// As bench/cmd/compare loads a server process: 16
				// requests in flight over operating-system pipes, the
				// next written as soon as an answer is read, lines
				// written together while more are ready.
				p := startStdioOS(b, impl, modern)
				const window = 16
				next := make(chan int, window)
				sent := min(window, b.N)
				for i := range sent {
					next <- i
				}
				wrote := make(chan struct{})
				b.ReportAllocs()
				b.ResetTimer()
				go func() {
					defer close(wrote)
					w := bufio.NewWriterSize(p.in, 64<<10)
					for i := range next {
						w.WriteString(callLine(i+2, modern))
						w.WriteByte('\n')
						if len(next) == 0 && w.Flush() != nil {
							return
						}
					}
				}()
				for range b.N {
					if _, err := p.out.ReadSlice('\n'); err != nil {
						b.Fatal(err)
					}
					if sent < b.N {
						next <- sent
						sent++
					}
				}
				close(next)
				<-wrote
			})
			b.Run(impl.Name+"/"+era+"/pipelined", func(b *testing.B) {
				p := startStdio(b, impl, modern)
				b.ReportAllocs()
				b.ResetTimer()
				go func() {
					w := bufio.NewWriterSize(p.in, 64<<10)
					for i := range b.N {
						w.WriteString(callLine(i+2, modern))
						w.WriteByte('\n')
					}
					w.Flush()
				}()
				for range b.N {
					if _, err := p.out.ReadSlice('\n'); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestEcho checks that every implementation answers the echo call in
// each era and on each transport, so the benchmarks compare like with like.
func TestEcho(t *testing.T) {
	for _, impl := range servers.All() {
		for _, modern := range []bool{true, false} {
			h, release := impl.HTTP()
			c := newHTTPClient(h, modern)
			if !modern {
				c.handshake(t)
			}
			if rec := c.post(callLine(7, modern)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"text":"`+echoText+`"`) {
				t.Errorf("%s modern=%v: HTTP got %d %s", impl.Name, modern, rec.Code, rec.Body)
			}
			release()
		}
	}
}
