package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

func runCall(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "call", `Call a tool. Arguments are key=value, typed by the tool's input schema
(integer, number, boolean, array and object properties are parsed; strings
stay strings; an array takes JSON or comma-separated items); key:=JSON sets
a raw JSON value; --args gives them all as one JSON object, which key=value
arguments then override.

On a terminal the result's text content is printed and other content
summarized; structuredContent is shown as a table when it is tabular (the
columns and rows of a query result, as from mcpkit serve sql, or a list of
flat objects), else as JSON unless the text content already says it (then
it is left out, with a note on stderr). When stdout is not a terminal, structuredContent
is printed as indented JSON and nothing else (text content is printed only
when there is no structuredContent; other content is summarized on stderr).
--format table|csv|markdown|jsonl renders a tabular result so, terminal or
not (a result that is not tabular is printed as usual, with a note on
stderr). A query result's table is followed by its row count; its notice,
and how to read on when it was truncated (cursor=NEXT_CURSOR with the same
sql), go to stderr. --json prints the raw CallToolResult.

A result with isError prints its text on stderr and exits 1. Progress is
shown on stderr. Ctrl-C cancels the call on the server and exits 130.

When the server asks for input (elicitation), mcpkit asks on the terminal,
one question per field; --answer key=value answers a field instead.
--accept-defaults answers every question with the form's defaults: each
field's default, else its first choice, else an empty value ("", 0, an
empty list; no for a yes/no question), so it never confirms anything the
server does not confirm by default. Without a terminal and without answers
mcpkit refuses. Sampling requests are refused (mcpkit has no model).`,
		"[flags] TARGET TOOL [key=value | key:=JSON ...]", "[flags] TOOL [key=value | key:=JSON ...] -- command args...")
	argsJSON := s.fs.String("args", "", "the tool's arguments as a `JSON` object, or @file (@- for stdin)")
	el := addAnswerFlags(s)
	noProgress := s.fs.Bool("no-progress", false, "do not ask the server for progress notifications")
	format := s.fs.String("format", "", "render a tabular result as `FORMAT`: "+strings.Join(formats, ", ")+" (default: a table on a terminal, else JSON)")
	var tf taskFlags
	tf.register(s)
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	tf.adjust(s)
	if *format != "" && !contains(formats, *format) {
		return s.usageError(fmt.Sprintf("--format must be one of %s, not %q", strings.Join(formats, ", "), *format))
	}
	if *format != "" && s.c.json {
		return s.usageError("give --json or --format, not both")
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

	sess, octx, cleanup, code := el.connectWith(s, tf.use(s))
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
				s.errorf("%s", noSuchTool(tool, list.Tools))
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
	res, err := sess.CallTool(tf.context(octx), tool, arguments, &co)
	s.status.clear()
	if id, ok := tf.started(err); ok {
		fmt.Fprintln(e.Stdout, id)
		return exitOK
	}
	if err != nil {
		if r := el.refused(); r != "" && s.interrupt.Err() == nil {
			s.errorf("%s", r)
			return exitFailed
		}
		if strings.Contains(err.Error(), protocol.MethodCreateMessage) {
			s.errorf("the server asks for sampling (a model's completion), which mcpkit does not provide")
			return exitFailed
		}
		if unknownTool(err) && s.interrupt.Err() == nil {
			// Say which tools there are, when the list confirms it.
			if list, lerr := sess.ListTools(octx, &client.ListOptions{All: true}); lerr == nil && findTool(list.Tools, tool) == nil {
				s.errorf("%s", noSuchTool(tool, list.Tools))
				return exitFailed
			}
		}
		return s.fail(err, false)
	}
	return printCallResult(s, sess, el, tool, res, *format)
}

// printCallResult prints a tool's result as call does (--json, or for a
// reader) and returns the exit code: 1 for a result with isError.
func printCallResult(s *sub, sess *client.Session, el *answerFlags, tool string, res *protocol.CallToolResult, format string) int {
	if s.c.json {
		if err := writeResult(s.e.Stdout, res, sess.Era() == client.EraLegacy); err != nil {
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
		if err := writeToolResult(s.e.Stdout, s.status, res, s.e.StdoutTTY, format); err != nil {
			return s.fail(err, false)
		}
	}
	return exitOK
}

// maxToolNames is how many tool names noSuchTool lists.
const maxToolNames = 20

// noSuchTool says that the server has no tool named name, listing the
// tools it has (in alphabetical order, the first maxToolNames of them).
func noSuchTool(name string, tools []*protocol.Tool) string {
	if len(tools) == 0 {
		return fmt.Sprintf("the server has no tool %q; it has no tools", name)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	sort.Strings(names)
	list := strings.Join(names, ", ")
	if len(names) > maxToolNames {
		list = strings.Join(names[:maxToolNames], ", ") + ", …"
	}
	return fmt.Sprintf("the server has no tool %q; its tools: %s", name, list)
}

// unknownTool reports whether err is a protocol error that says the tool
// called is unknown ("Unknown tool: x", "Tool x not found").
func unknownTool(err error) bool {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		return false
	}
	m := strings.ToLower(rpc.Message)
	return strings.Contains(m, "unknown tool") || (strings.Contains(m, "tool") && strings.Contains(m, "not found"))
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

// number renders a progress value, to three decimals at most.
func number(f float64) string { return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64) }

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

// writeToolResult prints a tool result (not --json), notes on st.
//
// A tabular structuredContent is rendered in format, or as a table on a
// terminal when format is ""; the text content, which repeats it, is left
// out, and other content is summarized (on stderr when stdout is not a
// terminal). Otherwise, off a terminal, structuredContent is printed as
// JSON alone, other content summarized on stderr; on a terminal the
// content is printed, and structuredContent as JSON only when no text
// block says more than the JSON; without structuredContent, the content.
func writeToolResult(w io.Writer, st *status, r *protocol.CallToolResult, tty bool, format string) error {
	structured := len(r.StructuredContent) > 0
	var tab *tabular
	if structured {
		tab, _ = parseTabular(r.StructuredContent)
	}
	if format != "" && tab == nil {
		st.println(fmt.Sprintf("mcpkit call: the result is not a table; --format %s does not apply", format))
	}
	if structured && (!tty || tab != nil) {
		for _, c := range r.Content {
			if _, ok := c.(*protocol.TextContent); ok {
				continue
			}
			if tty {
				writeContent(w, c)
			} else {
				st.println(summary(c))
			}
		}
	}
	if tab != nil && (tty || format != "") {
		if format == "" {
			format = formatTable
		}
		if err := tab.write(w, format, tty); err != nil {
			return err
		}
		if tab.notice != "" {
			st.println(tab.notice)
		}
		if tab.nextCursor != "" {
			st.println("more rows: call again with the same sql and cursor=" + tab.nextCursor)
		}
		return nil
	}
	if structured && !tty {
		return writeStructured(w, r.StructuredContent)
	}
	var compact []byte
	if structured {
		var buf bytes.Buffer
		if json.Compact(&buf, r.StructuredContent) == nil {
			compact = buf.Bytes()
		}
	}
	if structured && tty && hasOwnText(r.Content, compact) {
		// The text says what the structured content does, for a reader:
		// the JSON is for programs (--json, or stdout not a terminal).
		for _, c := range r.Content {
			writeContent(w, c)
		}
		st.println("mcpkit call: structuredContent left out on a terminal; --json, or a pipe, prints it")
		return nil
	}
	for _, c := range r.Content {
		if t, ok := c.(*protocol.TextContent); ok && compact != nil && sameJSON(t.Text, compact) {
			continue
		}
		writeContent(w, c)
	}
	if structured {
		return writeStructured(w, r.StructuredContent)
	}
	return nil
}

// hasOwnText reports whether content has a text block that is not only
// the structured content as JSON.
func hasOwnText(content []protocol.Content, compact []byte) bool {
	for _, c := range content {
		if t, ok := c.(*protocol.TextContent); ok && strings.TrimSpace(t.Text) != "" && (compact == nil || !sameJSON(t.Text, compact)) {
			return true
		}
	}
	return false
}

// sameJSON reports whether text is the JSON value compact.
func sameJSON(text string, compact []byte) bool {
	var buf bytes.Buffer
	return json.Compact(&buf, []byte(strings.TrimSpace(text))) == nil && bytes.Equal(buf.Bytes(), compact)
}

// writeStructured prints structured content as indented JSON (as it came,
// should it not be JSON).
func writeStructured(w io.Writer, raw json.RawMessage) error {
	if err := writeRawJSON(w, raw); err != nil {
		_, err = fmt.Fprintf(w, "%s\n", raw)
		return err
	}
	return nil
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
