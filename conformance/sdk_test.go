package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/protocol"
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

// TestConformanceTypeScriptSSEServer: mcpkit's client, given only the URL
// of a TypeScript SDK server that speaks the HTTP+SSE transport alone,
// walks the fallback chain to it (a modern request, initialize, then the
// GET) and lists and calls its tools.
func TestConformanceTypeScriptSSEServer(t *testing.T) {
	bin := suiteBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(filepath.Join(bin, "node"), filepath.Join("sdk", "sse-server.mjs"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group this test started
		_ = cmd.Wait()
	})
	var ready struct {
		Port int `json:"port"`
	}
	if err := json.NewDecoder(stdout).Decode(&ready); err != nil || ready.Port == 0 {
		t.Fatalf("the TypeScript server did not start: %v\n%s", err, stderr.String())
	}

	c := client.New(protocol.Implementation{Name: "mcpkit-sdk-test", Version: "1.0.0"}, nil)
	s, err := c.ConnectURL(ctx, "http://127.0.0.1:"+strconv.Itoa(ready.Port)+"/sse", nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, stderr.String())
	}
	defer s.Close()
	if s.Era() != client.EraLegacy || s.Transport() != client.TransportSSE || s.ServerInfo().Name != "ts-sse-server" {
		t.Errorf("connected %v over %s to %q at %s", s.Era(), s.Transport(), s.ServerInfo().Name, s.ProtocolVersion())
	}
	t.Logf("connected over %s at %s", s.Transport(), s.ProtocolVersion())
	tools, err := s.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Fatalf("tools/list: %+v %v", tools, err)
	}
	res, err := s.CallTool(ctx, "echo", map[string]any{"text": "over http+sse"}, nil)
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*protocol.TextContent).Text != "over http+sse" {
		t.Fatalf("echo: %+v %v", res, err)
	}
}
