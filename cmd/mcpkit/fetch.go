package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
)

func runRead(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "read", `Read a resource and print its contents: text as it is; binary contents
as raw bytes when stdout is not a terminal (to redirect into a file), and
summarized on a terminal. --json prints the raw ReadResourceResult.`,
		"[flags] TARGET URI", "[flags] URI -- command args...")
	el := addAnswerFlags(s)
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
	res, err := sess.ReadResource(octx, rest[0], nil)
	if err != nil {
		return el.fail(s, err)
	}
	if s.c.json {
		return s.printResult(sess, res)
	}
	for _, c := range res.Contents {
		switch {
		case c.Blob == nil:
			io.WriteString(e.Stdout, c.Text)
			if e.StdoutTTY && !strings.HasSuffix(c.Text, "\n") {
				io.WriteString(e.Stdout, "\n")
			}
		case e.StdoutTTY:
			fmt.Fprintf(e.Stdout, "[blob %s %s, %s]\n", c.URI, orDash(c.MIMEType), size(len(c.Blob)))
		default:
			e.Stdout.Write(c.Blob)
		}
	}
	return exitOK
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
	a.defaults = s.fs.Bool("accept-defaults", false, "answer elicitations with the requested schema's defaults")
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
	o := s.clientOptions()
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
