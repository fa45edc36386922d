package leakcheck

import (
	"runtime"
	"testing"
)

// TestHeaderCountsGoroutines: the dump's entries are the goroutines
// runtime.NumGoroutine counts when none is starting or ending.
func TestHeaderCountsGoroutines(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	for range 3 {
		go func() {
			<-stop
			done <- struct{}{}
		}()
	}
	defer func() {
		close(stop)
		for range 3 {
			<-done
		}
	}()
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	if got, want := len(header.FindAll(buf, -1)), runtime.NumGoroutine(); got != want {
		t.Errorf("dump lists %d goroutines, NumGoroutine says %d\n%s", got, want, buf)
	}
}
