package stdio_test

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// benchConn runs Serve over pipes for a benchmark; stop ends it.
type benchConn struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	outW *io.PipeWriter
	done chan error
	head []byte // a request line up to its id
	tail []byte // and after it
}

// appendLine appends the request line with id i to dst; every request has
// its own id, so none is refused as a duplicate while in flight.
func (c *benchConn) appendLine(dst []byte, i int) []byte {
	dst = append(dst, c.head...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	return append(dst, c.tail...)
}

func startBench(b *testing.B) *benchConn {
	b.Helper()
	srv := everything.New(nil)
	b.Cleanup(func() { srv.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &benchConn{in: inW, out: bufio.NewReaderSize(outR, 64<<10), outW: outW, done: make(chan error, 1)}
	go func() { c.done <- stdio.Serve(context.Background(), srv, inR, outW, nil) }()
	line := toolCall("0", "echo", `{"text":"hello, benchmark"}`) + "\n"
	at := len(`{"jsonrpc":"2.0","id":`)
	c.head, c.tail = []byte(line[:at]), []byte(line[at+1:])
	return c
}

func (c *benchConn) stop(b *testing.B) {
	b.Helper()
	c.in.Close()
	if err := <-c.done; err != nil {
		b.Fatal(err)
	}
	c.outW.Close()
}

// BenchmarkToolsCallStdio pipelines tools/call echo requests: one goroutine
// writes every request line while the benchmark reads the responses.
func BenchmarkToolsCallStdio(b *testing.B) {
	c := startBench(b)
	b.ReportAllocs()
	b.ResetTimer()
	written := make(chan error, 1)
	n := b.N
	go func() {
		var buf []byte
		for i := range n {
			buf = c.appendLine(buf[:0], i)
			if _, err := c.in.Write(buf); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	for range n {
		if _, err := c.out.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-written; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	c.stop(b)
}

// BenchmarkToolsCallStdioSequential sends one tools/call echo and waits for
// its response before sending the next.
func BenchmarkToolsCallStdioSequential(b *testing.B) {
	c := startBench(b)
	b.ReportAllocs()
	b.ResetTimer()
	var buf []byte
	for i := 0; b.Loop(); i++ {
		buf = c.appendLine(buf[:0], i)
		if _, err := c.in.Write(buf); err != nil {
			b.Fatal(err)
		}
		if _, err := c.out.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	c.stop(b)
}
