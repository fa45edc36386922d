package stdio

import (
	"sync"
	"sync/atomic"
)

// workers are the goroutines that serve a connection's requests: at most
// MaxConcurrent, started as the requests come and kept until the
// connection ends, so that a request is handed to a goroutine whose stack
// has already grown instead of paying for a new one (a new goroutine per
// request cost about 4 µs of CPU per request under pipelining). A request
// holds its worker until its response is written: a peer that stops
// reading holds at most MaxConcurrent responses. Requests beyond the
// workers wait in jobs, in the order they were read; the reader never
// waits for them. subscriptions/listen streams, which last, get goroutines
// of their own.
type workers struct {
	jobs    chan *call    // capacity MaxPending: never full, as at most MaxPending requests are registered
	max     int           // MaxConcurrent
	running int           // the reader's count of workers started
	idle    atomic.Int32  // workers done with a job and not yet claimed by the reader
	turns   chan struct{} // capacity MaxConcurrent: a request holds one while served (inline.go)
	wg      sync.WaitGroup
}

func newWorkers(maxConcurrent, maxPending int) *workers {
	return &workers{jobs: make(chan *call, maxPending), max: maxConcurrent, turns: make(chan struct{}, maxConcurrent)}
}

// submit hands cl to a worker: an idle one, a new one while fewer than max
// run, or else the first to be done. Only the reader calls it, so that
// claiming an idle worker (the one place idle goes down) needs no lock.
func (w *workers) submit(c *conn, cl *call) {
	switch {
	case w.idle.Load() > 0:
		w.idle.Add(-1)
	case w.running < w.max:
		w.running++
		w.wg.Add(1)
		go w.work(c)
	}
	w.jobs <- cl
}

// claim takes a turn for a request the reader serves itself, if one is
// free; release gives it back.
func (w *workers) claim() bool {
	select {
	case w.turns <- struct{}{}:
		return true
	default:
		return false
	}
}

func (w *workers) release() { <-w.turns }

func (w *workers) work(c *conn) {
	defer w.wg.Done()
	for cl := range w.jobs {
		w.turns <- struct{}{}
		c.serve(cl)
		<-w.turns
		w.idle.Add(1)
	}
}

// stop ends the workers once every request was served, and waits for them.
func (w *workers) stop() {
	close(w.jobs)
	w.wg.Wait()
}
