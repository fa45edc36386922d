package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
)

func runCall(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "call", `Call a tool. Arguments are key=value, typed by the tool's input schema
(integer, number, boolean, array and object properties are parsed; strings
stay strings; an array takes JSON or comma-separated items); key:=JSON sets
a raw JSON value; --args gives them all as one JSON object, which key=value
arguments then override.

The result's text content is printed, other content summarized, and
structuredContent shown as JSON (as a table, on a terminal, when it is a
list of flat objects). --json prints the raw CallToolResult. A result with
isError prints its text on stderr and exits 1. Progress is shown on
stderr. When the server asks for input (elicitation), mcpkit asks on the
terminal, or takes --answer and --accept-defaults; without a terminal and
without answers it refuses. Sampling requests are refused (mcpkit has no
model). Ctrl-C cancels the call on the server and exits 130.`,
		"[flags] TARGET TOOL [key=value | key:=JSON ...]", "[flags] TOOL [key=value | key:=JSON ...] -- command args...")
	argsJSON := s.fs.String("args", "", "the tool's arguments as a `JSON` object, or @file (@- for stdin)")
	el := addAnswerFlags(s)
	noProgress := s.fs.Bool("no-progress", false, "do not ask the server for progress notifications")
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	if len(rest) == 0 {
		return s.usageError("missing TOOL")
	}
	tool := rest[0]
	pairs, err := parseAssignments(rest[1:])
	if err != nil {
		return s.usageError(err.Error())
	}
	if code := el.parseFlags(s); code != 0 {
		return code
	}
	base, err := readArgsFlag(*argsJSON, e.Stdin)
	if err != nil {
		return s.usageError(err.Error())
	}

	sess, octx, cleanup, code := el.connect(s)
	if sess == nil {
		return code
	}
	defer cleanup()

	arguments := map[string]any{}
	for k, v := range base {
		arguments[k] = v
	}
	if len(pairs) > 0 {
		var props map[string]*propertySchema
		if needsSchema(pairs) {
			list, err := sess.ListTools(octx, &client.ListOptions{All: true})
			if err != nil {
				return s.fail(err, false)
			}
			t := findTool(list.Tools, tool)
			if t == nil {
				s.errorf("the server has no tool %q", tool)
				return exitFailed
			}
			props = parseInputSchema(t.InputSchema).Properties
		}
		if err := applyAssignments(arguments, pairs, props); err != nil {
			return s.usageError(err.Error())
		}
	}

	var co client.CallOptions
	if !*noProgress {
		co.OnProgress = func(p *protocol.ProgressParams) { s.status.progress(progressLine(p)) }
	}
	res, err := sess.CallTool(octx, tool, arguments, &co)
	s.status.clear()
	if err != nil {
		if r := el.refused(); r != "" && s.interrupt.Err() == nil {
			s.errorf("%s", r)
			return exitFailed
		}
		if strings.Contains(err.Error(), protocol.MethodCreateMessage) {
			s.errorf("the server asks for sampling (a model's completion), which mcpkit does not provide")
			return exitFailed
		}
		return s.fail(err, false)
	}
	if s.c.json {
		if err := writeResult(e.Stdout, res, sess.Era() == client.EraLegacy); err != nil {
			return s.fail(err, false)
		}
	}
	if res.IsError {
		if r := el.refused(); r != "" {
			s.errorf("%s", r)
			return exitFailed
		}
		text := contentText(res.Content)
		if text == "" {
			text = "the tool reported an error"
		}
		s.errorf("%s: %s", tool, text)
		return exitFailed
	}
	if !s.c.json {
		writeToolResult(e.Stdout, res, e.StdoutTTY)
	}
	return exitOK
}

// needsSchema reports whether some assignment must be typed by the
// tool's schema.
func needsSchema(as []assignment) bool {
	for _, a := range as {
		if !a.raw {
			return true
		}
	}
	return false
}

func findTool(tools []*protocol.Tool, name string) *protocol.Tool {
	for _, t := range tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// progressLine renders a progress notification: "progress 50/100 message".
func progressLine(p *protocol.ProgressParams) string {
	line := "progress " + number(p.Progress)
	if p.Total != nil {
		line += "/" + number(*p.Total)
	}
	if p.Message != "" {
		line += " " + oneLine(p.Message)
	}
	return line
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// contentText joins the text blocks of content.
func contentText(content []protocol.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*protocol.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// writeToolResult prints a tool result for people: text, summaries of
// other content, and structuredContent (leaving out the text block that
// only repeats it).
func writeToolResult(w io.Writer, r *protocol.CallToolResult, tty bool) {
	var compact []byte
	if len(r.StructuredContent) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, r.StructuredContent) == nil {
			compact = buf.Bytes()
		}
	}
	for _, c := range r.Content {
		if t, ok := c.(*protocol.TextContent); ok && compact != nil && sameJSON(t.Text, compact) {
			continue
		}
		writeContent(w, c)
	}
	if len(r.StructuredContent) > 0 {
		writeStructured(w, r.StructuredContent, tty)
	}
}

// sameJSON reports whether text is the JSON value compact.
func sameJSON(text string, compact []byte) bool {
	var buf bytes.Buffer
	return json.Compact(&buf, []byte(strings.TrimSpace(text))) == nil && bytes.Equal(buf.Bytes(), compact)
}

// writeStructured prints structured content: a table on a terminal when it
// is a list of flat objects (or an object holding only one), else JSON.
func writeStructured(w io.Writer, raw json.RawMessage, tty bool) {
	if tty {
		list := raw
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil && len(obj) == 1 {
			for _, v := range obj {
				list = v
			}
		}
		if keys, rows, ok := flatRows(list); ok {
			t := &table{header: make([]string, len(keys))}
			for i, k := range keys {
				t.header[i] = strings.ToUpper(k)
			}
			for _, row := range rows {
				cells := make([]string, len(keys))
				for i, k := range keys {
					cells[i] = scalarText(row[k])
				}
				t.add(cells...)
			}
			t.write(w, tty)
			return
		}
	}
	if err := writeRawJSON(w, raw); err != nil {
		fmt.Fprintf(w, "%s\n", raw)
	}
}

// writeContent prints one content block: text as it is, anything else as
// a one-line summary.
func writeContent(w io.Writer, c protocol.Content) {
	if t, ok := c.(*protocol.TextContent); ok {
		io.WriteString(w, t.Text)
		if !strings.HasSuffix(t.Text, "\n") {
			io.WriteString(w, "\n")
		}
		return
	}
	fmt.Fprintln(w, summary(c))
}

// summary describes a non-text content block in one line.
func summary(c protocol.Content) string {
	switch x := c.(type) {
	case *protocol.ImageContent:
		return fmt.Sprintf("[image %s, %s]", x.MIMEType, size(decodedLen(x.Data)))
	case *protocol.AudioContent:
		return fmt.Sprintf("[audio %s, %s]", x.MIMEType, size(decodedLen(x.Data)))
	case *protocol.ResourceLink:
		s := "[resource link " + x.URI
		if x.MIMEType != "" {
			s += " " + x.MIMEType
		}
		if x.Name != "" {
			s += " (" + x.Name + ")"
		}
		return s + "]"
	case *protocol.EmbeddedResource:
		if x.Resource == nil {
			return "[resource]"
		}
		s := "[resource " + x.Resource.URI
		if x.Resource.MIMEType != "" {
			s += " " + x.Resource.MIMEType
		}
		if x.Resource.Blob != nil {
			return s + ", " + size(len(x.Resource.Blob)) + "]"
		}
		return s + ", " + size(len(x.Resource.Text)) + " of text]"
	}
	return "[" + c.ContentType() + "]"
}

func decodedLen(b64 string) int {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return base64.StdEncoding.DecodedLen(len(b64))
	}
	return len(b)
}

func size(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return strconv.Itoa(n) + " bytes"
}
