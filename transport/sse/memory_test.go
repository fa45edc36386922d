package sse

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/memtest"
)

// TestMemoryStreamNotRead floods one stream, whose client stopped reading
// it, with 250 POSTs of 4 MiB for the echo tool, to a server run as a
// child process with the default options, and checks that the server's
// peak resident set grows by less than sseMemoryBudget (four times that
// under the race detector), then that once the stream is closed the server
// holds nothing of it: its goroutines and live heap are back to what they
// were before. Unbounded, every message was kept until answered: the peak
// grew by 3.3 GiB. Bounded, by about 60 MiB.
func TestMemoryStreamNotRead(t *testing.T) {
	if memtest.IsChild(t) {
		sseMemoryChild(t)
		return
	}
	if testing.Short() {
		t.Skip("moves 1 GiB")
	}
	const (
		posts           = 250
		postBytes       = 4 << 20
		sseMemoryBudget = 256 << 20
	)
	budget := memtest.Budget(sseMemoryBudget)
	cmd := memtest.Command(t)
	errs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	ready, err := bufio.NewReader(errs).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(ready), "READY ")
	if err != nil || !ok {
		t.Fatalf("the child did not start: %q %v", ready, err)
	}
	go io.Copy(io.Discard, errs)
	postClient := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 8}}
	defer postClient.CloseIdleConnections()
	postTo := func(endpoint string, body []byte) int {
		resp, err := postClient.Post(endpoint, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// A first session starts what the server keeps for all of them (the
	// legacy era's sweeper); the figures before the flood are taken once
	// it has ended.
	warm, endWarm := openFloodStream(t, base)
	if st := postTo(warm, initializeBody); st != http.StatusAccepted {
		t.Fatalf("initialize: %d", st)
	}
	endWarm()
	before := settledStats(t, base)

	// The stream: its endpoint event is read, then nothing more.
	endpoint, endStream := openFloodStream(t, base)
	defer endStream()
	postOne := func(body []byte) int { return postTo(endpoint, body) }
	if st := postOne(initializeBody); st != http.StatusAccepted {
		t.Fatalf("initialize: %d", st)
	}
	if st := postOne([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); st != http.StatusAccepted {
		t.Fatalf("initialized: %d", st)
	}
	rssBase, err := memtest.Status(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}

	var next, done atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int{}
	var flood sync.WaitGroup
	stop := make(chan struct{})
	head := []byte(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`)
	pad := bytes.Repeat([]byte("x"), postBytes-len(head)-16)
	for range 4 {
		flood.Add(1)
		go func() {
			defer flood.Done()
			for {
				i := next.Add(1)
				if i > posts {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
				var b bytes.Buffer
				fmt.Fprintf(&b, string(head), i)
				b.Write(pad)
				b.WriteString(`"}}}`)
				st := postOne(b.Bytes())
				mu.Lock()
				statuses[st]++
				mu.Unlock()
				done.Add(1)
			}
		}()
	}
	peak, over, err := memtest.Watch(pid, rssBase+budget, 2*time.Second, done.Load)
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d POSTs of 4 MiB answered %v; server RSS %d MiB before, peak %d MiB (+%d MiB, budget +%d MiB)",
		done.Load(), statuses, rssBase>>20, peak>>20, (peak-rssBase)>>20, budget>>20)
	if over || peak-rssBase > budget {
		t.Fatalf("the server's resident set grew by more than %d MiB (peak %d MiB over %d MiB)", budget>>20, peak>>20, rssBase>>20)
	}

	// The client goes away: what the stream held is released, though the
	// runtime gives the memory back to the system only after its next
	// collection (no sooner than two minutes on an idle server) and then
	// gradually: the figures are the live heap after a collection.
	endStream()
	flood.Wait()
	postClient.CloseIdleConnections()
	after := settledStats(t, base)
	t.Logf("before: %+v; after the stream closed: %+v", before, after)
	if after.Goroutines > before.Goroutines || after.HeapAlloc > before.HeapAlloc+16<<20 {
		if sr, err := http.Get(base + "/memstats?stacks"); err == nil {
			b, _ := io.ReadAll(sr.Body)
			sr.Body.Close()
			t.Logf("%s", b)
		}
		t.Errorf("after the stream closed the server kept %d goroutines (%d before) and %d MiB of live heap (%d MiB before)",
			after.Goroutines, before.Goroutines, after.HeapAlloc>>20, before.HeapAlloc>>20)
	}
}

var initializeBody = []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`)

// openFloodStream opens a stream at base and reads its endpoint event, and
// nothing more; end closes it.
func openFloodStream(t *testing.T, base string) (endpoint string, end func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &http.Client{Transport: &http.Transport{}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	end = sync.OnceFunc(func() {
		cancel()
		resp.Body.Close()
		c.CloseIdleConnections()
	})
	events := bufio.NewReader(resp.Body)
	for endpoint == "" {
		line, err := events.ReadString('\n')
		if err != nil {
			end()
			t.Fatal(err)
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = data
		}
	}
	return base + endpoint, end
}

// settledStats returns the child's figures once its goroutine count has
// stopped falling (streams and connections that ended have wound down).
func settledStats(t *testing.T, base string) memStats {
	t.Helper()
	last := childStats(t, base)
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		m := childStats(t, base)
		if m.Goroutines >= last.Goroutines {
			return m
		}
		last = m
	}
	return last
}

// memStats is what the child's /memstats reports, after a collection.
type memStats struct {
	Goroutines                         int
	HeapAlloc, HeapInuse, HeapReleased uint64
}

func childStats(t *testing.T, base string) memStats {
	t.Helper()
	resp, err := http.Get(base + "/memstats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m memStats
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sseMemoryChild serves the test server over HTTP+SSE, with the default
// options, at /sse, and its memory figures at /memstats.
func sseMemoryChild(t *testing.T) {
	srv, _ := testServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/sse", NewHandler(srv, nil))
	mux.HandleFunc("/memstats", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("stacks") {
			buf := make([]byte, 1<<20)
			w.Write(buf[:runtime.Stack(buf, true)])
			return
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		// This request's own goroutine and its connection's are not the
		// server's load.
		_ = json.NewEncoder(w).Encode(memStats{Goroutines: runtime.NumGoroutine(), HeapAlloc: ms.HeapAlloc, HeapInuse: ms.HeapInuse, HeapReleased: ms.HeapReleased})
	})
	fmt.Fprintf(os.Stderr, "READY http://%s\n", ln.Addr())
	_ = http.Serve(ln, mux)
}
