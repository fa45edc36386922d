package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBench(t *testing.T) {
	url := newEverything(t)
	for _, conn := range connections() {
		t.Run(conn.name, func(t *testing.T) {
			args := withTarget("bench", []string{"-c", "2", "-n", "40", "-d", "0", "--warmup", "10ms", "--json"}, conn.args(url))
			if strings.HasPrefix(conn.name, "stdio") {
				args = append(args[:1], append([]string{"--pipeline", "4"}, args[1:]...)...)
			}
			r := mcpkit(t, args...)
			if r.code != exitOK {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			var out benchJSON
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("%v: %s", err, r.stdout)
			}
			wantEra := strings.TrimPrefix(strings.TrimPrefix(conn.name, "http-"), "stdio-")
			if out.Requests != 40 || out.Errors != 0 || out.Era != wantEra || out.ReqPerSec <= 0 || out.P99ms <= 0 {
				t.Errorf("got %+v, want 40 requests without errors in the %s era", out, wantEra)
			}
		})
	}
}

func TestBenchText(t *testing.T) {
	r := mcpkit(t, "bench", newEverything(t), "-c", "1", "-d", "50ms", "--warmup", "0", "--args", `{"text":"bench me"}`)
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"(modern era)", "throughput ", " req/s", "latency      p50 ", "errors       0 (0 mismatches)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestBenchToolError counts every failed call and exits 1.
func TestBenchToolError(t *testing.T) {
	r := mcpkit(t, "bench", newEverything(t), "--tool", "no-such-tool", "--args", "{}", "-n", "5", "-d", "0", "--warmup", "0", "--era", "modern")
	if r.code == exitOK {
		t.Fatalf("exit 0 for a tool that does not exist; stdout %s", r.stdout)
	}
}

func TestBenchUsage(t *testing.T) {
	url := newEverything(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench", url, "-c", "0"}, "-c must be at least 1"},
		{[]string{"bench", url, "-d", "0"}, "give -d or -n"},
		{[]string{"bench", url, "--pipeline", "2"}, "stdio targets only"},
		{[]string{"bench", url, "extra"}, `unexpected argument "extra"`},
		{[]string{"bench", url, "--args", "[1]"}, ""},
	}
	for _, tt := range tests {
		r := mcpkit(t, tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want usage error %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}
