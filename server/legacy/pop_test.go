package legacy_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/server/legacy"
)

// netStore behaves as a store over the network does when the caller's
// context ends while a command is under way: Pop takes the message and
// then reports only that the context ended. during runs inside Pop.
type netStore struct {
	*legacy.MemoryStore
	during func()
}

func (n *netStore) Pop(ctx context.Context, id string) ([]byte, error) {
	if n.during != nil {
		n.during()
	}
	msg, err := n.MemoryStore.Pop(ctx, id)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return msg, err
}

// TestNextLosesNothingWhenTheReaderLeaves: a reader whose context ends
// while Next takes a message from the outbox gets the message (to record
// for the stream that resumes), and it is not lost between the store and
// the reader.
func TestNextLosesNothingWhenTheReaderLeaves(t *testing.T) {
	st := &netStore{MemoryStore: legacy.NewMemoryStore()}
	a, _ := newAdapter(t, &legacy.Options{Store: st})
	s := open(t, a, `{}`, true)
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"kept"}}`)
	if err := st.Push(context.Background(), s.ID(), msg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st.during = cancel // the client leaves while the message is taken
	got, err := s.Next(ctx)
	st.during = nil
	if err == nil && string(got) == string(msg) {
		return
	}
	for _, m := range st.Outbox(s.ID()) {
		if string(m) == string(msg) {
			return // still queued: the next reader gets it
		}
	}
	t.Fatalf("the message was taken from the outbox and lost (Next: %q, %v)", got, err)
}
