package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ).
const clockTick = 100.0

// procCPU returns the CPU seconds (user and system) process pid has used,
// or 0 when /proc does not say.
func procCPU(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / clockTick
}

// pgMeter samples the CPU of the PostgreSQL backends serving the reader
// role, from /proc, when PostgreSQL runs on this machine.
type pgMeter struct {
	c *pgx.Conn
}

func newPGMeter(ctx context.Context, dsn string) (*pgMeter, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &pgMeter{c: c}, nil
}

func (m *pgMeter) close() { m.c.Close(context.Background()) }

// sample returns the CPU seconds of each backend of the reader role.
func (m *pgMeter) sample(ctx context.Context) map[int]float64 {
	rows, err := m.c.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE usename = $1", readerRole)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[int]float64{}
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			out[pid] = procCPU(pid)
		}
	}
	return out
}

// pgDelta is the CPU the backends used between two samples; backends
// that appeared in between count whole.
func pgDelta(a, b map[int]float64) float64 {
	total := 0.0
	for pid, cpu := range b {
		total += cpu - a[pid]
	}
	return total
}

// report prints, per cell, each server's medians and its rate against the
// fastest peer.
func report(w io.Writer, servers []*server, work []workload, levels []int, all []measurement) {
	fmt.Fprintln(w, "\n| workload | c | server | req/s (median) | vs fastest peer | server CPU ms/req | PostgreSQL CPU ms/req | load generator CPU ms/req | p50 ms |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	type cell struct {
		rate, cpu, pg, client, p50 float64
	}
	for _, wl := range work {
		for _, c := range levels {
			cells := map[string]cell{}
			bestPeer, bestPeerName := 0.0, ""
			for _, s := range servers {
				var rate, cpu, pg, client, p50 []float64
				for _, m := range all {
					if m.Server == s.name && m.Workload == wl.name && m.Concurrency == c {
						rate, cpu, pg = append(rate, m.ReqPerSec), append(cpu, m.ServerCPUms), append(pg, m.PGCPUms)
						client, p50 = append(client, m.ClientCPUms), append(p50, m.P50ms)
					}
				}
				cl := cell{median(rate), median(cpu), median(pg), median(client), median(p50)}
				cells[s.name] = cl
				if s.peer && cl.rate > bestPeer {
					bestPeer, bestPeerName = cl.rate, s.name
				}
			}
			for _, s := range servers {
				cl := cells[s.name]
				vs := "—"
				if bestPeer > 0 {
					vs = fmt.Sprintf("%.2f×", cl.rate/bestPeer)
				}
				fmt.Fprintf(w, "| %s | %d | %s | %.0f | %s | %.3f | %.3f | %.3f | %.2f |\n", wl.name, c, s.name, cl.rate, vs, cl.cpu, cl.pg, cl.client, cl.p50)
			}
			if bestPeerName != "" {
				for _, s := range servers {
					if !s.peer && !strings.Contains(s.name, "before") {
						verdict := "at least as fast as"
						if cells[s.name].rate < bestPeer {
							verdict = "SLOWER than"
						}
						fmt.Fprintf(os.Stderr, "sqlbench: %s, c=%d: %s %s the fastest peer (%s): %.2f×\n",
							wl.name, c, s.name, verdict, bestPeerName, cells[s.name].rate/bestPeer)
					}
				}
			}
		}
	}
}
