package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

func TestEscapeTerminal(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text, ünïcödé, 表\n\tok", "plain text, ünïcödé, 表\n\tok"},
		{"\x1b[2Jcleared", `\u001b[2Jcleared`},
		{"\x1b]52;c;ZXZpbA==\x07", `\u001b]52;c;ZXZpbA==\u0007`},
		{"\x1b]0;title\x1b\\", `\u001b]0;title\u001b\`},
		{"line\r\nnext", "line\r\nnext"},
		{"safe\rforged", `safe\u000dforged`},
		{"end\r", `end\u000d`},
		{"back\bspace\x00nul\x7fdel", `back\u0008space\u0000nul\u007fdel`},
		{"c1 \u009b2J and \u0085", `c1 \u009b2J and \u0085`},
		{"abc\u202edcba\u2066x\u2069\u200f", `abc\u202edcba\u2066x\u2069\u200f`},
		{"bad \x9b\xff utf-8", `bad \x9b\xff utf-8`},
		{"\uFFFD is fine", "\uFFFD is fine"},
	} {
		if got := string(escapeTerminal([]byte(tt.in))); got != tt.want {
			t.Errorf("escapeTerminal(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// hostile is what a hostile server puts in its names, descriptions and
// messages: clear the screen, set the window title, write the clipboard,
// hide text with a carriage return, reverse it with a bidi override, and
// an 8-bit CSI.
const hostile = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07safe\rforged\u202eevil\u009b1m"

// controls are what must not reach a terminal raw.
var controls = []string{"\x1b", "\x07", "\r", "\u202e", "\u009b"}

// newHostile serves a server whose name, instructions, tool names and
// descriptions, results and errors carry terminal control sequences.
func newHostile(t *testing.T) string {
	t.Helper()
	s := server.New(protocol.Implementation{Name: "srv" + hostile, Version: "1" + hostile},
		&server.Options{Instructions: "instructions" + hostile})
	type noArgs struct{}
	server.AddTool(s, &protocol.Tool{Name: "tool" + hostile, Description: "description" + hostile},
		func(ctx context.Context, req *server.CallRequest, in noArgs) (string, error) {
			return "result" + hostile, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "fails", Description: "returns an error result"},
		func(ctx context.Context, req *server.CallRequest, in noArgs) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{IsError: true, Content: []protocol.Content{&protocol.TextContent{Text: "tool error" + hostile}}}, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "refuses", Description: "answers with a protocol error"},
		func(ctx context.Context, req *server.CallRequest, in noArgs) (string, error) {
			return "", jsonrpc.NewError(protocol.CodeInvalidParams, "protocol error"+hostile, nil)
		})
	return serveCore(t, s)
}

// TestTerminalEscapes: what a server says reaches a terminal with its
// control characters escaped — in tools, discover and call, results and
// errors, on stdout and stderr — while JSON output on a terminal stays
// JSON with the same values, and output off a terminal is left as it is.
func TestTerminalEscapes(t *testing.T) {
	url := newHostile(t)
	tty := terminal{stdout: true, stderr: true}
	escaped := escapeTerminal([]byte(hostile))
	check := func(name string, r result, want ...string) {
		t.Helper()
		for _, out := range []string{r.stdout, r.stderr} {
			for _, c := range controls {
				if strings.Contains(out, c) {
					t.Errorf("%s: %q reaches the terminal:\nstdout: %q\nstderr: %q", name, c, r.stdout, r.stderr)
				}
			}
		}
		for _, w := range want {
			if !strings.Contains(r.stdout+r.stderr, w) {
				t.Errorf("%s: output lacks %q:\nstdout: %q\nstderr: %q", name, w, r.stdout, r.stderr)
			}
		}
	}

	r := mcpkitWith(t, tty, "", "tools", url)
	check("tools", r, `tool\u001b[2J`, `description\u001b[2J`)
	r = mcpkitWith(t, tty, "", "discover", url)
	check("discover", r, `srv\u001b[2J`, `instructions\u001b[2J`)
	r = mcpkitWith(t, tty, "", "call", url, "tool"+hostile)
	check("call", r, "result"+string(escaped))
	if r.code != exitOK {
		t.Errorf("call: exit %d", r.code)
	}
	r = mcpkitWith(t, tty, "", "call", url, "fails")
	check("call isError", r, `tool error\u001b[2J`)
	r = mcpkitWith(t, tty, "", "call", url, "refuses")
	check("call protocol error", r, `protocol error\u001b[2J`)
	r = mcpkitWith(t, tty, "", "call", url, "nonesuch")
	check("call unknown tool", r, `tool\u001b[2J`)

	// JSON on a terminal: escaped where JSON allows, so still JSON.
	for _, args := range [][]string{{"tools", url, "--json"}, {"discover", url, "--json"}, {"call", url, "tool" + hostile, "--json"}} {
		r = mcpkitWith(t, tty, "", args...)
		check(strings.Join(args[:1], " ")+" --json", r)
		var v any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Errorf("%s --json on a terminal is not JSON: %v\n%s", args[0], err, r.stdout)
		}
		if !strings.Contains(jsonStrings(v), hostile) {
			t.Errorf("%s --json on a terminal lost the values:\n%s", args[0], r.stdout)
		}
	}

	// Off a terminal, data is left as it is.
	r = mcpkit(t, "call", url, "tool"+hostile)
	if r.stdout != "result"+hostile+"\n" {
		t.Errorf("call off a terminal: %q", r.stdout)
	}
}

// jsonStrings joins every string in v.
func jsonStrings(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
