package check

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/legacy"
)

// TestEverything checks the everything-server in each era it can be served
// in: every check that applies passes, and only checks that cannot apply
// are skipped.
func TestEverything(t *testing.T) {
	legacySkips := []string{"legacy.initialize", "legacy.session-id", "legacy.lists", "legacy.no-result-type", "legacy.unknown-session", "legacy.delete"}
	tests := []struct {
		name  string
		dual  bool
		lo    *legacy.Options
		era   string
		skips []string // every other check must pass
	}{
		{"dual-era", true, nil, eraDual, []string{"call.structured"}},
		{"modern-only", false, nil, eraModern, append([]string{"call.structured"}, legacySkips...)},
		{"legacy-only", true, &legacy.Options{ModernDisabled: true}, eraLegacy, append([]string{
			"discover.answers", "discover.result-type", "discover.supported-versions", "discover.server-info",
			"discover.ttl", "discover.cache-scope", "discover.capabilities",
			"meta.missing", "meta.no-protocol-version", "meta.no-client-capabilities", "meta.no-client-info",
			"version.unsupported", "http.unsupported-version",
			"list.tools.result", "list.resources.result", "list.resource-templates.result", "list.prompts.result",
			"resources.read", "resources.read-unknown", "call.result", "call.structured",
		}, httpIDs...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := runCheck(t, everythingHandler(t, tc.dual, tc.lo), echoCall)
			if rep.Era != tc.era {
				t.Errorf("Era = %q, want %q", rep.Era, tc.era)
			}
			assertStatuses(t, rep, func(id string) Status {
				for _, s := range tc.skips {
					if s == id {
						return Skip
					}
				}
				return Pass
			})
			if n := len(catalog) - sseChecks; len(rep.Results) != n {
				t.Errorf("%d results, want one per catalog entry but the HTTP+SSE ones (%d)", len(rep.Results), n)
			}
		})
	}
}

// assertStatuses requires every result to have the status want gives it.
func assertStatuses(t *testing.T, rep *Report, want func(id string) Status) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rep.Results {
		if seen[r.ID] {
			t.Errorf("%s reported twice", r.ID)
		}
		seen[r.ID] = true
		if w := want(r.ID); r.Status != w {
			t.Errorf("%s = %s, want %s (detail: %s; sent: %s; got: %s)", r.ID, r.Status, w, r.Detail, r.Sent, r.Got)
		}
	}
	n := rep.Pass + rep.Warn + rep.Fail + rep.Skip
	if n != len(rep.Results) {
		t.Errorf("tallies add up to %d, want %d", n, len(rep.Results))
	}
}

// everythingBinary builds conformance/everything-server into a
// temporary directory.
func everythingBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	if out, err := exec.Command("go", "build", "-o", bin, "../conformance/everything-server").CombinedOutput(); err != nil {
		t.Fatalf("building everything-server: %v\n%s", err, out)
	}
	return bin
}

// TestStdio checks the built everything-server over stdio: the checks that
// apply pass, the HTTP ones are skipped as "stdio target".
func TestStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := everythingBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := echoCall
	o.Command = []string{bin, "-stdio"}
	rep, err := Run(ctx, &o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Era != eraDual {
		t.Errorf("Era = %q, want %q", rep.Era, eraDual)
	}
	assertStatuses(t, rep, func(id string) Status {
		switch {
		case strings.HasPrefix(id, "http."), id == "legacy.session-id", id == "legacy.unknown-session", id == "legacy.delete", id == "call.structured":
			return Skip
		}
		return Pass
	})
	for _, r := range rep.Results {
		if strings.HasPrefix(r.ID, "http.") && r.Detail != "stdio target" {
			t.Errorf("%s skipped for %q, want \"stdio target\"", r.ID, r.Detail)
		}
	}
}

// TestUnreachable: Run fails only when the target cannot be reached.
func TestUnreachable(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"no target", Options{}},
		{"both targets", Options{URL: "http://127.0.0.1:1/", Command: []string{"true"}}},
		{"not http", Options{URL: "ftp://example.com/"}},
		{"refused", Options{URL: "http://127.0.0.1:1/mcp", Timeout: time.Second}},
		{"no such command", Options{Command: []string{"/nonexistent/mcp-server"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if rep, err := Run(context.Background(), &tc.o); err == nil {
				t.Errorf("Run = %+v, want an error", rep)
			}
		})
	}
}
