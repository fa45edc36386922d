// Command sqlbench compares database MCP servers on one PostgreSQL (make
// bench-sql): mcpkit's `serve sql` over stdio and Streamable HTTP against
// @modelcontextprotocol/server-postgres and @bytebase/dbhub over stdio,
// and dbhub over Streamable HTTP too (server-postgres has no HTTP
// transport), every one connected as the same read-only role to a shop database that
// it makes (100k customers, 500k orders, 1.5M order lines). Workloads: a
// point lookup and a 990-row join, each at concurrency 1 and 16. Rounds
// are interleaved (every server in every cell, the order rotating); it
// prints the median of each cell, the server's and PostgreSQL's CPU per
// request (from /proc), and each server's rate against mcpkit's best.
// The load is loadgen's; over HTTP each worker has its own connection
// (loadgen.Options.WorkerConns), so that the load generator costs about
// as much per call on either transport.
//
//	sqlbench -dsn postgres://superuser@127.0.0.1:5432/postgres -mcpkit ./mcpkit -node-modules bench/sql/node_modules
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/loadgen"
)

// workload is one statement called over and over.
type workload struct {
	name string
	sql  string
	rows int // rows each answer must carry
}

var workloads = []workload{
	{"point lookup", "SELECT * FROM customers WHERE id = 4242", 1},
	{"990-row join", `SELECT o.id AS order_id, o.created_at, c.name, c.email, l.product_id, p.name AS product, l.quantity, l.price
FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_lines l ON l.order_id = o.id JOIN products p ON p.id = l.product_id
WHERE c.id BETWEEN 1000 AND 1065 ORDER BY o.id, l.id`, 990},
}

func main() { os.Exit(run()) }

// run runs the comparison and returns the exit code; the servers it
// started are stopped whatever happens (deferred, so not with os.Exit).
func run() int {
	dsn := flag.String("dsn", os.Getenv("MCPKIT_TEST_POSTGRES_DSN"), "a superuser `DSN` of the PostgreSQL to run on (default $MCPKIT_TEST_POSTGRES_DSN)")
	mcpkitBin := flag.String("mcpkit", "", "the mcpkit `binary` to measure")
	before := flag.String("before", "", "also measure this older mcpkit `binary` (\"before\" figures)")
	nodeModules := flag.String("node-modules", "bench/sql/node_modules", "where the pinned peers are installed (`DIR`)")
	rounds := flag.Int("rounds", 5, "interleaved `N` rounds")
	duration := flag.Duration("duration", 3*time.Second, "measured time per cell and server")
	warmup := flag.Duration("warmup", time.Second, "unmeasured load before each measurement")
	conc := flag.String("c", "1,16", "concurrency levels, comma-separated")
	only := flag.String("servers", "", "measure only these servers (comma-separated names)")
	jsonOut := flag.String("json", "", "also write every measurement to this `file`")
	onlyWork := flag.String("workloads", "", "measure only these workloads (comma-separated: point, join)")
	flag.BoolVar(&pooledHTTP, "pooled-http", false, "load HTTP servers through an http.Client's connection pool instead of a connection per worker (loadgen.Options.WorkerConns)")
	flag.Parse()
	if *dsn == "" || *mcpkitBin == "" {
		fmt.Fprintln(os.Stderr, "sqlbench: -dsn (or MCPKIT_TEST_POSTGRES_DSN) and -mcpkit are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sqlbench: "+f+"\n", a...) }
	reader, err := setup(ctx, *dsn, logf)
	if err != nil {
		logf("setup: %v", err)
		return 1
	}
	benchAdmin, _ := withDB(*dsn, benchDB, "", "")
	pg, err := newPGMeter(ctx, benchAdmin)
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer pg.close()

	servers := peers(*mcpkitBin, *before, *nodeModules, reader)
	if *only != "" {
		keep := map[string]bool{}
		for _, n := range strings.Split(*only, ",") {
			keep[strings.TrimSpace(n)] = true
		}
		servers = filter(servers, func(s *server) bool { return keep[s.name] })
	}
	for _, s := range servers {
		defer s.stop()
		if err := s.start(ctx); err != nil {
			logf("%s: %v", s.name, err)
			return 1
		}
	}
	var levels []int
	for _, f := range strings.Split(*conc, ",") {
		var n int
		fmt.Sscan(strings.TrimSpace(f), &n)
		if n > 0 {
			levels = append(levels, n)
		}
	}
	work := workloads
	if *onlyWork != "" {
		names := strings.Split(*onlyWork, ",")
		work = filter(work, func(w workload) bool {
			return slices.ContainsFunc(names, func(n string) bool { return strings.Contains(w.name, strings.TrimSpace(n)) })
		})
	}
	var all []measurement
	for r := 0; r < *rounds; r++ {
		for _, w := range work {
			for _, c := range levels {
				for i := range servers {
					s := servers[(i+r)%len(servers)]
					m, err := measure(ctx, s, w, c, *duration, *warmup, pg)
					if err != nil {
						logf("round %d, %s, c=%d, %s: %v", r+1, w.name, c, s.name, err)
						return 1
					}
					m.Round = r + 1
					all = append(all, m)
					logf("round %d/%d  %-13s c=%-2d %-22s %8.0f req/s  server %.3f ms/req  PostgreSQL %.3f ms/req",
						r+1, *rounds, w.name, c, s.name, m.ReqPerSec, m.ServerCPUms, m.PGCPUms)
				}
			}
		}
	}
	report(os.Stdout, servers, work, levels, all)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(all, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			logf("%v", err)
		}
	}
	return 0
}

// measurement is one server's run of one cell in one round.
type measurement struct {
	Server      string  `json:"server"`
	Workload    string  `json:"workload"`
	Concurrency int     `json:"concurrency"`
	Round       int     `json:"round"`
	Requests    int64   `json:"requests"`
	ReqPerSec   float64 `json:"req_per_sec"`
	P50ms       float64 `json:"p50_ms"`
	ServerCPUms float64 `json:"server_cpu_ms_per_req"`
	ClientCPUms float64 `json:"client_cpu_ms_per_req"`
	PGCPUms     float64 `json:"postgres_cpu_ms_per_req"`
}

// pooledHTTP has the load reach HTTP servers through an http.Client's
// connection pool rather than a connection per worker. The comparison
// sets servers on HTTP beside servers on stdio, so by default the load
// generator's HTTP side costs about what its stdio side does (a worker
// writes its request and reads the response itself); the pool's
// goroutines cost ~60 µs more per request at c=1, the same for every
// HTTP server.
var pooledHTTP bool

func measure(ctx context.Context, s *server, w workload, c int, d, warmup time.Duration, pg *pgMeter) (measurement, error) {
	if err := s.verify(ctx, w); err != nil {
		return measurement{}, err
	}
	target, done, err := s.target()
	if err != nil {
		return measurement{}, err
	}
	defer done()
	args, _ := json.Marshal(map[string]string{"sql": w.sql})
	var cpu0, self0 float64
	var pg0 map[int]float64
	res, err := loadgen.Run(ctx, target, &loadgen.Options{
		Concurrency: c, Duration: d, Warmup: warmup, Tool: s.tool, Args: args, Era: s.era(), WorkerConns: !pooledHTTP,
		OnMeasure: func() { cpu0, self0, pg0 = procCPU(s.pid()), procCPU(os.Getpid()), pg.sample(ctx) },
	})
	if err != nil {
		return measurement{}, err
	}
	cpu1, self1, pg1 := procCPU(s.pid()), procCPU(os.Getpid()), pg.sample(ctx)
	if res.Errors > 0 {
		return measurement{}, fmt.Errorf("%d of %d requests failed: %s", res.Errors, res.Requests, res.FirstError)
	}
	n := float64(max(res.Requests, 1))
	return measurement{Server: s.name, Workload: w.name, Concurrency: c, Requests: res.Requests, ReqPerSec: res.ReqPerSec,
		P50ms:       float64(res.P50.Microseconds()) / 1000,
		ServerCPUms: (cpu1 - cpu0) * 1000 / n, ClientCPUms: (self1 - self0) * 1000 / n, PGCPUms: pgDelta(pg0, pg1) * 1000 / n}, nil
}

func filter[T any](in []T, keep func(T) bool) []T {
	var out []T
	for _, x := range in {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
