package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
)

// idleListen measures what an idle subscriptions/listen stream costs the
// mcpkit server: it opens warm streams, reads the server's VmRSS, opens n
// more, waits for the memory to settle and reads VmRSS again. The client
// side lives in this process and is not counted.
func idleListen(bin string, n int) error {
	const warm = 100
	cmd := exec.Command(bin, "-impl", "mcpkit", "-addr", "127.0.0.1:0")
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer stop(cmd, stdin)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("no address: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := client.New(protocol.Implementation{Name: "idle-listen", Version: "0"}, nil)
	sess, err := c.ConnectURL(ctx, strings.TrimSpace(line), nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	if sess.Era() != client.EraModern {
		return fmt.Errorf("the server answered in the %s era", sess.Era())
	}
	var subs []*client.Subscription
	defer func() {
		for _, s := range subs {
			s.Close()
		}
	}()
	open := func(k int) error {
		for range k {
			s, err := sess.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true, ResourcesListChanged: true})
			if err != nil {
				return fmt.Errorf("listen %d: %w", len(subs)+1, err)
			}
			subs = append(subs, s)
		}
		return nil
	}
	pid := cmd.Process.Pid
	if err := open(warm); err != nil {
		return err
	}
	before := settledRSS(pid)
	start := time.Now()
	if err := open(n); err != nil {
		return err
	}
	took := time.Since(start)
	after := settledRSS(pid)
	fmt.Printf("idle subscriptions/listen, mcpkit over HTTP: %d streams opened in %v; server VmRSS %d KiB with %d, %d KiB with %d: %.1f KiB per stream\n",
		n, took.Round(time.Millisecond), before, warm, after, warm+n, float64(after-before)/float64(n))
	return nil
}

// settledRSS returns VmRSS of pid in KiB once two readings a second apart
// agree within 1%.
func settledRSS(pid int) int64 {
	prev := procStatus(pid, "VmRSS:")
	for range 10 {
		time.Sleep(time.Second)
		cur := procStatus(pid, "VmRSS:")
		if d := cur - prev; d*100 <= prev && -d*100 <= prev {
			return cur
		}
		prev = cur
	}
	return prev
}

// procStatus returns the kB figure of one line of /proc/PID/status, or 0.
func procStatus(pid int, key string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			var n int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &n)
			return n
		}
	}
	return 0
}
