package streamable

import (
	"sync"
	"time"
)

// workers runs functions on goroutines that outlive one call: a legacy-era
// request runs on a goroutine of its own (so that it can go on when its
// connection is gone), and a fresh goroutine would grow its stack anew for
// every request. A call goes to an idle worker, or to a new one when none
// is idle, so calls never wait for each other; a worker that got nothing
// for a whole workerIdle period ends.
type workers struct {
	once sync.Once
	jobs chan func()
}

const workerIdle = 100 * time.Millisecond

func (w *workers) run(f func()) {
	w.once.Do(func() { w.jobs = make(chan func()) })
	select {
	case w.jobs <- f:
	default:
		go w.work(f)
	}
}

func (w *workers) work(f func()) {
	f()
	// The timer is not reset per call: a worker ends after one to two
	// idle periods.
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	busy := false
	for {
		select {
		case f := <-w.jobs:
			f()
			busy = true
		case <-idle.C:
			if !busy {
				return
			}
			busy = false
			idle.Reset(workerIdle)
		}
	}
}
