package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

var (
	serverOnce sync.Once
	serverBin  string
	serverErr  error
)

// everythingServer builds conformance/everything-server once per test
// binary, into a temporary directory that TestMain removes.
func everythingServer(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the everything-server")
	}
	serverOnce.Do(func() {
		dir, err := os.MkdirTemp("", "stdio-everything")
		if err != nil {
			serverErr = err
			return
		}
		serverBin = filepath.Join(dir, "everything-server")
		out, err := exec.Command(goTool, "build", "-o", serverBin, "github.com/mcpkit/mcpkit/conformance/everything-server").CombinedOutput()
		if err != nil {
			serverErr = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if serverErr != nil {
		t.Fatalf("building everything-server: %v", serverErr)
	}
	return serverBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if serverBin != "" {
		os.RemoveAll(filepath.Dir(serverBin))
	}
	os.Exit(code)
}

// lockedBuffer is an io.Writer safe for the process's stderr copier and
// the test together.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func rawCall(ctx context.Context, c transport.ClientConn, id int64, method, params string) (*jsonrpc.Message, error) {
	return c.Call(ctx, &transport.Call{Message: &jsonrpc.Message{ID: jsonrpc.IntID(id), Method: method, Params: json.RawMessage(params)}}, nil)
}

// initialize opens a legacy session on the everything-server.
func initialize(t *testing.T, ctx context.Context, c *stdio.Command) {
	t.Helper()
	resp, err := rawCall(ctx, c, 1, protocol.MethodInitialize, `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"command-test","version":"1"}}`)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if resp.Error != nil || !bytes.Contains(resp.Result, []byte(`"protocolVersion":"2025-11-25"`)) {
		t.Fatalf("initialize answered %+v %s", resp.Error, resp.Result)
	}
	if err := c.Send(ctx, jsonrpc.AppendNotification(nil, protocol.MethodNotificationInitialized, nil), ""); err != nil {
		t.Fatal(err)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestCommandCloseAtEndOfInput(t *testing.T) {
	checkLeaks(t)
	bin := everythingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const closeWait = 5 * time.Second
	c, err := stdio.Start(bin, []string{"-stdio"}, &stdio.CommandOptions{CloseWait: closeWait})
	if err != nil {
		t.Fatal(err)
	}
	initialize(t, ctx, c)
	resp, err := rawCall(ctx, c, 2, protocol.MethodToolsCall, `{"name":"echo","arguments":{"text":"hi"}}`)
	if err != nil || resp.Error != nil || !bytes.Contains(resp.Result, []byte(`"text":"hi"`)) {
		t.Fatalf("echo: %v %+v %s", err, resp.Error, resp.Result)
	}
	pid := c.PID()
	if pid <= 0 || !alive(pid) {
		t.Fatalf("pid %d not alive", pid)
	}
	select {
	case <-c.Exited():
		t.Fatal("Exited closed while the server runs")
	default:
	}
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= closeWait {
		t.Errorf("Close took %v: the server did not exit at end of input, a signal was needed", d)
	}
	select {
	case <-c.Exited():
	default:
		t.Fatal("Exited still open after Close")
	}
	if err := c.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want a clean exit", err)
	}
	if alive(pid) {
		t.Errorf("process %d still alive", pid)
	}
	if _, err := rawCall(ctx, c, 3, protocol.MethodToolsList, `{}`); err == nil {
		t.Error("a call after Close succeeded")
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCommandCloseEscalates(t *testing.T) {
	checkLeaks(t)
	const closeWait = 200 * time.Millisecond
	cases := []struct {
		name   string
		script string
		signal syscall.Signal
		// Close returns after this many CloseWait periods
		periods int
	}{
		{"sigterm", "", syscall.SIGTERM, 1},
		{"sigkill", `trap "" TERM`, syscall.SIGKILL, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The shell makes a file once its trap is set.
			ready := filepath.Join(t.TempDir(), "ready")
			script := fmt.Sprintf("%s\n: > '%s'; exec sleep 60", tc.script, ready)
			c, err := stdio.Start("sh", []string{"-c", script}, &stdio.CommandOptions{CloseWait: closeWait})
			if err != nil {
				t.Fatal(err)
			}
			pid := c.PID()
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(ready); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the shell did not start within 10s")
				}
			}
			start := time.Now()
			c.Close()
			d := time.Since(start)
			min := time.Duration(tc.periods) * closeWait
			if d < min || d > min+2*time.Second {
				t.Errorf("Close took %v, want about %v", d, min)
			}
			var ee *exec.ExitError
			if !errors.As(c.ExitErr(), &ee) {
				t.Fatalf("ExitErr = %v, want an *exec.ExitError", c.ExitErr())
			}
			ws, ok := ee.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != tc.signal {
				t.Errorf("exit status %v, want killed by %v", ee, tc.signal)
			}
			if alive(pid) {
				t.Errorf("process %d still alive", pid)
			}
		})
	}
}

func TestCommandStderr(t *testing.T) {
	checkLeaks(t)
	var errOut lockedBuffer
	c, err := stdio.Start("sh", []string{"-c", `echo "server starting" >&2; cat >/dev/null; echo "server done" >&2`}, &stdio.CommandOptions{Stderr: &errOut, CloseWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := c.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v", err)
	}
	if got := errOut.String(); got != "server starting\nserver done\n" {
		t.Errorf("stderr %q", got)
	}
}

func TestCommandEnvAndDir(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	var errOut lockedBuffer
	c, err := stdio.Start("sh", []string{"-c", `echo "$MCP_TEST_VALUE $(pwd)" >&2`}, &stdio.CommandOptions{Stderr: &errOut, Env: []string{"MCP_TEST_VALUE=42", "PATH=" + os.Getenv("PATH")}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	<-c.Exited()
	c.Close()
	real, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(errOut.String()); got != "42 "+dir && got != "42 "+real {
		t.Errorf("stderr %q, want %q", got, "42 "+dir)
	}
}

func TestCommandDiesMidCall(t *testing.T) {
	checkLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := stdio.Start("sh", []string{"-c", "read line; exit 3"}, &stdio.CommandOptions{CloseWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	resp, err := rawCall(ctx, c, 1, protocol.MethodToolsList, `{}`)
	if err == nil {
		t.Fatalf("Call answered %+v by a process that exited", resp)
	}
	if !errors.Is(err, stdio.ErrConnClosed) {
		t.Errorf("Call = %v, want ErrConnClosed", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Call failed after %v", d)
	}
	select {
	case <-c.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("Exited not closed")
	}
	var ee *exec.ExitError
	if !errors.As(c.ExitErr(), &ee) || ee.ExitCode() != 3 {
		t.Errorf("ExitErr = %v, want exit status 3", c.ExitErr())
	}
	select {
	case <-c.Done():
	default:
		t.Error("connection not done")
	}
	if _, err := rawCall(ctx, c, 2, protocol.MethodToolsList, `{}`); err == nil {
		t.Error("a later call succeeded")
	}
}

func TestCommandStartFails(t *testing.T) {
	if _, err := stdio.Start(filepath.Join(t.TempDir(), "no-such-server"), nil, nil); err == nil {
		t.Fatal("Start of a missing program succeeded")
	}
}

func TestCommandLargeResponse(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 16 MiB messages")
	}
	checkLeaks(t)
	bin := everythingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := stdio.Start(bin, []string{"-stdio"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	initialize(t, ctx, c)
	// As large as the server's request limit allows: the response line is
	// within a few hundred bytes of 16 MiB.
	n := stdio.DefaultMaxLineBytes - 256
	text := strings.Repeat("y", n)
	resp, err := rawCall(ctx, c, 2, protocol.MethodToolsCall, `{"name":"echo","arguments":{"text":"`+text+`"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("echo: %v", resp.Error)
	}
	line := len(jsonrpc.AppendResult(nil, resp.ID, resp.Result))
	if line < stdio.DefaultMaxLineBytes-1024 || line > stdio.DefaultMaxLineBytes {
		t.Errorf("response line of %d bytes, want just under %d", line, stdio.DefaultMaxLineBytes)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil || len(r.Content) == 0 || r.Content[0].Text != text {
		t.Fatalf("echo result of %d bytes does not round-trip (%v)", len(resp.Result), err)
	}
	// The connection goes on.
	resp, err = rawCall(ctx, c, 3, protocol.MethodToolsCall, `{"name":"echo","arguments":{"text":"small"}}`)
	if err != nil || !bytes.Contains(resp.Result, []byte(`"small"`)) {
		t.Fatalf("after the large message: %v", err)
	}
}

// A response beyond the client's MaxLineBytes ends the connection: the
// call fails rather than waiting forever.
func TestCommandResponseOverLimit(t *testing.T) {
	checkLeaks(t)
	bin := everythingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := stdio.Start(bin, []string{"-stdio"}, &stdio.CommandOptions{ConnOptions: stdio.ConnOptions{MaxLineBytes: 64 << 10}, CloseWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	initialize(t, ctx, c)
	_, err = rawCall(ctx, c, 2, protocol.MethodToolsCall, `{"name":"echo","arguments":{"text":"`+strings.Repeat("z", 128<<10)+`"}}`)
	if !errors.Is(err, stdio.ErrConnClosed) {
		t.Fatalf("Call = %v, want ErrConnClosed", err)
	}
}

// A server that leaves a child holding its output open (a wrapper script,
// say) is still reaped by Close within its waits.
func TestCommandCloseWithChildHoldingOutput(t *testing.T) {
	checkLeaks(t)
	const closeWait = 200 * time.Millisecond
	var errOut lockedBuffer
	c, err := stdio.Start("sh", []string{"-c", `trap "" TERM; sleep 30 2>/dev/null & echo $! >&2; wait; wait`}, &stdio.CommandOptions{Stderr: &errOut, CloseWait: closeWait})
	if err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(5 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		if s := strings.TrimSpace(errOut.String()); s != "" {
			if _, err := fmt.Sscan(s, &child); err != nil {
				t.Fatalf("child pid %q: %v", s, err)
			}
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("the script did not report its child")
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 3*closeWait+2*time.Second {
		t.Errorf("Close took %v", d)
	}
	var ee *exec.ExitError
	if !errors.As(c.ExitErr(), &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("ExitErr = %v, want killed", c.ExitErr())
	}
	if !alive(child) {
		t.Log("the child is gone already; the test did not hold the output open")
	}
}
