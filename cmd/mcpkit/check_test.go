package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	url := newEverything(t)
	tests := []struct {
		name string
		args []string
	}{
		{"http", []string{"check", url}},
		{"http with a call", []string{"check", url, "--call", "echo", "--args", `{"text":"hi"}`}},
		{"stdio", []string{"check", "--", everythingServer, "-stdio"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mcpkit(t, tt.args...)
			if r.code != exitOK {
				t.Fatalf("exit %d; stdout:\n%s\nstderr %q", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "PASS") {
				t.Errorf("no PASS line:\n%s", r.stdout)
			}
			for _, line := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(line, "FAIL") {
					t.Errorf("check failed: %s", line)
				}
			}
			j := mcpkit(t, append([]string{"check", "--json"}, tt.args[1:]...)...)
			if j.code != exitOK {
				t.Fatalf("--json: exit %d; stderr %q", j.code, j.stderr)
			}
			var rep struct {
				Results []struct {
					Status string `json:"status"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil || len(rep.Results) == 0 {
				t.Fatalf("--json output is not a report (%v):\n%s", err, j.stdout)
			}
			for _, res := range rep.Results {
				if res.Status == "FAIL" {
					t.Errorf("a check failed in the JSON report")
				}
			}
		})
	}
}

func TestCheckFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	defer srv.Close()
	r := mcpkit(t, "check", srv.URL)
	if r.code != exitFailed {
		t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr %q", r.code, exitFailed, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "FAIL") {
		t.Errorf("no FAIL line:\n%s", r.stdout)
	}
}

func TestCheckUsage(t *testing.T) {
	url := newEverything(t)
	for _, args := range [][]string{
		{"check", url, "--args", "{}"},
		{"check", url, "--era", "legacy"},
		{"check", url, "--call", "echo", "--args", "nope"},
	} {
		if r := mcpkit(t, args...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr %q", args, r.code, exitUsage, r.stderr)
		}
	}
	if r := mcpkit(t, "check", closedPort(t)); r.code != exitUnreachable || !strings.Contains(r.stderr, "cannot be reached") {
		t.Errorf("check of a closed port: exit %d, want %d; stderr %q", r.code, exitUnreachable, r.stderr)
	}
}
