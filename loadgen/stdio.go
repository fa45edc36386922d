package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// stdioDriver loads a newline-delimited JSON-RPC stream: workers write
// requests through one writer, one reader matches the responses by id.
type stdioDriver struct {
	t   Target
	o   *Options
	v   *verifier
	ids atomic.Int64

	modern bool
	lines  chan []byte   // to the writer
	wdone  chan struct{} // the writer has stopped
	done   chan struct{} // the reader has stopped: the stream ended
	err    error         // why the stream ended, once done is closed

	mu      sync.Mutex
	pending map[int64]*pending
	stray   *stats // where responses to no request are counted
}

// pending is a request awaiting its response.
type pending struct {
	start time.Time
	st    *stats
	slot  chan struct{} // the worker's window, released on response
	reply chan<- []byte // for setup's requests: the raw response
}

func newStdioDriver(t Target, o *Options, v *verifier) *stdioDriver {
	return &stdioDriver{t: t, o: o, v: v, pending: map[int64]*pending{}, stray: &stats{},
		lines: make(chan []byte, 4*o.Concurrency*o.Pipeline), wdone: make(chan struct{}), done: make(chan struct{})}
}

func (d *stdioDriver) setup(ctx context.Context, era string) (string, error) {
	go d.write()
	go d.read()
	if era != EraLegacy {
		err := d.probe(ctx, true)
		if err == nil {
			d.modern = true
			return EraModern, nil
		}
		if era == EraModern || ctx.Err() != nil {
			return "", fmt.Errorf("loadgen: modern tools/call: %w", err)
		}
	}
	id := d.ids.Add(1)
	resp, err := d.roundTrip(ctx, id, initializeRequest(id))
	if err != nil {
		return "", fmt.Errorf("loadgen: initialize: %w", err)
	}
	if _, err := checkInitialize(resp, id); err != nil {
		return "", fmt.Errorf("loadgen: %w", err)
	}
	d.lines <- initializedNotification
	if err := d.probe(ctx, false); err != nil {
		return "", fmt.Errorf("loadgen: legacy tools/call: %w", err)
	}
	return EraLegacy, nil
}

// probe makes one tools/call and verifies it.
func (d *stdioDriver) probe(ctx context.Context, modern bool) error {
	id := d.ids.Add(1)
	resp, err := d.roundTrip(ctx, id, d.v.appendRequest(nil, id, modern))
	if err != nil {
		return err
	}
	return d.v.check(resp, id)
}

// probeTimeout bounds a setup request, so a server that ignores one
// (a legacy server asked a modern question) does not hang the run.
const probeTimeout = 10 * time.Second

// roundTrip sends line, the request with id, and waits for its response.
func (d *stdioDriver) roundTrip(ctx context.Context, id int64, line []byte) ([]byte, error) {
	reply := make(chan []byte, 1)
	d.mu.Lock()
	d.pending[id] = &pending{reply: reply}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.pending, id)
		d.mu.Unlock()
	}()
	d.lines <- line
	t := time.NewTimer(probeTimeout)
	defer t.Stop()
	select {
	case resp := <-reply:
		return resp, nil
	case <-d.done:
		return nil, d.err
	case <-t.C:
		return nil, errors.New("no response within " + probeTimeout.String())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (d *stdioDriver) run(ctx context.Context, lim *limiter, st *stats) error {
	var wg sync.WaitGroup
	for range d.o.Concurrency {
		wg.Go(func() {
			slot := make(chan struct{}, d.o.Pipeline)
			acquire := func() bool {
				select {
				case slot <- struct{}{}:
					return true
				case <-ctx.Done():
				case <-d.done:
				}
				return false
			}
			for acquire() {
				if !lim.take(ctx) {
					<-slot
					break
				}
				id := d.ids.Add(1)
				line := d.v.appendRequest(make([]byte, 0, len(d.v.modernTail)+24), id, d.modern)
				p := &pending{st: st, slot: slot, start: time.Now()}
				d.mu.Lock()
				d.pending[id] = p
				d.mu.Unlock()
				d.lines <- line
			}
			// Wait for the worker's requests in flight.
			for range cap(slot) {
				if !acquire() {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-d.done:
		return fmt.Errorf("loadgen: stream ended: %w", d.err)
	default:
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	st.merge(d.stray)
	d.stray = &stats{}
	return nil
}

// write copies request lines to the server, flushing when no more are
// waiting, so pipelined requests share writes.
func (d *stdioDriver) write() {
	defer close(d.wdone)
	bw := bufio.NewWriterSize(d.t.Stdin, 64<<10)
	var failed bool
	for line := range d.lines {
		if failed {
			continue
		}
		bw.Write(line)
		bw.WriteByte('\n')
		if len(d.lines) == 0 && bw.Flush() != nil {
			failed = true // the reader sees the stream end
		}
	}
}

// read matches response lines to their requests until the stream ends.
func (d *stdioDriver) read() {
	br := bufio.NewReaderSize(d.t.Stdout, 64<<10)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 1 {
			d.deliver(line)
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			d.err = err
			close(d.done)
			return
		}
	}
}

// deliver hands a line from the server to the request it answers.
func (d *stdioDriver) deliver(line []byte) {
	m, err := jsonrpc.Decode(line)
	if err != nil {
		d.mu.Lock()
		d.stray.add(0, mismatch("not a JSON-RPC message (%v): %.80q", err, line))
		d.mu.Unlock()
		return
	}
	if m.Method != "" {
		return // a notification or a request of the server
	}
	id, err := strconv.ParseInt(string(m.ID.Raw()), 10, 64)
	d.mu.Lock()
	p := d.pending[id]
	if err == nil && p != nil {
		delete(d.pending, id)
	}
	if err != nil || p == nil {
		d.stray.add(0, mismatch("response to no request in flight: id %s", m.ID.Raw()))
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	if p.reply != nil {
		p.reply <- append([]byte(nil), line...)
		return
	}
	p.st.add(time.Since(p.start), d.v.check(line, id))
	<-p.slot
}

func (d *stdioDriver) close() {
	close(d.lines)
	<-d.wdone
}
