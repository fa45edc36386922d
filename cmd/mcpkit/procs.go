package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// sqlProcs returns how many Ps (GOMAXPROCS) serve sql runs with when Go's
// default would be procs: 1 where every database served is a PostgreSQL on
// this host and the host gives the process two CPUs; 0 (keep the default)
// otherwise.
//
// There, PostgreSQL's backends need the second CPU: every goroutine that
// wakes with an idle P makes Go wake a second thread, which spins and sleeps
// again on the CPU the database was about to use, and net/http wakes three
// per HTTP request. Measured (docs/performance.md, "One P on a two-CPU host
// shared with PostgreSQL"): HTTP point lookups 33% faster at c=1, the
// server's CPU per call down by a third; stdio at c=16 6-12% slower. With
// more CPUs the second thread finds a CPU of its own, and with SQLite the
// database's work is this process's own: the default stays.
func sqlProcs(served []sqlserver.Options, procs int) int {
	if procs != 2 || len(served) == 0 {
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
func chooseProcs(e *env, served []sqlserver.Options, procs int) {
	n := sqlProcs(served, procs)
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

func localHost(h string) bool {
	if strings.HasPrefix(h, "/") || strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
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
