package sqlserver

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestCloseStopsWatcher checks that Close ends the change-detection
// goroutine and is idempotent.
func TestCloseStopsWatcher(t *testing.T) {
	e := sqliteEnv(t)
	before := runtime.NumGoroutine()
	o := e.opts
	o.PollInterval = 10 * time.Millisecond
	d, err := Open(context.Background(), &o)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.watchDone:
	default:
		t.Fatal("watcher still running after Close")
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before Open", n, before)
	}
}
