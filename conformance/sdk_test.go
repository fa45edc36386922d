package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
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

	out := runNodeClient(t, bin, "sse-client.mjs", "http://"+addr+"/sse")
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

// startNodeServer runs one of the TypeScript SDK servers in sdk/ on a
// loopback port, in a process group stopped when the test ends, and returns
// its port. env, NAME=value, is added to the environment.
// runNodeClient runs the client script sdk/script with args, within a
// minute, and returns what it printed; a failure fails the test with its
// output. The script runs in a process group of its own, which is what
// is killed when the time is up.
func runNodeClient(t *testing.T, bin, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), append([]string{filepath.Join("sdk", script)}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } // the group this test started
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", script, err, out, stderr)
	}
	return out
}

func startNodeServer(t *testing.T, bin, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "node"), filepath.Join("sdk", script))
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group this test started
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", script, stderr.String())
		}
	})
	var ready struct {
		Port int `json:"port"`
	}
	if err := json.NewDecoder(stdout).Decode(&ready); err != nil || ready.Port == 0 {
		t.Fatalf("%s did not start: %v", script, err)
	}
	return strconv.Itoa(ready.Port)
}

// TestConformanceTypeScriptServers: mcpkit's client, given only a URL,
// reaches servers of the TypeScript SDK — one in Streamable HTTP sessions
// mode (a modern request refused, then initialize), one that speaks the
// HTTP+SSE transport alone (initialize refused too, then the GET) — and
// lists and calls their tools.
func TestConformanceTypeScriptServers(t *testing.T) {
	bin := suiteBin(t)
	for _, tc := range []struct {
		script, path, name, transport string
	}{
		{"streamable-server.mjs", "/mcp", "ts-streamable-server", client.TransportStreamableHTTP},
		{"sse-server.mjs", "/sse", "ts-sse-server", client.TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := startNodeServer(t, bin, tc.script)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := client.New(protocol.Implementation{Name: "mcpkit-sdk-test", Version: "1.0.0"}, nil)
			s, err := c.ConnectURL(ctx, "http://127.0.0.1:"+port+tc.path, nil)
			if err != nil {
				t.Fatalf("connecting: %v", err)
			}
			defer s.Close()
			t.Logf("connected over %s at %s", s.Transport(), s.ProtocolVersion())
			if s.Era() != client.EraLegacy || s.Transport() != tc.transport || s.ServerInfo().Name != tc.name {
				t.Errorf("connected %v over %s to %q", s.Era(), s.Transport(), s.ServerInfo().Name)
			}
			tools, err := s.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
				t.Fatalf("tools/list: %+v %v", tools, err)
			}
			res, err := s.CallTool(ctx, "echo", map[string]any{"text": "hello " + tc.transport}, nil)
			if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*protocol.TextContent).Text != "hello "+tc.transport {
				t.Fatalf("echo: %+v %v", res, err)
			}
		})
	}
}
