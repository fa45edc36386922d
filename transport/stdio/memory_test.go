package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/memtest"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// TestMemoryParentStopsReading floods a stdio server, run as a child
// process with the default options, with 400 requests of 1 MiB for its
// echo tool from a parent that never reads its output, and checks that the
// server's peak resident set grows by less than stdioMemoryBudget (four
// times that under the race detector). Unbounded, every request read was
// kept with its response: the peak grew by 1.2 GiB. Bounded, by about
// 60 MiB.
func TestMemoryParentStopsReading(t *testing.T) {
	if memtest.IsChild(t) {
		stdioMemoryChild()
		return
	}
	if testing.Short() {
		t.Skip("moves 400 MiB")
	}
	const (
		requests          = 400
		requestBytes      = 1 << 20
		stdioMemoryBudget = 200 << 20
	)
	budget := memtest.Budget(stdioMemoryBudget)
	cmd := memtest.Command(t)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe() // never read
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() {
		_ = cmd.Process.Kill()
		_ = in.Close()
		_ = cmd.Wait()
	}()
	if line, err := bufio.NewReader(errs).ReadString('\n'); err != nil || line != "READY\n" {
		t.Fatalf("the child did not start: %q %v", line, err)
	}
	go io.Copy(io.Discard, errs)
	base, err := memtest.Status(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}

	var sent atomic.Int64
	go func() {
		head := toolCall("%d", "echo", `{"text":"`)
		head = strings.TrimSuffix(head, `}}`)
		pad := bytes.Repeat([]byte("x"), requestBytes-len(head)-8)
		for i := range requests {
			var b bytes.Buffer
			fmt.Fprintf(&b, head, i+1)
			b.Write(pad)
			b.WriteString(`"}}}` + "\n")
			if _, err := in.Write(b.Bytes()); err != nil {
				return // the child was stopped
			}
			sent.Add(int64(b.Len()))
		}
	}()
	peak, over, err := memtest.Watch(pid, base+budget, 2*time.Second, sent.Load)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sent %d MiB of %d requests; server RSS %d MiB before, peak %d MiB (+%d MiB, budget +%d MiB)",
		sent.Load()>>20, requests, base>>20, peak>>20, (peak-base)>>20, budget>>20)
	if over || peak-base > budget {
		t.Errorf("the server's resident set grew by more than %d MiB (peak %d MiB over %d MiB)", budget>>20, peak>>20, base>>20)
	}
}

// stdioMemoryChild serves, with the default options, a server whose echo
// tool answers with its text.
func stdioMemoryChild() {
	s := server.New(protocol.Implementation{Name: "memory", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *server.CallRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		})
	fmt.Fprintln(os.Stderr, "READY")
	_ = stdio.Serve(context.Background(), s, os.Stdin, os.Stdout, nil)
}
