package tasks

import "testing"

// TestNewIDNoLeadingDash: a task id never reads as a command-line flag.
func TestNewIDNoLeadingDash(t *testing.T) {
	for range 10000 {
		if id := newID(); id[0] == '-' || len(id) != 22 {
			t.Fatalf("task id %q", id)
		}
	}
}
