package conformance

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			outDir := filepath.Join(t.TempDir(), "results")
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			out, err := suite(ctx, bin, "client", "--command", exe, "--requirements", revision, "--output-dir", outDir).CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("conformance client timed out: %v\n%s", ctx.Err(), tail(out))
			}
			res, rerr := ReadResults(outDir)
			if rerr != nil {
				t.Fatalf("reading results: %v (suite: %v)\n%s", rerr, err, tail(out))
			}
			for _, p := range Judge(res, wanted) {
				t.Error(p)
			}
			if t.Failed() {
				t.Logf("suite output (tail):\n%s", tail(out))
			} else {
				t.Logf("%d client scenarios passed strictly", len(wanted))
			}
		})
	}
}
