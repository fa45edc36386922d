// Package memtest measures the memory of a server run as a child process:
// the test binary started again to run one test alone, so that its peak
// resident set (VmHWM) is the server's and nothing else's.
//
//	func TestBound(t *testing.T) {
//		if memtest.IsChild(t) {
//			serve() // the server side, until the parent stops it
//			return
//		}
//		cmd := memtest.Command(t)
//		// ... start it, load it, read memtest.Status(pid, "VmHWM"), kill it
//	}
package memtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// childEnv names, in the child, the test it was started to run.
const childEnv = "MCPKIT_MEMTEST_CHILD"

// IsChild reports whether this process is the child Command started for
// the test t.
func IsChild(t testing.TB) bool { return os.Getenv(childEnv) == t.Name() }

// Command returns the command that runs the test t alone in a child
// process, where IsChild(t) is true. It skips the test where /proc is
// missing, since its figures come from there.
func Command(t testing.TB) *exec.Cmd {
	t.Helper()
	if _, err := Status(os.Getpid(), "VmHWM"); err != nil {
		t.Skipf("no memory figures for processes here: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	return cmd
}

// Status returns a size field of /proc/PID/status, such as VmRSS (the
// resident set now) or VmHWM (its peak), in bytes.
func Status(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte(field+":"))
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("memtest: %s of process %d: %v", field, pid, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("memtest: no %s in /proc/%d/status", field, pid)
}

// RaceFactor is how much larger a budget is under the race detector,
// whose shadow memory the figures include.
const RaceFactor = 4

// Budget returns the budget b as measured in this build: b, or b times
// RaceFactor under the race detector.
func Budget(b int64) int64 {
	if Race {
		return b * RaceFactor
	}
	return b
}

// Watch follows a load on the child pid: it samples the child's resident
// set until progress (a count the load advances, such as the bytes sent)
// has not moved for quiet, or until the resident set passes limit (then
// over is true, and the caller should stop the load rather than let an
// unbounded server take the machine's memory). It returns the child's peak
// resident set, VmHWM. Nothing is timed: quiet only says when the load
// has settled.
func Watch(pid int, limit int64, quiet time.Duration, progress func() int64) (peak int64, over bool, err error) {
	last, since := progress(), time.Now()
	for {
		rss, err := Status(pid, "VmRSS")
		if err != nil {
			return 0, false, err
		}
		if rss > limit {
			over = true
			break
		}
		if p := progress(); p != last {
			last, since = p, time.Now()
		} else if time.Since(since) >= quiet {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	peak, err = Status(pid, "VmHWM")
	return peak, over, err
}
