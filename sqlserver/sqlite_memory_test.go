package sqlserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The memory test runs in a process of its own (the test binary, started
// again with memoryChildEnv set), so that its peak RSS is the server's
// alone.
const memoryChildEnv = "MCPKIT_SQLSERVER_MEMORY_CHILD"

// memoryHarms are the statements that took earlier versions to gigabytes.
var memoryHarms = []string{
	"SELECT randomblob(1000000000)",
	"SELECT zeroblob(1600000000)",
	"SELECT length(CAST(zeroblob(500000000) AS TEXT))",
	// Sorting more than fits: in memory, not on disk, and within the cap.
	"SELECT x, randomblob(3000) AS pad FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT x FROM c) ORDER BY pad LIMIT 1 OFFSET 19000",
}

// TestSQLiteMemoryCap runs the statements above, three at a time, against
// a server with MaxMemory 64 MiB, and checks that its peak RSS stays within
// the cap above what the process had before them.
func TestSQLiteMemoryCap(t *testing.T) {
	if os.Getenv(memoryChildEnv) != "" {
		memoryChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteMemoryCap$", "-test.v")
	cmd.Env = append(os.Environ(), memoryChildEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var before, peak int64
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "MEMORY "); i >= 0 {
			fmt.Sscanf(line[i:], "MEMORY before=%d peak=%d", &before, &peak)
		}
	}
	if before == 0 || peak == 0 {
		t.Fatalf("the child reported no figures:\n%s", out)
	}
	const limit = 64 << 20
	t.Logf("RSS before the statements %d MiB, peak %d MiB (cap %d MiB)", before>>20, peak>>20, limit>>20)
	if peak-before > limit {
		t.Errorf("peak RSS grew by %d MiB, more than the %d MiB cap", (peak-before)>>20, limit>>20)
	}
}

func memoryChild(t *testing.T) {
	if !enableMemstatus() {
		t.Fatal("SQLite's memory accounting could not be turned on")
	}
	dir := os.Getenv(memoryChildEnv)
	path := filepath.Join(dir, "demo.db")
	if err := EnsureDemo(path); err != nil {
		t.Fatal(err)
	}
	e := &env{name: "sqlite", opts: Options{Path: path, PollInterval: -1}}
	_, s := e.open(t, func(o *Options) {
		o.MaxMemory = 64 << 20
		o.MaxConcurrent = 3
		o.StatementTimeout = 20 * time.Second
	})
	callTool(t, s, "query", map[string]any{"sql": "SELECT count(*) FROM orders"})
	before := procStatus(t, "VmRSS")
	for _, q := range memoryHarms {
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, rpcErr := handle(t, context.Background(), s, nil, "tools/call", map[string]any{"name": "query", "arguments": map[string]any{"sql": q}})
				if rpcErr != nil {
					t.Errorf("%s: %s", q, rpcErr.Message)
					return
				}
				b, _ := json.Marshal(r.Content)
				t.Logf("%.60s: error %v %.160s", q, r.IsError, b)
			}()
		}
		wg.Wait()
	}
	tls := libc.NewTLS()
	defer tls.Close()
	t.Logf("SQLite heap high water %d MiB", sqlite3.Xsqlite3_memory_highwater(tls, 0)>>20)
	t.Logf("MEMORY before=%d peak=%d", before, procStatus(t, "VmHWM"))
}

// procStatus reads a size from /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
