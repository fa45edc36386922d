package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

func runRead(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "read", `Read a resource and print its contents: text as it is; binary contents
as raw bytes when stdout is not a terminal (to redirect into a file), and
summarized on a terminal. When the resource has several contents, each
comes after a line "--- URI (MIME TYPE) ---" and ends with a newline
(the last one as it is when stdout is not a terminal). --mime TYPE prints
only the content of that MIME type, alone (mcpkit read URL sql://schema
--mime application/json | jq); no such content is an error listing those
there are. --json prints the raw ReadResourceResult. A resource the server
does not have is reported as "resource not found: URI" (exit 1).`,
		"[flags] TARGET URI", "[flags] URI -- command args...")
	el := addAnswerFlags(s)
	mime := s.fs.String("mime", "", "print only the content of MIME `TYPE` (application/json, text/plain, ...)")
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	if len(rest) != 1 {
		return s.usageError("want exactly one URI")
	}
	if code := el.parseFlags(s); code != 0 {
		return code
	}
	sess, octx, cleanup, code := el.connect(s)
	if sess == nil {
		return code
	}
	defer cleanup()
	uri := rest[0]
	res, err := sess.ReadResource(octx, uri, nil)
	if err != nil {
		if el.refused() == "" && s.interrupt.Err() == nil && resourceNotFound(err) {
			s.errorf("resource not found: %s", uri)
			return exitFailed
		}
		return el.fail(s, err)
	}
	if s.c.json {
		return s.printResult(sess, res)
	}
	contents := res.Contents
	if *mime != "" {
		var types []string
		contents = nil
		for _, c := range res.Contents {
			types = append(types, orDash(c.MIMEType))
			if strings.EqualFold(baseMIME(c.MIMEType), baseMIME(*mime)) {
				contents = append(contents, c)
			}
		}
		if len(contents) == 0 {
			s.errorf("no content of type %s in %s (it has %s)", *mime, uri, strings.Join(types, ", "))
			return exitFailed
		}
		contents = contents[:1]
	}
	writeContents(e.Stdout, contents, e.StdoutTTY)
	return exitOK
}

// baseMIME is a MIME type without its parameters.
func baseMIME(t string) string {
	t, _, _ = strings.Cut(t, ";")
	return strings.TrimSpace(t)
}

// writeContents prints a resource's contents: text as it is, binary as raw
// bytes off a terminal and summarized on one. On a terminal every part
// ends with a newline. Several parts each come after a header line
// "--- URI (MIME TYPE) ---"; off a terminal a part followed by another
// then ends with a newline too.
func writeContents(w io.Writer, contents []*protocol.ResourceContents, tty bool) {
	several := len(contents) > 1
	for i, c := range contents {
		if several {
			header := "--- " + c.URI
			if c.MIMEType != "" {
				header += " (" + c.MIMEType + ")"
			}
			fmt.Fprintln(w, header+" ---")
		}
		var data []byte
		switch {
		case c.Blob == nil:
			data = []byte(c.Text)
		case tty:
			data = []byte(fmt.Sprintf("[blob %s %s, %s]\n", c.URI, orDash(c.MIMEType), size(len(c.Blob))))
		default:
			data = c.Blob
		}
		w.Write(data)
		if (tty || (several && i < len(contents)-1)) && !bytes.HasSuffix(data, []byte("\n")) {
			io.WriteString(w, "\n")
		}
	}
}

// resourceNotFound reports whether err is the server's answer for a
// resource it does not have: the error code -32002 (up to revision
// 2025-11-25), or invalid params with the message "Resource not found"
// (the modern era).
func resourceNotFound(err error) bool {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		return false
	}
	switch rpc.Code {
	case protocol.CodeResourceNotFoundLegacy:
		return true
	case protocol.CodeInvalidParams:
		return strings.Contains(strings.ToLower(rpc.Message), strings.ToLower(protocol.MessageResourceNotFound))
	}
	return false
}

func runPrompt(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "prompt", `Get a prompt with its arguments (key=value, strings) and print its
messages, each after its role; content other than text is summarized.
--json prints the raw GetPromptResult.`,
		"[flags] TARGET NAME [key=value ...]", "[flags] NAME [key=value ...] -- command args...")
	el := addAnswerFlags(s)
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	if len(rest) == 0 {
		return s.usageError("missing NAME")
	}
	pairs, err := parseAssignments(rest[1:])
	if err != nil {
		return s.usageError(err.Error())
	}
	arguments := map[string]string{}
	for _, p := range pairs {
		if p.raw {
			return s.usageError("prompt arguments are strings: use key=value, not key:=JSON")
		}
		arguments[p.key] = p.value
	}
	if code := el.parseFlags(s); code != 0 {
		return code
	}
	sess, octx, cleanup, code := el.connect(s)
	if sess == nil {
		return code
	}
	defer cleanup()
	res, err := sess.GetPrompt(octx, rest[0], arguments, nil)
	if err != nil {
		return el.fail(s, err)
	}
	if s.c.json {
		return s.printResult(sess, res)
	}
	if res.Description != "" {
		fmt.Fprintf(e.Stdout, "# %s\n\n", oneLine(res.Description))
	}
	for _, m := range res.Messages {
		fmt.Fprintf(e.Stdout, "%s: ", m.Role)
		if m.Content == nil {
			fmt.Fprintln(e.Stdout)
			continue
		}
		writeContent(e.Stdout, m.Content)
	}
	return exitOK
}

func runComplete(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "complete", `Ask for completions of the argument ARG of a prompt (--prompt NAME) or a
resource template (--resource URI_TEMPLATE), given its current VALUE
(default empty) and the arguments already chosen (--context key=value).
Prints one value per line; --json prints the raw completion.`,
		"[flags] TARGET (--prompt NAME | --resource URI) ARG [VALUE]", "[flags] (--prompt NAME | --resource URI) ARG [VALUE] -- command args...")
	promptName := s.fs.String("prompt", "", "complete an argument of the prompt `NAME`")
	resource := s.fs.String("resource", "", "complete a variable of the resource template `URI`")
	var contexts listFlag
	s.fs.Var(&contexts, "context", "an argument already chosen, `key=value` (repeatable)")
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	var ref protocol.CompleteReference
	switch {
	case *promptName != "" && *resource != "":
		return s.usageError("give --prompt or --resource, not both")
	case *promptName != "":
		ref = protocol.CompleteReference{Type: protocol.RefPrompt, Name: *promptName}
	case *resource != "":
		ref = protocol.CompleteReference{Type: protocol.RefResource, URI: *resource}
	default:
		return s.usageError("missing --prompt NAME or --resource URI")
	}
	if len(rest) == 0 || len(rest) > 2 {
		return s.usageError("want ARG and an optional VALUE")
	}
	arg := protocol.CompleteArgument{Name: rest[0]}
	if len(rest) == 2 {
		arg.Value = rest[1]
	}
	pairs, err := parseAssignments(contexts)
	if err != nil {
		return s.usageError("--context: " + err.Error())
	}
	resolved := map[string]string{}
	for _, p := range pairs {
		resolved[p.key] = p.value
	}
	sess, octx, closeAll, code := s.open(s.clientOptions())
	if sess == nil {
		return code
	}
	defer closeAll()
	c, err := sess.Complete(octx, ref, arg, resolved)
	if err != nil {
		return s.fail(err, false)
	}
	if s.c.json {
		return s.printResult(sess, c)
	}
	for _, v := range c.Values {
		fmt.Fprintln(e.Stdout, v)
	}
	if c.HasMore || (c.Total != nil && *c.Total > int64(len(c.Values))) {
		more := "more values"
		if c.Total != nil {
			more = fmt.Sprintf("%d values in all", *c.Total)
		}
		s.status.println("(" + more + ")")
	}
	return exitOK
}

// answerFlags are call's elicitation flags, which read and prompt share.
type answerFlags struct {
	*elicitor
	answers  listFlag
	defaults *bool
}

func addAnswerFlags(s *sub) *answerFlags {
	a := &answerFlags{elicitor: &elicitor{e: s.e, status: s.status}}
	s.fs.Var(&a.answers, "answer", "answer the server's elicitation field `key=value` (repeatable)")
	a.defaults = s.fs.Bool("accept-defaults", false, "answer every question of the server (elicitation) with the form's defaults: each field's default, "+
		"else its first choice, else an empty value (\"\", 0, an empty list); a yes/no question without a default is answered no, "+
		"so nothing the server does not confirm by default is confirmed")
	return a
}

// parseFlags checks the answers; it returns a usage error's code, or 0.
func (a *answerFlags) parseFlags(s *sub) int {
	ans, err := parseAssignments(a.answers)
	if err != nil {
		return s.usageError("--answer: " + err.Error())
	}
	a.elicitor.answers, a.elicitor.defaults = ans, *a.defaults
	return 0
}

// fail reports a failed request, preferring the reason an elicitation was
// refused.
func (a *answerFlags) fail(s *sub, err error) int {
	if r := a.refused(); r != "" && s.interrupt.Err() == nil {
		s.errorf("%s", r)
		return exitFailed
	}
	return s.fail(err, false)
}

// connect connects with the elicitation answers in place. On success it
// returns the session, the operation's context and a cleanup the caller
// defers; otherwise a nil session and the exit code.
func (a *answerFlags) connect(s *sub) (*client.Session, context.Context, func(), int) {
	return a.connectWith(s, s.clientOptions())
}

// connectWith is connect with the client options o.
func (a *answerFlags) connectWith(s *sub, o *client.Options) (*client.Session, context.Context, func(), int) {
	o.Elicitation = a.handle
	sess, octx, closeAll, code := s.open(o)
	if sess == nil {
		a.close()
		return nil, nil, nil, code
	}
	return sess, octx, func() {
		closeAll()
		a.close()
	}, 0
}

// printResult prints a result as --json asks and returns the exit code.
func (s *sub) printResult(sess *client.Session, v any) int {
	if err := writeResult(s.e.Stdout, v, sess.Era() == client.EraLegacy); err != nil {
		return s.fail(err, false)
	}
	return exitOK
}
