// Package redistest starts the real engines the multi-replica tests need,
// on loopback, from Debian's packages: a Redis server and nginx in front of
// replicas (deploy/nginx.conf.tmpl). Each is stopped by its process id
// when the test ends. Tests skip when the binaries are missing, unless
// MCPKIT_TEST_REPLICAS=1 says they must run.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binary paths, as Debian installs them.
var (
	RedisServer = "/usr/bin/redis-server"
	Nginx       = "/usr/sbin/nginx"
)

func need(t testing.TB, bin string) {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("MCPKIT_TEST_REPLICAS") == "1" {
			t.Fatalf("%s is missing (apt-get install -y redis-server nginx)", bin)
		}
		t.Skipf("%s is missing (apt-get install -y redis-server nginx)", bin)
	}
}

// FreePort returns a loopback port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Process is an engine started for a test.
type Process struct {
	Addr string // host:port
	cmd  *exec.Cmd
	args []string
}

// Redis starts a Redis server without persistence on a free loopback port
// and returns it; it is stopped (by PID) when the test ends.
func Redis(t testing.TB) *Process {
	t.Helper()
	need(t, RedisServer)
	dir := t.TempDir()
	// A port found free may be taken before Redis binds it (by an outgoing
	// connection): then another.
	for try := 0; ; try++ {
		port := FreePort(t)
		p := &Process{Addr: fmt.Sprintf("127.0.0.1:%d", port), args: []string{
			"--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no",
			"--dir", dir, "--protected-mode", "yes", "--maxmemory", "256mb",
		}}
		err := p.try()
		if err == nil {
			t.Cleanup(p.Stop)
			return p
		}
		p.Stop()
		if try == 4 {
			t.Fatalf("redis-server does not start: %v", err)
		}
	}
}

func (p *Process) try() error {
	p.cmd = exec.Command(RedisServer, p.args...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return err
	}
	return listening(p.Addr)
}

// URL returns the redis:// URL of database 0.
func (p *Process) URL() string { return "redis://" + p.Addr + "/0" }

func (p *Process) start(t testing.TB) {
	t.Helper()
	if err := p.try(); err != nil {
		t.Fatalf("redis-server does not start again on %s: %v", p.Addr, err)
	}
}

// Stop kills the Redis server (SIGKILL: nothing is saved anyway).
func (p *Process) Stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		p.cmd = nil
	}
}

// Restart starts a stopped Redis server again on the same port, empty.
func (p *Process) Restart(t testing.TB) {
	t.Helper()
	p.Stop()
	p.start(t)
}

func waitListening(t testing.TB, addr string) {
	t.Helper()
	if err := listening(addr); err != nil {
		t.Fatalf("%s does not listen: %v", addr, err)
	}
}

func listening(addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Template returns the path of deploy/nginx.conf.tmpl.
func Template() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "deploy", "nginx.conf.tmpl")
}

// Config fills in the nginx template for upstreams (host:port each).
func Config(tmpl, dir string, port int, upstreams []string) string {
	var all, sse strings.Builder
	for i, u := range upstreams {
		fmt.Fprintf(&all, "server %s;\n    ", u)
		if i == 0 {
			fmt.Fprintf(&sse, "server %s;\n    ", u)
		} else {
			fmt.Fprintf(&sse, "server %s backup;\n    ", u)
		}
	}
	r := strings.NewReplacer("@DIR@", dir, "@PORT@", fmt.Sprint(port), "@UPSTREAMS@", all.String(), "@SSE_UPSTREAMS@", sse.String())
	return r.Replace(tmpl)
}

// Nginx starts nginx with deploy/nginx.conf.tmpl in front of upstreams on
// a free loopback port and returns its address; it is stopped (by PID)
// when the test ends.
func StartNginx(t testing.TB, upstreams []string) string {
	t.Helper()
	need(t, Nginx)
	tmpl, err := os.ReadFile(Template())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "mcpkit-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o777) // the workers may run as another user
	port := FreePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(Config(string(tmpl), dir, port, upstreams)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Nginx, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"), "-g", "daemon off;")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
		}
	}()
	t.Cleanup(func() {
		// SIGQUIT: the master closes the workers and exits.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := listening(addr); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		t.Fatalf("nginx does not listen on %s: %v\n%s", addr, err, log)
	}
	return addr
}

// Context returns a context that ends with the test or after d.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
