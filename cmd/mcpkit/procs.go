package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// sqlProcs returns how many Ps (GOMAXPROCS) serve sql runs with when Go's
// default would be procs: 1 when it serves HTTP, the host gives the
// process two CPUs and every database served is a PostgreSQL on this host;
// 0 (keep the default) otherwise.
//
// There, PostgreSQL's backends need the second CPU: every goroutine that
// wakes with an idle P makes Go wake a second thread, which spins and sleeps
// again on the CPU the database was about to use — net/http wakes three per
// request (its background read) — and the collector's idle mark workers
// take that CPU while a large answer is built. Measured
// (docs/performance.md, "One P on a two-CPU host shared with PostgreSQL"):
// over HTTP every cell faster, point lookups at c=1 by a third or more.
// stdio keeps the default: its reader blocks in read(2) on the pipe, and
// with one P the other goroutines wait for the runtime to take the P back
// (6-21% slower at c=16). With more CPUs the second thread finds a CPU of
// its own, and with SQLite the database's work is this process's own: the
// default stays.
func sqlProcs(served []sqlserver.Options, overHTTP bool, procs int) int {
	if !overHTTP || procs != 2 || len(served) == 0 {
		return 0
	}
	for i := range served {
		if served[i].DSN == "" || !localPostgres(served[i].DSN) {
			return 0
		}
	}
	return 1
}

// chooseProcs applies sqlProcs through e.setProcs (procs is Go's current
// GOMAXPROCS) and says so on stderr when it changed it.
func chooseProcs(e *env, served []sqlserver.Options, overHTTP bool, procs int) {
	n := sqlProcs(served, overHTTP, procs)
	if n == 0 || e.setProcs == nil || !e.setProcs(n) {
		return
	}
	fmt.Fprintf(e.Stderr, "mcpkit serve sql: GOMAXPROCS=%d: PostgreSQL shares this host's two CPUs (set GOMAXPROCS to choose)\n", n)
}

// localPostgres reports whether every host the DSN names (fallbacks
// included) is this one: a Unix socket directory, localhost or a loopback
// address.
func localPostgres(dsn string) bool {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return false
	}
	if !localHost(cfg.Host) {
		return false
	}
	for _, f := range cfg.Fallbacks {
		if !localHost(f.Host) {
			return false
		}
	}
	return true
}

// localHost: a Unix socket directory or a loopback host.
func localHost(h string) bool {
	return strings.HasPrefix(h, "/") || isLoopbackHost(h)
}

// setProcs sets GOMAXPROCS to n unless the environment chose it; it
// reports whether it did. main's env.setProcs.
func setProcs(n int) bool {
	if _, chosen := os.LookupEnv("GOMAXPROCS"); chosen {
		return false
	}
	runtime.GOMAXPROCS(n)
	return true
}
