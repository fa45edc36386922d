//go:build race

package memtest

// Race reports whether the race detector is on: its shadow memory makes a
// process's resident set several times larger.
const Race = true
