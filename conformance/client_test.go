package conformance

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// clientNotScoredWanted are client scenarios the suite runs without
// scoring them that mcpkit's client must pass.
var clientNotScoredWanted = []string{"json-schema-2020-12-preservation"}

// clientExtensionsWanted are the authorization extension scenarios (client
// credentials, DPoP, workload identity, enterprise-managed authorization),
// which the suite runs apart from the required ones without scoring them;
// mcpkit's client must pass them strictly too.
var clientExtensionsWanted = []string{
	"auth/client-credentials-basic",
	"auth/client-credentials-jwt",
	"auth/dpop",
	"auth/dpop-nonce",
	"auth/wif-jwt-bearer",
	"auth/enterprise-managed-authorization",
}

// clientSkipped are required client scenarios mcpkit does not pass yet,
// each with the reason; every other required scenario, the auth/* ones
// included, must pass strictly. Empty: all of them pass.
var clientSkipped = map[string]string{}

// TestClientConformance runs the client requirement sets against the
// everything-client, judging the required scenarios, the unscored ones in
// clientNotScoredWanted and the authorization extensions in
// clientExtensionsWanted.
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
			wanted = append(wanted, clientExtensionsWanted...)
			runAndJudge(t, bin, wanted, "client", "--command", exe, "--requirements", revision)
		})
	}
}
