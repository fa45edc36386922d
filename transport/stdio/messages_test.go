package stdio_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// chanReader is a MessageReader fed by the test.
type chanReader chan stdio.Message

func (r chanReader) ReadMessage(ctx context.Context) (stdio.Message, error) {
	select {
	case m, ok := <-r:
		if !ok {
			return stdio.Message{}, io.EOF
		}
		return m, nil
	case <-ctx.Done():
		return stdio.Message{}, ctx.Err()
	}
}

// principalStub records the principal each notification was received with.
type principalStub struct {
	*stub
	mu       sync.Mutex
	received []string
}

func (p *principalStub) Receive(ctx context.Context, msg *jsonrpc.Message, sess transport.Session) {
	p.mu.Lock()
	p.received = append(p.received, msg.Method+" from "+transport.PrincipalFrom(ctx))
	p.mu.Unlock()
}

// TestServeMessagesContext: each message is served with its own context's
// values (here the principal), not cancelled when that context ends (the
// POST that carried it is over) but when ServeMessages' context does; Done
// is called once the request is answered (its response then in the output
// or on its way there, its bytes held by the connection's budget).
func TestServeMessagesContext(t *testing.T) {
	checkLeaks(t)
	st := &principalStub{stub: newStub()}
	blocked := make(chan struct{})
	st.on("who", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		if ctx.Err() != nil {
			return result(req, "cancelled")
		}
		return result(req, transport.PrincipalFrom(ctx))
	})
	st.on("block", func(ctx context.Context, req *jsonrpc.Message, _ transport.Notifier) *jsonrpc.Response {
		close(blocked)
		<-ctx.Done()
		return nil
	})
	in := make(chanReader)
	out := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- stdio.ServeMessages(ctx, st, in, out, nil) }()

	ended, end := context.WithCancel(transport.WithPrincipal(context.Background(), "alice"))
	end() // the request that carried it is over
	done := make(chan string, 4)
	in <- stdio.Message{Data: []byte(request("1", "who")), Context: ended, Done: func() { done <- out.String() }}
	<-done
	waitOutput(t, out, `{"jsonrpc":"2.0","id":1,"result":"alice"}`)
	in <- stdio.Message{Data: []byte(request("2", "who")), Context: transport.WithPrincipal(context.Background(), "bob"), Done: func() { done <- out.String() }}
	<-done
	waitOutput(t, out, `{"jsonrpc":"2.0","id":2,"result":"bob"}`)
	// Without a context of its own, a message has ServeMessages'.
	in <- stdio.Message{Data: []byte(request("3", "who")), Done: func() { done <- out.String() }}
	<-done
	waitOutput(t, out, `{"jsonrpc":"2.0","id":3,"result":""}`)
	in <- stdio.Message{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/x"}`), Context: transport.WithPrincipal(context.Background(), "carol"), Done: func() { done <- "" }}
	<-done
	st.mu.Lock()
	if len(st.received) != 1 || st.received[0] != "notifications/x from carol" {
		t.Errorf("received %q", st.received)
	}
	st.mu.Unlock()
	// A malformed message is answered and done with too.
	in <- stdio.Message{Data: []byte(`{"jsonrpc":"2.0","id":4,`), Done: func() { done <- out.String() }}
	<-done
	waitOutput(t, out, `"code":-32700`)

	// The end of ServeMessages' context cancels a request, though its
	// message's context goes on.
	in <- stdio.Message{Data: []byte(request("5", "block")), Context: transport.WithPrincipal(context.Background(), "dave"), Done: func() { done <- "" }}
	<-blocked
	cancel()
	if err := <-served; !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeMessages = %v", err)
	}
	<-done
}

// TestServeMessagesEOF: ServeMessages returns nil at end of input, after
// answering what it read.
func TestServeMessagesEOF(t *testing.T) {
	checkLeaks(t)
	in := make(chanReader, 1)
	out := &lockedBuffer{}
	in <- stdio.Message{Data: []byte(request("1", "ping"))}
	close(in)
	if err := stdio.ServeMessages(context.Background(), newStub(), in, out, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), `{"jsonrpc":"2.0","id":1,"result":{"method":"ping"}}`+"\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

// waitOutput waits for out to hold want.
func waitOutput(t *testing.T, out *lockedBuffer, want string) {
	t.Helper()
	waitFor(t, wait, "the output to hold "+want, func() bool { return strings.Contains(out.String(), want) })
}
