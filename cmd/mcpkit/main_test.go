package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// everythingServer is the path of the built everything-server, for the
// stdio tests.
var everythingServer string

func TestMain(m *testing.M) {
	if mode := os.Getenv(browserHelperEnv); mode != "" {
		os.Exit(browserHelper(mode, os.Args[1:]))
	}
	if kind := os.Getenv(eraServerEnv); kind != "" {
		os.Exit(serveEraStdio(kind))
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "mcpkit-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The user cache directory (serve sql's demo database and task
	// stores) is the run's own.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	everythingServer = filepath.Join(dir, "everything-server")
	build := exec.Command("go", "build", "-o", everythingServer, "github.com/mcpkit/mcpkit/conformance/everything-server")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building everything-server:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// lockedBuffer is a buffer safe for the writers of one run (the command,
// its goroutines, a server process's stderr).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// terminal says which streams of a test run are terminals.
type terminal struct{ stdin, stdout, stderr bool }

// result is what a run printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// invocation is a run in progress.
type invocation struct {
	stdout, stderr *lockedBuffer
	done           chan int
}

// start runs the command in the background.
func start(ctx context.Context, tty terminal, stdin string, args ...string) *invocation {
	inv := &invocation{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan int, 1)}
	e := &env{Stdin: strings.NewReader(stdin), Stdout: inv.stdout, Stderr: inv.stderr,
		StdinTTY: tty.stdin, StdoutTTY: tty.stdout, StderrTTY: tty.stderr}
	go func() { inv.done <- run(ctx, e, args) }()
	return inv
}

// wait waits for the run to end.
func (inv *invocation) wait(t *testing.T) result {
	t.Helper()
	select {
	case code := <-inv.done:
		return result{inv.stdout.String(), inv.stderr.String(), code}
	case <-time.After(30 * time.Second):
		t.Fatalf("the run did not end; stderr so far: %s", inv.stderr.String())
		return result{}
	}
}

// mcpkit runs the command to its end, with no terminal.
func mcpkit(t *testing.T, args ...string) result {
	t.Helper()
	return mcpkitWith(t, terminal{}, "", args...)
}

func mcpkitWith(t *testing.T, tty terminal, stdin string, args ...string) result {
	t.Helper()
	return start(context.Background(), tty, stdin, args...).wait(t)
}

// newEverything serves the everything fixtures over HTTP in both eras and
// returns the endpoint URL.
func newEverything(t *testing.T) string {
	t.Helper()
	return serveCore(t, everything.New(nil))
}

// closedPort returns a loopback URL where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mcp"
}

// connection is one way of reaching the everything server: a transport
// and an era.
type connection struct {
	name string
	// args returns the arguments that select the target, to append after
	// the subcommand's own.
	args func(url string) []string
}

func connections() []connection {
	stdio := func(era string) func(string) []string {
		return func(string) []string { return []string{"--era", era, "--", everythingServer, "-stdio"} }
	}
	http := func(era string) func(string) []string {
		return func(url string) []string { return []string{"--era", era, url} }
	}
	return []connection{
		{"http-modern", http("modern")},
		{"http-legacy", http("legacy")},
		{"stdio-modern", stdio("modern")},
		{"stdio-legacy", stdio("legacy")},
	}
}

// withTarget puts the target arguments in place: a URL target first,
// before the subcommand's arguments, a command target last.
func withTarget(sub string, own []string, target []string) []string {
	args := []string{sub}
	if i := indexOf(target, "--"); i >= 0 {
		args = append(args, own...)
		return append(args, target...)
	}
	// "--era X URL": the URL first, then the rest, flags last.
	args = append(args, target[len(target)-1])
	args = append(args, own...)
	return append(args, target[:len(target)-1]...)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestHelp(t *testing.T) {
	common := []string{"-header", "-timeout", "-json", "-protocol-version", "-era", "-log-level"}
	tests := []struct {
		sub   string
		flags []string
	}{
		{"discover", common},
		{"tools", append([]string{"-all"}, common...)},
		{"resources", append([]string{"-all"}, common...)},
		{"templates", append([]string{"-all"}, common...)},
		{"prompts", append([]string{"-all"}, common...)},
		{"call", append([]string{"-args", "-answer", "-accept-defaults", "-no-progress", "-format", "-task", "-detach"}, common...)},
		{"task", nil},
		{"read", append([]string{"-answer", "-accept-defaults"}, common...)},
		{"prompt", append([]string{"-answer", "-accept-defaults"}, common...)},
		{"complete", append([]string{"-prompt", "-resource", "-context"}, common...)},
		{"listen", append([]string{"-tools", "-prompts", "-resources-list", "-resources"}, common...)},
		{"check", append([]string{"-call", "-args"}, common...)},
		{"bench", append([]string{"-tool", "-args", "-c", "-d", "-n", "-warmup", "-pipeline"}, common...)},
		{"version", []string{"-json"}},
	}
	for _, tt := range tests {
		for _, form := range [][]string{{tt.sub, "--help"}, {tt.sub, "-h"}, {"help", tt.sub}} {
			t.Run(strings.Join(form, " "), func(t *testing.T) {
				r := mcpkit(t, form...)
				if r.code != exitOK {
					t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
				}
				if !strings.HasPrefix(r.stdout, "Usage:\n  mcpkit "+tt.sub) {
					t.Errorf("help does not start with the usage line:\n%s", r.stdout)
				}
				for _, f := range tt.flags {
					if !strings.Contains(r.stdout, "  "+f+" ") && !strings.Contains(r.stdout, "  "+f+"\n") {
						t.Errorf("help does not mention %s:\n%s", f, r.stdout)
					}
				}
			})
		}
	}
	for _, form := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		t.Run(strings.Join(form, " "), func(t *testing.T) {
			r := mcpkit(t, form...)
			if r.code != exitOK {
				t.Fatalf("exit %d", r.code)
			}
			for _, c := range commands() {
				if !strings.Contains(r.stdout, "\n  "+c.name+" ") {
					t.Errorf("top-level help does not list %s", c.name)
				}
			}
			for _, f := range common {
				if !strings.Contains(r.stdout, "  "+f+" ") && !strings.Contains(r.stdout, "  "+f+"\n") {
					t.Errorf("top-level help does not mention %s", f)
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	url := newEverything(t)
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no arguments", nil, "Usage:"},
		{"unknown subcommand", []string{"frobnicate"}, `unknown subcommand "frobnicate"`},
		{"unknown flag", []string{"tools", url, "--frob"}, "flag provided but not defined: -frob"},
		{"missing target", []string{"tools"}, "missing TARGET"},
		{"not a URL", []string{"tools", "example.com"}, "is not an http:// or https:// URL"},
		{"empty command", []string{"tools", "--"}, "missing the server command"},
		{"bad era", []string{"tools", url, "--era", "future"}, "--era must be auto, modern or legacy"},
		{"era and version disagree", []string{"tools", url, "--era", "modern", "--protocol-version", "2025-06-18"}, "is a legacy revision"},
		{"bad log level", []string{"tools", url, "--log-level", "loud"}, "is not a level"},
		{"bad header", []string{"tools", url, "--header", "nocolon"}, "want 'Name: value'"},
		{"header on stdio", []string{"tools", "--header", "A: b", "--", "true"}, "HTTP targets only"},
		{"extra argument", []string{"discover", url, "extra"}, `unexpected argument "extra"`},
		{"missing tool", []string{"call", url}, "missing TOOL"},
		{"not key=value", []string{"call", url, "echo", "text"}, `argument "text" is not key=value`},
		{"bad raw JSON", []string{"call", url, "echo", "text:={"}, "wants a JSON value"},
		{"bad --args", []string{"call", url, "echo", "--args", "[1]"}, "--args wants a JSON object"},
		{"mistyped value", []string{"call", url, "test_sleep", "ms=soon"}, `argument ms: want an integer, got "soon"`},
		{"bad format", []string{"call", url, "echo", "text=hi", "--format", "xml"}, `--format must be one of table, csv, markdown, jsonl, not "xml"`},
		{"format and json", []string{"call", url, "echo", "text=hi", "--format", "csv", "--json"}, "give --json or --format, not both"},
		{"read without URI", []string{"read", url}, "want exactly one URI"},
		{"prompt without name", []string{"prompt", url}, "missing NAME"},
		{"complete without ref", []string{"complete", url, "arg"}, "missing --prompt NAME or --resource URI"},
		{"complete with both refs", []string{"complete", url, "--prompt", "p", "--resource", "r", "arg"}, "not both"},
		{"help of nothing", []string{"help", "frobnicate"}, `unknown subcommand "frobnicate"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mcpkit(t, tt.args...)
			if r.code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, exitUsage, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr %q does not contain %q", r.stderr, tt.want)
			}
			if tt.args != nil && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("the error is not one line: %q", r.stderr)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	url := newEverything(t)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"unreachable URL", []string{"tools", closedPort(t)}, exitUnreachable, "cannot connect to http://127.0.0.1:"},
		{"unreachable URL, call", []string{"call", closedPort(t), "echo", "text=hi"}, exitUnreachable, "connection refused"},
		{"missing command", []string{"tools", "--", filepath.Join(t.TempDir(), "no-such-server")}, exitUnreachable, "cannot connect to"},
		{"tool error", []string{"call", url, "test_error_handling"}, exitFailed, "mcpkit call: test_error_handling: This tool intentionally returns an error for testing"},
		{"tool error, legacy", []string{"call", url, "test_error_handling", "--era", "legacy"}, exitFailed, "This tool intentionally returns an error"},
		{"tool error, JSON", []string{"call", url, "test_error_handling", "--json"}, exitFailed, "This tool intentionally returns an error"},
		{"unknown tool", []string{"call", url, "no_such_tool", "a=1"}, exitFailed, `the server has no tool "no_such_tool"; its tools: echo, `},
		{"unknown tool, no arguments", []string{"call", url, "no_such_tool"}, exitFailed, `the server has no tool "no_such_tool"; its tools: echo, `},
		{"resource not found", []string{"read", url, "test://nowhere"}, exitFailed, "mcpkit read: resource not found: test://nowhere\n"},
		{"protocol error", []string{"prompt", url, "no_such_prompt"}, exitFailed, "the server answered with error -32602: Unknown prompt: no_such_prompt"},
		{"sampling refused", []string{"call", url, "test_input_required_result_sampling"}, exitFailed, "sampling"},
		{"timeout", []string{"call", url, "test_sleep", "ms=5000", "--timeout", "200ms"}, exitFailed, "timed out after 200ms"},
		{"success", []string{"call", url, "echo", "text=hi"}, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mcpkit(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr %q does not contain %q", r.stderr, tt.want)
			}
		})
	}
}

func TestReorder(t *testing.T) {
	fs, _ := newFlagSet("t", nil)
	fs.Bool("all", false, "")
	tests := []struct {
		in, want []string
	}{
		{[]string{"URL", "echo", "text=hi", "--json"}, []string{"--json", "URL", "echo", "text=hi"}},
		{[]string{"URL", "--timeout", "5s", "x"}, []string{"--timeout", "5s", "URL", "x"}},
		{[]string{"--era=legacy", "URL", "--all"}, []string{"--era=legacy", "--all", "URL"}},
		{[]string{"URL", "-", "--header", "A: b"}, []string{"--header", "A: b", "URL", "-"}},
		{[]string{"URL", "--unknown", "x"}, []string{"--unknown", "URL", "x"}},
	}
	for _, tt := range tests {
		if got := reorder(fs, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("reorder(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTypedValue(t *testing.T) {
	props := parseInputSchema([]byte(`{"type":"object","properties":{
		"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"boolean"},
		"l":{"type":"array","items":{"type":"integer"}},"o":{"type":"object"},
		"s":{"type":"string"},"ns":{"type":["null","string"]},"ni":{"type":["integer","null"]}}}`)).Properties
	tests := []struct {
		key, text string
		want      string // JSON
		err       bool
	}{
		{"n", "42", "42", false},
		{"n", "4.2", "", true},
		{"x", "4.25", "4.25", false},
		{"x", "NaN", "", true},
		{"b", "true", "true", false},
		{"b", "no", "false", false},
		{"b", "maybe", "", true},
		{"l", "1,2, 3", "[1,2,3]", false},
		{"l", "[4,5]", "[4,5]", false},
		{"l", "1,x", "", true},
		{"o", `{"a":1}`, `{"a":1}`, false},
		{"o", "a=1", "", true},
		{"s", "42", `"42"`, false},
		{"ns", "true", `"true"`, false},
		{"ni", "7", "7", false},
		{"unknown", "7", `"7"`, false},
	}
	for _, tt := range tests {
		var args = map[string]any{}
		err := applyAssignments(args, []assignment{{key: tt.key, value: tt.text}}, props)
		if (err != nil) != tt.err {
			t.Errorf("%s=%s: error %v, want error %v", tt.key, tt.text, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		got, _ := jsonText(args[tt.key])
		if got != tt.want {
			t.Errorf("%s=%s: got %s, want %s", tt.key, tt.text, got, tt.want)
		}
	}
}
