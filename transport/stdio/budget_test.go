package stdio_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// padded is a request of method whose params carry n bytes of padding.
func padded(id, method string, n int) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{"pad":"` + strings.Repeat("x", n) + `"}}`
}

const busyBytes = `"error":{"code":-32603,"message":"server busy: the requests waiting for an answer hold too many bytes; try again later"}`

// TestServeByteBudget: requests read and not answered may hold
// MaxPendingBytes; one more is refused at once as busy, while the input
// goes on being read (a cancellation still frees a request), and the
// bytes of a finished request are taken again.
func TestServeByteBudget(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	started := make(chan string, 8)
	release := make(chan struct{})
	st.on("hold", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		started <- string(req.ID.Raw())
		select {
		case <-release:
			return result(req, "held")
		case <-ctx.Done():
			return nil
		}
	})
	c := startConn(t, st, &stdio.Options{MaxPendingBytes: 4096})
	c.send(padded("1", "hold", 1500), padded("2", "hold", 1500))
	for range 2 {
		<-started
	}
	// 3,000 bytes and more are held: 1,500 more would pass 4,096.
	c.send(padded("3", "hold", 1500))
	if got := string(c.recv(wait)); !strings.Contains(got, `"id":3,`+busyBytes) {
		t.Fatalf("a request beyond the budget was answered %s", got)
	}
	// A smaller one fits.
	c.send(request("4", "hold"))
	if id := <-started; id != "4" {
		t.Fatalf("started %s", id)
	}
	// The reader is not stuck: a cancellation arrives, and the bytes of
	// the cancelled request are free again once it ends.
	c.send(cancelled("1"))
	waitFor(t, wait, "the cancelled request's bytes", func() bool {
		c.send(padded("5", "hold", 1500))
		select {
		case id := <-started:
			if id != "5" {
				t.Fatalf("started %s", id)
			}
			return true
		case l := <-c.lines:
			if !strings.Contains(string(l), `"id":5,`+busyBytes) {
				t.Fatalf("answered %s", l)
			}
			return false
		}
	})
	close(release)
	seen := map[string]bool{}
	for range 3 {
		seen[idOf(c.recv(wait))] = true
	}
	if !seen["2"] || !seen["4"] || !seen["5"] {
		t.Fatalf("answered %v, want 2, 4 and 5", seen)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
}

// TestServeResponsesHeld: a peer that stops reading holds the responses it
// has not read; they count against the budget until written, so later
// requests are refused rather than kept (and the worker that writes waits
// for the peer: with one worker, no other handler runs meanwhile).
func TestServeResponsesHeld(t *testing.T) {
	checkLeaks(t)
	st := newStub()
	var ran atomic.Int32
	st.on("big", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		ran.Add(1)
		return result(req, strings.Repeat("y", 3000))
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	budget := stdio.NewBudget(4096, nil)
	served := make(chan error, 1)
	go func() {
		served <- stdio.Serve(context.Background(), st, inR, outW, &stdio.Options{Budget: budget, MaxConcurrent: 1})
	}()
	defer func() {
		inW.Close()
		outR.Close()
		<-served
	}()
	if _, err := io.WriteString(inW, request("1", "big")+"\n"); err != nil {
		t.Fatal(err)
	}
	// The response waits for the reader: it holds its 3,000 bytes.
	waitFor(t, wait, "the response to be held", func() bool { return budget.Used() > 3000 })
	held := budget.Used()
	if _, err := io.WriteString(inW, request("2", "big")+"\n"); err != nil {
		t.Fatal(err)
	}
	// Request 2 fits beside the held response and waits for the worker;
	// request 3 does not fit and is refused. Each is seen in the budget
	// (request 2's bytes, then the refusal queued behind response 1)
	// before the output is read, which frees the budget.
	waitFor(t, wait, "request 2 to be taken", func() bool { return budget.Used() > held })
	taken := budget.Used()
	if _, err := io.WriteString(inW, padded("3", "big", 1500)+"\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, wait, "request 3 to be answered", func() bool { return budget.Used() > taken })
	if n := ran.Load(); n != 1 {
		t.Fatalf("%d handlers ran while the one worker writes to a peer that does not read", n)
	}
	r := bufio.NewReader(outR)
	var got []string
	for range 3 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line)
	}
	all := strings.Join(got, "")
	if !strings.Contains(got[0], `"id":1,"result"`) || !strings.Contains(all, `"id":2,"result"`) || !strings.Contains(all, `"id":3,`+busyBytes) {
		t.Fatalf("lines %.200s, %.200s and %.200s", got[0], got[1], got[2])
	}
	waitFor(t, wait, "the budget to be free", func() bool { return budget.Used() == 0 })
}

// TestBudget checks a budget and its parent.
func TestBudget(t *testing.T) {
	all := stdio.NewBudget(100, nil)
	a, b := stdio.NewBudget(60, all), stdio.NewBudget(60, all)
	if !a.Take(60) || a.Take(1) || !a.Full(1) {
		t.Fatal("a's own limit")
	}
	if b.Take(41) || b.Full(41) || all.Used() != 60 || b.Used() != 0 {
		t.Fatalf("the parent's limit: all %d, b %d", all.Used(), b.Used())
	}
	if !b.Take(40) || all.Used() != 100 {
		t.Fatal("b within both")
	}
	a.Release(60)
	if all.Used() != 40 || a.Used() != 0 || !b.Take(20) {
		t.Fatalf("released: all %d", all.Used())
	}
	if a.Take(-1) {
		t.Fatal("took a negative count")
	}
}
