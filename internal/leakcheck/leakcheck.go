// Package leakcheck lets tests assert that they leave no goroutine behind.
package leakcheck

import (
	"runtime"
	"testing"
	"time"
)

// Check records the goroutine count and, at cleanup, polls until it is back
// to that count, failing with a dump of every goroutine if it is not within
// a few seconds. Call it before starting what the test must stop, so that
// its cleanup runs last; tests that use it must not run in parallel.
func Check(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutines leaked: %d before, %d after\n%s", before, n, buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
