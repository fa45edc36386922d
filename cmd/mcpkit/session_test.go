package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSubcommands runs each subcommand against the everything server over
// HTTP and stdio, in both eras.
func TestSubcommands(t *testing.T) {
	url := newEverything(t)
	tests := []struct {
		name string
		sub  string
		own  []string
		want []string // in stdout
	}{
		{"discover", "discover", nil, []string{"Server:        mcpkit-everything-server 0.1.0", "tools (listChanged)"}},
		{"discover json", "discover", []string{"--json"}, []string{`"name": "mcpkit-everything-server"`, `"capabilities": {`}},
		{"tools", "tools", []string{"--all"}, []string{"echo ", "Echoes the text it is given", "test_tool_with_progress"}},
		{"tools json", "tools", []string{"--json"}, []string{`"tools": [`, `"name": "echo"`, `"inputSchema": {`}},
		{"resources", "resources", nil, []string{"test://static-text", "static-text", "text/plain"}},
		{"resources json", "resources", []string{"--json", "--all"}, []string{`"uri": "test://static-binary"`}},
		{"templates", "templates", nil, []string{"test://template/{id}/data", "template-data"}},
		{"templates json", "templates", []string{"--json"}, []string{`"uriTemplate": "test://template/{id}/data"`}},
		{"prompts", "prompts", nil, []string{"test_prompt_with_arguments", "arg1 arg2"}},
		{"prompts json", "prompts", []string{"--json"}, []string{`"name": "test_simple_prompt"`}},
		{"call text", "call", []string{"echo", "text=hello there"}, []string{"hello there\n"}},
		{"call typed", "call", []string{"test_sleep", "ms=1"}, []string{"slept\n"}},
		{"call raw", "call", []string{"test_sleep", "ms:=2"}, []string{"slept\n"}},
		{"call --args", "call", []string{"echo", "--args", `{"text":"from args"}`}, []string{"from args\n"}},
		{"call --args overridden", "call", []string{"echo", "text=mine", "--args", `{"text":"from args"}`}, []string{"mine\n"}},
		{"call summarized", "call", []string{"test_multiple_content_types"}, []string{"Multiple content types test:\n[image image/png, 69 bytes]\n[resource test://mixed-content-resource application/json, 27 bytes of text]\n"}},
		{"call json", "call", []string{"echo", "text=hi", "--json"}, []string{`"text": "hi"`, `"content": [`}},
		{"read", "read", []string{"test://static-text"}, []string{"This is the content of the static text resource."}},
		{"read template", "read", []string{"test://template/7/data"}, []string{`"id":"7"`}},
		{"read json", "read", []string{"test://static-binary", "--json"}, []string{`"blob": "iVBOR`}},
		{"prompt", "prompt", []string{"test_prompt_with_arguments", "arg1=a", "arg2=b"}, []string{"user: Prompt with arguments: arg1='a', arg2='b'\n"}},
		{"prompt summarized", "prompt", []string{"test_prompt_with_image"}, []string{"user: [image image/png, 69 bytes]\nuser: Please analyze the image above.\n"}},
		{"prompt json", "prompt", []string{"test_simple_prompt", "--json"}, []string{`"role": "user"`}},
		{"prompt elicitation", "prompt", []string{"test_input_required_result_prompt", "--answer", "context=tests"}, []string{"user: Prompt with context: tests\n"}},
		{"complete prompt", "complete", []string{"--prompt", "test_prompt_with_arguments", "arg1", "test"}, []string{"testValue1\n"}},
		{"complete resource", "complete", []string{"--resource", "test://template/{id}/data", "id", "1", "--json"}, []string{`"values": [`, `"123"`}},
		{"complete with context", "complete", []string{"--prompt", "test_prompt_with_arguments", "arg2", "--context", "arg1=x"}, []string{"testing\n"}},
		{"log level", "call", []string{"test_logging_tool", "--log-level", "debug"}, []string{"Logging tool executed\n"}},
	}
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := mcpkit(t, withTarget(tt.sub, tt.own, c.args(url))...)
					if r.code != exitOK {
						t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
					}
					for _, w := range tt.want {
						if !strings.Contains(r.stdout, w) {
							t.Errorf("stdout does not contain %q:\n%s", w, r.stdout)
						}
					}
					if strings.HasSuffix(tt.name, "json") && !json.Valid([]byte(r.stdout)) {
						t.Errorf("stdout is not JSON:\n%s", r.stdout)
					}
				})
			}
		})
	}
}

func TestEraReported(t *testing.T) {
	url := newEverything(t)
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			r := mcpkit(t, withTarget("discover", []string{"--json"}, c.args(url))...)
			var d discovery
			if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
				t.Fatalf("%v: %s (stderr %q)", err, r.stdout, r.stderr)
			}
			want := strings.TrimPrefix(strings.TrimPrefix(c.name, "http-"), "stdio-")
			if d.Era != want {
				t.Errorf("era %q, want %q", d.Era, want)
			}
			if (d.TTLMs != nil) != (want == "modern") {
				t.Errorf("cache hints %v in the %s era", d.TTLMs, want)
			}
		})
	}
}

func TestLogMessages(t *testing.T) {
	url := newEverything(t)
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			r := mcpkit(t, withTarget("call", []string{"test_tool_with_logging", "--log-level", "info"}, c.args(url))...)
			if r.code != exitOK {
				t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
			}
			for _, w := range []string{"log info everything: Tool execution started\n", "log info everything: Tool execution completed\n"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

func TestElicitation(t *testing.T) {
	url := newEverything(t)
	const tool = "test_input_required_result_elicitation"
	tests := []struct {
		name       string
		own        []string
		tty        terminal
		stdin      string
		code       int
		stdout     string
		stderrHas  string
		stderrHasN string // must not be in stderr
	}{
		{"refused without a terminal", nil, terminal{}, "", exitFailed, "",
			`mcpkit call: the server asks "What is your name?" (name) but stdin is not a terminal; answer with --answer name=VALUE or --accept-defaults`, ""},
		{"answered", []string{"--answer", "name=Ada"}, terminal{}, "", exitOK, "Hello, Ada!\n", "", "What is your name?"},
		{"defaults", []string{"--accept-defaults"}, terminal{}, "", exitOK, "Hello, !\n", "", ""},
		{"answer beats default", []string{"--accept-defaults", "--answer", "name=Bo"}, terminal{}, "", exitOK, "Hello, Bo!\n", "", ""},
		{"asked on the terminal", nil, terminal{stdin: true}, "Grace\n", exitOK, "Hello, Grace!\n", "What is your name?\n  name [string, required]: ", ""},
		{"asked again when empty", nil, terminal{stdin: true}, "\nLin\n", exitOK, "Hello, Lin!\n", "(required)", ""},
		{"cancelled at end of input", nil, terminal{stdin: true}, "", exitFailed, "", "cancel", ""},
	}
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := mcpkitWith(t, tt.tty, tt.stdin, withTarget("call", append([]string{tool}, tt.own...), c.args(url))...)
					if r.code != tt.code {
						t.Fatalf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
					}
					if r.stdout != tt.stdout {
						t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
					}
					if !strings.Contains(r.stderr, tt.stderrHas) {
						t.Errorf("stderr %q does not contain %q", r.stderr, tt.stderrHas)
					}
					if tt.stderrHasN != "" && strings.Contains(r.stderr, tt.stderrHasN) {
						t.Errorf("stderr %q contains %q", r.stderr, tt.stderrHasN)
					}
				})
			}
		})
	}
}

func TestElicitationTypedFields(t *testing.T) {
	url := newEverything(t)
	r := mcpkitWith(t, terminal{stdin: true}, "Ada\n41\n\n\nno\n", "call", url, "test_elicitation_sep1034_defaults")
	if r.code != exitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	want := `Elicitation completed: action=accept, content={"age":41,"name":"Ada","score":95.5,"status":"active","verified":false}` + "\n"
	if r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	for _, w := range []string{
		`  name — Your name [string, default "John Doe"]: `,
		`  age — Your age [integer, default 30]: `,
		`  status — Account status [string, default "active", one of active|inactive|pending]: `,
		`  verified — Verified account [Y/n]: `,
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not contain %q:\n%s", w, r.stderr)
		}
	}
}

func TestProgress(t *testing.T) {
	url := newEverything(t)
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			r := mcpkit(t, withTarget("call", []string{"test_tool_with_progress"}, c.args(url))...)
			if r.code != exitOK {
				t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
			}
			if r.stdout != "Tool with progress completed\n" {
				t.Errorf("stdout %q", r.stdout)
			}
			if want := "progress 0/100\nprogress 50/100\nprogress 100/100\n"; !strings.Contains(r.stderr, want) {
				t.Errorf("stderr %q does not contain %q", r.stderr, want)
			}
		})
	}
	t.Run("terminal", func(t *testing.T) {
		r := mcpkitWith(t, terminal{stderr: true}, "", "call", url, "test_tool_with_progress")
		if want := "\r\x1b[Kprogress 50/100"; !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not contain the updating line %q", r.stderr, want)
		}
		if !strings.HasSuffix(r.stderr, "\r\x1b[K") {
			t.Errorf("the progress line is not cleared at the end: %q", r.stderr)
		}
	})
	t.Run("not asked", func(t *testing.T) {
		r := mcpkit(t, "call", url, "test_tool_with_progress", "--no-progress")
		if strings.Contains(r.stderr, "progress") {
			t.Errorf("progress shown with --no-progress: %q", r.stderr)
		}
	})
}

func TestInterrupt(t *testing.T) {
	url := newEverything(t)
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inv := start(ctx, terminal{}, "", withTarget("call", []string{"test_sleep", "ms=60000"}, c.args(url))...)
			time.Sleep(500 * time.Millisecond)
			began := time.Now()
			cancel()
			r := inv.wait(t)
			if r.code != exitInterrupted {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, exitInterrupted, r.stderr)
			}
			if !strings.Contains(r.stderr, "mcpkit call: interrupted\n") {
				t.Errorf("stderr %q", r.stderr)
			}
			if d := time.Since(began); d > 10*time.Second {
				t.Errorf("took %v to stop", d)
			}
		})
	}
}

// listenUntil runs listen with args, calls trigger (with the same
// connection arguments) until a notification is printed, interrupts it and
// returns its output.
func listenUntil(t *testing.T, listenArgs, triggerArgs []string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inv := start(ctx, terminal{}, "", listenArgs...)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(inv.stderr.String(), "listening for") {
		select {
		case code := <-inv.done:
			t.Fatalf("listen ended with %d: %s", code, inv.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen did not start: %s", inv.stderr.String())
		}
	}
	for inv.stdout.String() == "" {
		if r := mcpkit(t, triggerArgs...); r.code != exitOK {
			t.Fatalf("trigger: exit %d: %s", r.code, r.stderr)
		}
		time.Sleep(100 * time.Millisecond)
		if time.Now().After(deadline) {
			t.Fatalf("no notification printed; stderr %q", inv.stderr.String())
		}
	}
	cancel()
	r := inv.wait(t)
	if r.code != exitOK {
		t.Fatalf("listen exit %d after the interrupt; stderr %q", r.code, r.stderr)
	}
	return r
}

func TestListen(t *testing.T) {
	url := newEverything(t)
	tests := []struct {
		name    string
		own     []string
		trigger []string
		want    string // first line
	}{
		{"tools", []string{"--tools"}, []string{"test_trigger_tool_change"}, "notifications/tools/list_changed"},
		{"default filter", nil, []string{"test_trigger_prompt_change"}, "notifications/prompts/list_changed"},
		{"resource", []string{"--resources", "test://watched-resource"}, []string{"test_trigger_resource_update", "uri=test://watched-resource"}, "notifications/resources/updated test://watched-resource"},
	}
	for _, c := range connections() {
		if strings.HasPrefix(c.name, "stdio") {
			continue // a stdio server is this run's own: no other client can trigger it
		}
		t.Run(c.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := listenUntil(t, withTarget("listen", tt.own, c.args(url)), withTarget("call", tt.trigger, c.args(url)))
					if first := strings.SplitN(r.stdout, "\n", 2)[0]; first != tt.want {
						t.Errorf("first line %q, want %q", first, tt.want)
					}
				})
			}
		})
	}
}

// TestListenStdio interrupts a listen on a stdio server that sends
// nothing: it must end with 0.
func TestListenStdio(t *testing.T) {
	for _, c := range connections() {
		if !strings.HasPrefix(c.name, "stdio") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inv := start(ctx, terminal{}, "", withTarget("listen", []string{"--tools"}, c.args(""))...)
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(inv.stderr.String(), "listening for tool list changes") {
				if time.Now().After(deadline) {
					t.Fatalf("listen did not start: %q", inv.stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			if r := inv.wait(t); r.code != exitOK {
				t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
			}
		})
	}
}
