package tasks_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

const helperEnv = "MCPKIT_TASKS_TEST_SERVER"

// TestHelperServer is not a test: run by TestRestart as a child process
// (with helperEnv naming the task store's file), it serves the test
// server over HTTP until it is killed, and prints its URL.
func TestHelperServer(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("a child process of TestRestart")
	}
	st, err := tasks.OpenSQLite(path, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	s, _ := testServer(t, &tasks.Options{Store: st}, newGate()) // held waits forever
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable.NewHandler(s, nil))
	fmt.Printf("url: http://%s/mcp\n", ln.Addr())
	_ = http.Serve(ln, mux)
}

// startHelper starts the server process on the store at path and returns
// its URL and the command (to kill).
func startHelper(t *testing.T, path string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "url: ") {
		t.Fatalf("server process: %q, %v", line, err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "url: ")), cmd
}

// TestRestart: with the SQLite store, tasks survive the server process
// dying: after a restart, a completed task keeps its result, and the ones
// whose handlers were running or waiting for input are failed with an
// error saying so, never left working.
func TestRestart(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "tasks.db")
	url, cmd := startHelper(t, path)
	dial := func(url string) *client.Session {
		o := &client.Options{Elicitation: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
		}}
		tasks.Use(o, &tasks.ClientOptions{MinPoll: 10 * time.Millisecond})
		s, err := client.New(info, o).ConnectURL(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	sess := dial(url)
	start := func(tool string, args map[string]any) string {
		_, err := sess.CallTool(tasks.Detach(ctx), tool, args, nil)
		started, ok := err.(*tasks.StartedError)
		if !ok {
			t.Fatalf("%s: %v, want a task", tool, err)
		}
		return started.Task.TaskID
	}
	done := start("slow", map[string]any{"ms": 1, "promote": true})
	if _, err := tasks.Wait(ctx, sess, done, nil); err != nil {
		t.Fatal(err)
	}
	running := start("held", map[string]any{"text": "x"})
	waiting := start("ask", nil)
	for {
		tk, err := tasks.Get(ctx, sess, waiting)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status == tasks.InputRequired {
			break
		}
		if tk.Status.Terminal() {
			t.Fatalf("ask: %+v", tk)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // no chance to record anything
		t.Fatal(err)
	}
	_ = cmd.Wait()

	url, _ = startHelper(t, path)
	sess = dial(url)
	tk, err := tasks.Get(ctx, sess, done)
	if err != nil || tk.Status != tasks.Completed || !strings.Contains(string(tk.Result), "slept 1 ms") {
		t.Errorf("the completed task after a restart: %+v, %v", tk, err)
	}
	for _, id := range []string{running, waiting} {
		tk, err := tasks.Get(ctx, sess, id)
		if err != nil || tk.Status != tasks.Failed || tk.Error == nil || tk.Error.Code != protocol.CodeInternalError || tk.Error.Message != tasks.ErrInterrupted {
			t.Errorf("an unfinished task after a restart: %+v (%v), %v", tk, tk.Error, err)
		}
	}
	if _, err := sess.CallTool(ctx, "slow", map[string]any{"ms": 1, "promote": true}, nil); err != nil {
		t.Errorf("a new task after the restart: %v", err)
	}
}
