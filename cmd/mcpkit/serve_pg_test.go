package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestServeSQLPrivilegedRole: `serve sql` refuses a PostgreSQL superuser
// with the reason and the fix, and serves it with --allow-privileged-role,
// warning as it starts.
func TestServeSQLPrivilegedRole(t *testing.T) {
	dsn := os.Getenv("MCPKIT_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("MCPKIT_TEST_POSTGRES_DSN is not set in CI")
		}
		t.Skip("MCPKIT_TEST_POSTGRES_DSN is not set")
	}
	r := mcpkit(t, "serve", "sql", "--addr", "127.0.0.1:0", "--dsn", dsn, "--poll", "-1s")
	if r.code != exitFailed || !strings.Contains(r.stderr, "superuser") || !strings.Contains(r.stderr, "--allow-privileged-role") {
		t.Fatalf("superuser served without the flag: %d %s", r.code, r.stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inv := start(ctx, terminal{}, "", "serve", "sql", "--addr", "127.0.0.1:0", "--dsn", dsn, "--poll", "-1s", "--allow-privileged-role")
	deadline := time.Now().Add(10 * time.Second)
	for !servingURL.MatchString(inv.stderr.String()) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	res := inv.wait(t)
	if res.code != exitOK || !strings.Contains(res.stderr, "WARN") || !strings.Contains(res.stderr, "superuser") {
		t.Errorf("--allow-privileged-role: %d %s", res.code, res.stderr)
	}
}

func TestByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"1024": 1024, "64MiB": 64 << 20, "1 GiB": 1 << 30, "2MB": 2e6, "512KiB": 512 << 10} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("%q: %d %v, want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "-1", "0", "12XB", "9999999999GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("%q accepted as %d", in, b)
		}
	}
	b := byteSize(256 << 20)
	if b.String() != "256MiB" {
		t.Errorf("String() = %q", b.String())
	}
}
