// Command compare runs the loopback comparison behind "make bench": each
// implementation's echo server as its own process (benchserver), loaded by
// package loadgen in interleaved rounds (A B C A B C ...) at each
// concurrency level, and prints a Markdown table of medians: requests per
// second, the ratio to the floor and to go-sdk within the same round,
// latency, the server's CPU time per request (from /proc/PID/stat) and its
// peak RSS (VmHWM).
//
//	compare -server ./benchserver -rounds 3 -c 1,16,64 -d 2s
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/loadgen"
)

// mode is a transport and era to compare.
type mode struct {
	name     string
	stdio    bool
	era      string
	pipeline int
}

var allModes = []mode{
	{"http-modern", false, loadgen.EraModern, 1},
	{"http-legacy", false, loadgen.EraLegacy, 1},
	{"stdio-modern", true, loadgen.EraModern, 1},
	{"stdio-legacy", true, loadgen.EraLegacy, 1},
	{"stdio-pipelined", true, loadgen.EraModern, 16},
}

// sample is one measurement of one implementation.
type sample struct {
	Impl       string  `json:"impl"`
	Mode       string  `json:"mode"`
	C          int     `json:"c"`
	Round      int     `json:"round"`
	ReqPerSec  float64 `json:"reqPerSec"`
	P50us      float64 `json:"p50us"`
	P99us      float64 `json:"p99us"`
	Errors     int64   `json:"errors"`
	CPUusPerRq float64 `json:"cpuUsPerRequest"`
	PeakRSSKiB int64   `json:"peakRssKiB"`
	Err        string  `json:"error,omitempty"`
}

func main() {
	server := flag.String("server", "./benchserver", "the benchserver binary")
	impls := flag.String("impls", "floor,mcpkit,gosdk,mcpgo", "implementations, comma-separated")
	modes := flag.String("modes", "http-modern,http-legacy,stdio-modern,stdio-legacy,stdio-pipelined", "modes, comma-separated")
	levels := flag.String("c", "1,16,64", "concurrency levels, comma-separated")
	rounds := flag.Int("rounds", 3, "rounds per concurrency level")
	d := flag.Duration("d", 2*time.Second, "measured duration of each run")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "warm-up of each run")
	jsonOut := flag.String("json", "", "also write every sample to this JSON `file`")
	idle := flag.Int("idle-listen", 0, "instead, measure the mcpkit server's memory per idle subscriptions/listen stream with this `many` open")
	flag.Parse()
	if *idle > 0 {
		if err := idleListen(*server, *idle); err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
		return
	}
	var cs []int
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "compare: bad concurrency %q\n", f)
			os.Exit(2)
		}
		cs = append(cs, n)
	}
	names := strings.Split(*impls, ",")
	var all []sample
	for _, group := range groupModes(strings.Split(*modes, ",")) {
		for _, c := range cs {
			var got []sample
			// The modes of a group (the two eras of a transport) are
			// interleaved within each round too, so that their ratio is
			// taken minutes closer than the modes' own tables would allow.
			for r := range *rounds {
				for _, m := range group {
					for _, impl := range names {
						s := measure(*server, impl, m, c, *d, *warmup)
						s.Round = r
						fmt.Fprintf(os.Stderr, "%-16s c=%-3d round %d %-7s %8.0f req/s  cpu %6.1f µs/req  errors %d %s\n",
							m.name, c, r, impl, s.ReqPerSec, s.CPUusPerRq, s.Errors, s.Err)
						got = append(got, s)
					}
				}
			}
			for _, m := range group {
				printTable(m, c, names, slices.DeleteFunc(slices.Clone(got), func(s sample) bool { return s.Mode != m.name }))
			}
			all = append(all, got...)
		}
	}
	printEras(all, cs)
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(all, "", "  ")
		if err := os.WriteFile(*jsonOut, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
	}
}

// groupModes resolves mode names, putting the modern and legacy modes of one
// transport together (in the order given) and every other mode alone.
func groupModes(names []string) [][]mode {
	var groups [][]mode
	where := map[string]int{} // transport → its group's index
	for _, mn := range names {
		i := slices.IndexFunc(allModes, func(m mode) bool { return m.name == mn })
		if i < 0 {
			fmt.Fprintf(os.Stderr, "compare: unknown mode %q\n", mn)
			os.Exit(2)
		}
		m := allModes[i]
		tr, era, _ := strings.Cut(m.name, "-")
		if era == "modern" || era == "legacy" {
			if g, ok := where[tr]; ok {
				groups[g] = append(groups[g], m)
				continue
			}
			where[tr] = len(groups)
		}
		groups = append(groups, []mode{m})
	}
	return groups
}

// measure starts impl's server, loads it and stops it.
func measure(bin, impl string, m mode, c int, d, warmup time.Duration) sample {
	s := sample{Impl: impl, Mode: m.name, C: c}
	args := []string{"-impl", impl}
	if m.stdio {
		args = append(args, "-stdio")
	} else {
		args = append(args, "-addr", "127.0.0.1:0")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		s.Err = err.Error()
		return s
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		s.Err = err.Error()
		return s
	}
	if err := cmd.Start(); err != nil {
		s.Err = err.Error()
		return s
	}
	defer stop(cmd, stdin)
	t := loadgen.Target{Stdin: stdin, Stdout: stdout}
	if !m.stdio {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			s.Err = "no address: " + err.Error()
			return s
		}
		t = loadgen.Target{URL: strings.TrimSpace(line)}
	}
	pid := cmd.Process.Pid
	var cpu0 time.Duration
	ctx, cancel := context.WithTimeout(context.Background(), warmup+d+30*time.Second)
	defer cancel()
	res, err := loadgen.Run(ctx, t, &loadgen.Options{
		Concurrency: c, Duration: d, Warmup: warmup, Tool: "echo", Args: json.RawMessage(`{"text":"hello, world"}`),
		Era: m.era, Pipeline: m.pipeline, OnMeasure: func() { cpu0, _ = cpuTime(pid) },
	})
	cpu1, cerr := cpuTime(pid)
	s.PeakRSSKiB = peakRSS(pid)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	s.ReqPerSec, s.Errors = res.ReqPerSec, res.Errors
	s.P50us, s.P99us = float64(res.P50)/1e3, float64(res.P99)/1e3
	if res.Errors > 0 {
		s.Err = res.FirstError
	}
	if cerr == nil && res.Requests > 0 {
		s.CPUusPerRq = float64(cpu1-cpu0) / 1e3 / float64(res.Requests)
	}
	return s
}

// stop ends the server by its PID: end of input for stdio, then SIGTERM,
// then SIGKILL.
func stop(cmd *exec.Cmd, stdin io.Closer) {
	stdin.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-done:
			return
		case <-time.After(time.Second):
		}
		syscall.Kill(cmd.Process.Pid, sig)
	}
	<-done
}

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuTime returns the user plus system CPU time of process pid.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may hold spaces: count fields after it.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed stat times")
	}
	return time.Duration(ut+st) * clockTick, nil
}

// peakRSS returns VmHWM of process pid in KiB, or 0.
func peakRSS(pid int) int64 { return procStatus(pid, "VmHWM:") }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// printTable prints the medians of one mode and level; ratios are taken
// within each round, then their median.
func printTable(m mode, c int, names []string, got []sample) {
	byRound := map[int]map[string]sample{}
	for _, s := range got {
		if byRound[s.Round] == nil {
			byRound[s.Round] = map[string]sample{}
		}
		byRound[s.Round][s.Impl] = s
	}
	fmt.Printf("\n### %s, c=%d (%d rounds, medians)\n\n", m.name, c, len(byRound))
	fmt.Println("| server | req/s | × floor | × go-sdk | p50 µs | p99 µs | server CPU µs/req | peak RSS MiB | errors |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, impl := range names {
		var rps, vsFloor, vsSDK, p50, p99, cpu, rss []float64
		var errs int64
		for _, round := range byRound {
			s := round[impl]
			rps, p50, p99, cpu = append(rps, s.ReqPerSec), append(p50, s.P50us), append(p99, s.P99us), append(cpu, s.CPUusPerRq)
			rss = append(rss, float64(s.PeakRSSKiB)/1024)
			errs += s.Errors
			if s.Err != "" && s.Errors == 0 {
				errs++
			}
			if f := round["floor"].ReqPerSec; f > 0 {
				vsFloor = append(vsFloor, s.ReqPerSec/f)
			}
			if g := round["gosdk"].ReqPerSec; g > 0 {
				vsSDK = append(vsSDK, s.ReqPerSec/g)
			}
		}
		fmt.Printf("| %s | %.0f | %s | %s | %.0f | %.0f | %.1f | %.1f | %d |\n", impl, median(rps),
			ratio(vsFloor), ratio(vsSDK), median(p50), median(p99), median(cpu), slices.Max(rss), errs)
	}
}

// printEras compares mcpkit's legacy era with its modern one on each
// transport: the median over rounds of the ratio of the two eras' req/s
// within a round (they are measured within minutes of each other), and the
// same for their × floor figures (the floor serves both eras alike).
func printEras(all []sample, cs []int) {
	type key struct {
		mode  string
		c     int
		round int
	}
	at := map[key]map[string]float64{}
	for _, s := range all {
		k := key{s.Mode, s.C, s.Round}
		if at[k] == nil {
			at[k] = map[string]float64{}
		}
		at[k][s.Impl] = s.ReqPerSec
	}
	header := false
	for _, tr := range []string{"http", "stdio"} {
		for _, c := range cs {
			var raw, norm []float64
			for r := 0; ; r++ {
				m, l := at[key{tr + "-modern", c, r}], at[key{tr + "-legacy", c, r}]
				if m == nil || l == nil {
					break
				}
				if m["mcpkit"] > 0 && l["mcpkit"] > 0 {
					raw = append(raw, m["mcpkit"]/l["mcpkit"])
					if m["floor"] > 0 && l["floor"] > 0 {
						norm = append(norm, (m["mcpkit"]/m["floor"])/(l["mcpkit"]/l["floor"]))
					}
				}
			}
			if len(raw) == 0 {
				continue
			}
			if !header {
				fmt.Printf("\n### mcpkit, modern over legacy (1.2 or less: legacy within 1.2× of modern)\n\n")
				fmt.Println("| transport | c | modern / legacy req/s | modern / legacy × floor |")
				fmt.Println("|---|---:|---:|---:|")
				header = true
			}
			fmt.Printf("| %s | %d | %s | %s |\n", tr, c, ratio(raw), ratio(norm))
		}
	}
}

func ratio(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", median(xs))
}
