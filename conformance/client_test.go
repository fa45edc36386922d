package conformance

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// clientNotScoredWanted are client scenarios the suite runs without
// scoring them that mcpkit's client must pass.
var clientNotScoredWanted = []string{"json-schema-2020-12-preservation"}

// clientSkipped are required client scenarios mcpkit does not pass yet,
// each with the reason; every other required scenario, the auth/* ones
// included, must pass strictly. Empty: all of them pass.
var clientSkipped = map[string]string{}

// TestClientConformance runs the client requirement sets against the
// everything-client. The authorization extensions (client credentials,
// DPoP, enterprise-managed authorization, workload identity) are listed by
// the suite apart from the required scenarios and are not judged.
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
				if reason, ok := clientSkipped[name]; ok {
					t.Logf("not judged: %s: %s", name, reason)
					continue
				}
				wanted = append(wanted, name)
			}
			wanted = append(wanted, clientNotScoredWanted...)
			runAndJudge(t, bin, wanted, "client", "--command", exe, "--requirements", revision)
		})
	}
}
