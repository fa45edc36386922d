package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/transport/sse"
)

// TestConformanceTypeScriptSSEClient: the official TypeScript SDK's
// SSEClientTransport (pinned in package.json beside the suite) lists and
// calls the everything-server's tools over mcpkit's HTTP+SSE transport.
func TestConformanceTypeScriptSSEClient(t *testing.T) {
	bin := suiteBin(t)
	srv := everything.New(nil)
	t.Cleanup(func() { srv.Close() })
	mux := http.NewServeMux()
	mux.Handle("/sse", sse.NewHandler(srv, nil))
	addr := serveLoopback(t, mux)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), filepath.Join("sdk", "sse-client.mjs"), "http://"+addr+"/sse")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("TypeScript SSE client: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	var got struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
		Tools  []string `json:"tools"`
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if got.Server.Name != "mcpkit-everything-server" {
		t.Errorf("server name %q", got.Server.Name)
	}
	if !slices.Contains(got.Tools, "echo") || len(got.Tools) < 5 {
		t.Errorf("tools %v", got.Tools)
	}
	if got.Result.IsError || len(got.Result.Content) != 1 || got.Result.Content[0].Text != "over http+sse" {
		t.Errorf("echo result %+v", got.Result)
	}
}
