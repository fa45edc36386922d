package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// startReplicas runs deploy/run: Redis, three everything-server replicas
// sharing state in it (-store), and nginx in front of them (round robin,
// no affinity). It returns the endpoint and the deployment's directory;
// everything is stopped by process id when the test ends. It skips when
// Redis or nginx is missing, unless MCPKIT_TEST_REPLICAS=1 (CI), where
// deploy/run installs them.
func startReplicas(t *testing.T) (url, dir string) {
	t.Helper()
	if os.Getenv("MCPKIT_TEST_REPLICAS") != "1" {
		for _, bin := range []string{"/usr/bin/redis-server", "/usr/sbin/nginx"} {
			if _, err := os.Stat(bin); err != nil {
				t.Skipf("%s is missing; MCPKIT_TEST_REPLICAS=1 installs it", bin)
			}
		}
	}
	dir, err := os.MkdirTemp("", "mcpkit-replicas-")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("..", "deploy", "run"))
	t.Cleanup(func() {
		if out, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("deploy/run stop: %v\n%s", err, out)
		}
	})
	cmd := exec.Command(script, "start", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("deploy/run start: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), dir
}

// TestServerConformanceReplicas runs both requirement sets, strictly,
// against nginx in front of three replicas that share state in Redis, as
// TestServerConformance runs them against one process.
func TestServerConformanceReplicas(t *testing.T) {
	bin := suiteBin(t)
	url, dir := startReplicas(t)
	for _, revision := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(revision, func(t *testing.T) {
			wanted := append(requiredScenarios(t, bin, revision, "Server scenarios"), notScoredWanted[revision]...)
			runAndJudge(t, bin, wanted, "server", "--url", url, "--requirements", revision)
		})
	}
	if t.Failed() {
		for _, name := range []string{"replica1.log", "replica2.log", "replica3.log", "error.log"} {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			t.Logf("%s:\n%s", name, tail(b))
		}
	}
}
