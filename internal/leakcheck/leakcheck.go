// Package leakcheck lets tests assert that they leave no goroutine behind.
package leakcheck

import (
	"regexp"
	"runtime"
	"testing"
	"time"
)

// Check records the goroutine count and, at cleanup, polls until it is back
// to that count, failing with a dump of every goroutine if it is not within
// a few seconds. Call it before starting what the test must stop, so that
// its cleanup runs last; tests that use it must not run in parallel.
//
// The verdict is the dump's, not the count's: runtime.NumGoroutine still
// counts a goroutine that has returned but not yet been put away, and in a
// synctest bubble the few seconds are the bubble's clock, which can run out
// inside that window. The dump stops the world and lists only goroutines
// that are alive.
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
				if alive := len(header.FindAll(buf, -1)); alive > before {
					t.Errorf("goroutines leaked: %d before, %d after\n%s", before, alive, buf)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// header starts each goroutine's entry in a runtime.Stack dump.
var header = regexp.MustCompile(`(?m)^goroutine \d+ \[`)
