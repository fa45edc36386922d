package conformance

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// clientNotScoredWanted are client scenarios the suite runs without
// scoring them that mcpkit's client must pass.
var clientNotScoredWanted = []string{"json-schema-2020-12-preservation"}

// TestClientConformance runs the client requirement sets against the
// everything-client. Authorization scenarios belong to another issue and
// are not judged.
func TestClientConformance(t *testing.T) {
	bin := suiteBin(t)
	exe := filepath.Join(t.TempDir(), "everything-client")
	if out, err := exec.Command("go", "build", "-o", exe, "./everything-client").CombinedOutput(); err != nil {
		t.Fatalf("building the everything-client: %v\n%s", err, out)
	}
	for _, revision := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(revision, func(t *testing.T) {
			var wanted []string
			for _, name := range requiredScenarios(t, bin, revision, "Client scenarios") {
				if !strings.HasPrefix(name, "auth/") {
					wanted = append(wanted, name)
				}
			}
			wanted = append(wanted, clientNotScoredWanted...)
			runAndJudge(t, bin, wanted, "client", "--command", exe, "--requirements", revision)
		})
	}
}
