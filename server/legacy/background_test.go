package legacy_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/feed"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
)

// flakyFeed is a change feed that refuses the first fail subscriptions
// and can drop its subscribers, as a broker whose connection breaks does.
type flakyFeed struct {
	mu         sync.Mutex
	fail       int
	attempts   []time.Time
	subs       []func(feed.Event) bool
	log        *feed.MemoryFeed // numbers and keeps the events
	lostBefore string           // Since reports the events up to this one lost
}

func (f *flakyFeed) Publish(ctx context.Context, e feed.Event) error {
	f.mu.Lock()
	if f.log == nil {
		f.log = feed.NewMemoryFeed()
	}
	_ = f.log.Publish(ctx, e)
	e.ID, _ = f.log.Last(ctx)
	subs := f.subs
	f.mu.Unlock()
	for _, d := range subs {
		d(e)
	}
	return nil
}

func (f *flakyFeed) Since(ctx context.Context, after string, max int) ([]feed.Event, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.log == nil {
		return nil, true, nil
	}
	if after < f.lostBefore {
		return nil, false, nil
	}
	return f.log.Since(ctx, after, max)
}

func (f *flakyFeed) Last(ctx context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.log == nil {
		return "", nil
	}
	return f.log.Last(ctx)
}

func (f *flakyFeed) Subscribe(ctx context.Context, deliver func(feed.Event) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts = append(f.attempts, time.Now())
	if f.fail != 0 {
		f.fail--
		return errors.New("broker unreachable")
	}
	f.subs = append(f.subs, deliver)
	return nil
}

// forget makes the feed drop the events it kept, as a bounded log does
// when a reader falls too far behind.
func (f *flakyFeed) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lostBefore, _ = f.log.Last(context.Background())
}

// drop ends every subscription, telling each with SubscriptionLost.
func (f *flakyFeed) drop() {
	f.mu.Lock()
	subs := f.subs
	f.subs = nil
	f.mu.Unlock()
	for _, d := range subs {
		d(feed.Event{Kind: feed.SubscriptionLost})
	}
}

func (f *flakyFeed) tries() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.attempts...)
}

func flakyCore(f *flakyFeed) *server.Server {
	core := server.New(tinyInfo, &server.Options{Feed: f})
	core.AddResource(&protocol.Resource{URI: tinyURI, Name: "a"}, server.TextResource("text/plain", "A"))
	return core
}

// TestSweepWithoutFeed: idle sessions expire although the change feed
// never accepts the adapter's subscription.
func TestSweepWithoutFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flakyFeed{fail: -1} // refuses for ever
		a := legacy.New(flakyCore(f), &legacy.Options{IdleTimeout: time.Minute})
		defer a.Close()
		open(t, a, `{}`, true)
		if a.Sessions() != 1 {
			t.Fatalf("sessions = %d", a.Sessions())
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n := a.Sessions(); n != 0 {
			t.Fatalf("%d sessions left after twice the idle timeout with the feed down", n)
		}
	})
}

// TestFeedRetriedWithBackoff: a refused subscription is tried again,
// waiting twice as long each time; once subscribed, a session whose client
// follows its standalone stream gets what changed meanwhile, once.
func TestFeedRetriedWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flakyFeed{fail: 3}
		core := flakyCore(f)
		a := legacy.New(core, nil)
		defer a.Close()
		s := open(t, a, `{}`, true)
		got := follow(t, s)
		core.NotifyToolsChanged() // while no subscription is up
		time.Sleep(time.Second)
		synctest.Wait()
		tries := f.tries()
		if len(tries) != 4 {
			t.Fatalf("%d subscription attempts, want 4 (3 refused)", len(tries))
		}
		for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
			if got := tries[i+1].Sub(tries[i]); got != want {
				t.Errorf("wait before attempt %d = %v, want %v", i+2, got, want)
			}
		}
		if want := []string{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`}; strings.Join(got(), "\n") != strings.Join(want, "\n") {
			t.Fatalf("delivered %q, want %q", got(), want)
		}
	})
}

// follow reads s's standalone stream on a goroutine, as a transport's
// GET does, until the test ends; got returns what was read so far.
func follow(t *testing.T, s *legacy.Session) (got func() []string) {
	t.Helper()
	var mu sync.Mutex
	var msgs []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := s.Next(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			msgs = append(msgs, string(m))
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	synctest.Wait()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), msgs...)
	}
}

// TestFeedLostCaughtUp: when the feed drops the subscription, the adapter
// subscribes again and an attached session gets, once each, the changes it
// has not seen; when the feed no longer keeps them, the session is told
// that its lists and the resources it subscribed to may have changed.
func TestFeedLostCaughtUp(t *testing.T) {
	const (
		tools   = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
		prompts = `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`
		res     = `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`
		updated = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"tiny://a"}}`
	)
	for _, kept := range []bool{true, false} {
		t.Run(map[bool]string{true: "kept", false: "lost"}[kept], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &flakyFeed{}
				core := flakyCore(f)
				a := legacy.New(core, nil)
				defer a.Close()
				s := open(t, a, `{}`, true)
				if r := s.Handle(context.Background(), req(t, "1", "resources/subscribe", `{"uri":"`+tinyURI+`"}`), nil); r.Error != nil {
					t.Fatal(r.Error)
				}
				got := follow(t, s)
				core.NotifyToolsChanged()
				synctest.Wait()
				f.drop()
				core.NotifyResourceUpdated(tinyURI) // while the adapter subscribes again
				if !kept {
					f.forget()
				}
				synctest.Wait()
				core.NotifyPromptsChanged() // changes flow again
				synctest.Wait()
				want := []string{tools, updated, prompts}
				if !kept {
					want = []string{tools, tools, prompts, res, updated, prompts}
				}
				if strings.Join(got(), "\n") != strings.Join(want, "\n") {
					t.Errorf("delivered\n%s\nwant\n%s", strings.Join(got(), "\n"), strings.Join(want, "\n"))
				}
			})
		})
	}
}

// TestBusySessionWhoseClientLeftExpires: a request whose client went away
// does not keep its session for ever: the session expires with the idle
// timeout and the request is cancelled. While the client waits, the
// session stays.
func TestBusySessionWhoseClientLeftExpires(t *testing.T) {
	for _, waiting := range []bool{true, false} {
		t.Run(map[bool]string{true: "client waits", false: "client left"}[waiting], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				core := newTiny(t)
				a := legacy.New(core.Server, &legacy.Options{IdleTimeout: time.Minute})
				defer a.Close()
				defer close(core.release)
				s := open(t, a, `{}`, true)
				// The transport holds the session while its client waits.
				release := func() {}
				if waiting {
					release = s.Hold()
				}
				done := make(chan error, 1)
				go func() {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					_, err := a.Serve(ctx, &transport.Request{Message: req(t, "5", "tools/call", `{"name":"block"}`), Kind: transport.KindSession, Session: s, Cancel: cancel})
					done <- err
				}()
				<-core.started
				time.Sleep(10 * time.Minute)
				synctest.Wait()
				if waiting {
					if a.Sessions() != 1 {
						t.Fatal("the session of a waiting client expired")
					}
					release() // the client goes now
					time.Sleep(2 * time.Minute)
					synctest.Wait()
				}
				if a.Sessions() != 0 {
					t.Fatal("the session whose client left did not expire")
				}
				select {
				case err := <-done:
					if !errors.Is(err, context.Canceled) {
						t.Errorf("the request ended with %v, want cancelled", err)
					}
				default:
					t.Error("the request still runs after its session expired")
				}
			})
		})
	}
}
