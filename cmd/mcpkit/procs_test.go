package main

import (
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// TestSQLProcs: one P only over HTTP, where every database served is a
// PostgreSQL on this host and Go would use two; Go's default everywhere
// else.
func TestSQLProcs(t *testing.T) {
	pg := func(dsns ...string) []sqlserver.Options {
		var o []sqlserver.Options
		for _, d := range dsns {
			o = append(o, sqlserver.Options{DSN: d})
		}
		return o
	}
	cases := []struct {
		name   string
		served []sqlserver.Options
		procs  int
		want   int
	}{
		{"loopback IPv4", pg("postgres://reader@127.0.0.1:5432/shop"), 2, 1},
		{"loopback IPv6", pg("postgres://reader@[::1]:5432/shop"), 2, 1},
		{"localhost", pg("postgres://reader@localhost/shop"), 2, 1},
		{"Unix socket", pg("postgres:///shop?host=/var/run/postgresql"), 2, 1},
		{"key=value form", pg("host=127.0.0.1 port=5432 dbname=shop user=reader"), 2, 1},
		{"two local databases", pg("postgres://127.0.0.1/a", "postgres://localhost/b"), 2, 1},
		{"another host", pg("postgres://reader@db.example:5432/shop"), 2, 0},
		{"a fallback elsewhere", pg("postgres://reader@127.0.0.1,db.example/shop"), 2, 0},
		{"one local, one remote", pg("postgres://127.0.0.1/a", "postgres://10.0.0.7/b"), 2, 0},
		{"SQLite", []sqlserver.Options{{Path: "shop.db"}}, 2, 0},
		{"SQLite beside PostgreSQL", []sqlserver.Options{{DSN: "postgres://127.0.0.1/a"}, {Path: "b.db"}}, 2, 0},
		{"one CPU already", pg("postgres://127.0.0.1/shop"), 1, 0},
		{"four CPUs", pg("postgres://127.0.0.1/shop"), 4, 0},
		{"an unparsable DSN", pg("postgres://%zz"), 2, 0},
		{"nothing served", nil, 2, 0},
	}
	for _, c := range cases {
		if got := sqlProcs(c.served, true, c.procs); got != c.want {
			t.Errorf("%s: sqlProcs = %d, want %d", c.name, got, c.want)
		}
		if got := sqlProcs(c.served, false, c.procs); got != 0 {
			t.Errorf("%s over stdio: sqlProcs = %d, want 0 (Go's default)", c.name, got)
		}
	}
}

// TestChooseProcs: the choice goes through env.setProcs and is announced
// only when it was made; the environment's GOMAXPROCS (setProcs refusing)
// and tests (no setProcs) leave the process alone.
func TestChooseProcs(t *testing.T) {
	local := []sqlserver.Options{{DSN: "postgres://reader@127.0.0.1/shop"}}
	for _, c := range []struct {
		name   string
		accept bool
		hook   bool
		http   bool
		procs  int
		want   int // what setProcs was asked for; 0: not called
		line   bool
	}{
		{"applied", true, true, true, 2, 1, true},
		{"the environment chose", false, true, true, 2, 1, false},
		{"no hook", true, false, true, 2, 0, false},
		{"four CPUs", true, true, true, 4, 0, false},
		{"stdio", true, true, false, 2, 0, false},
	} {
		var stderr strings.Builder
		asked := 0
		e := &env{Stderr: &stderr}
		if c.hook {
			e.setProcs = func(n int) bool { asked = n; return c.accept }
		}
		chooseProcs(e, local, c.http, c.procs)
		if asked != c.want {
			t.Errorf("%s: setProcs(%d), want %d", c.name, asked, c.want)
		}
		if got := strings.Contains(stderr.String(), "GOMAXPROCS=1"); got != c.line {
			t.Errorf("%s: stderr %q", c.name, stderr.String())
		}
	}
}
