package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeStoreFlags: --store and --state-key-file are checked before
// anything is served.
func TestServeStoreFlags(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte(strings.Repeat("ab", 32)), 0o644); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abcd"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPKIT_STATE_KEY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stdio", "--store", "redis://127.0.0.1:1/0"}, "--store is for replicas"},
		{[]string{"--store", "redis://127.0.0.1:1/0"}, "--store needs the key replicas share"},
		{[]string{"--state-key-file", open}, "may be read by others"},
		{[]string{"--state-key-file", short}, "64 hexadecimal digits"},
	} {
		r := mcpkit(t, append([]string{"serve", "sql"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("serve sql %v: exit %d, stderr %q; want usage error with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
