package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/tasks"
)

// taskFlags are call's flags for the Tasks extension
// (io.modelcontextprotocol/tasks).
type taskFlags struct {
	on, detach bool
}

func (f *taskFlags) register(s *sub) {
	s.fs.BoolVar(&f.on, "task", false, "declare the Tasks extension: a call the server makes a task is followed to its end, its status shown on stderr (a line updated in place on a terminal, a JSON object per change otherwise); --timeout then defaults to no limit")
	s.fs.BoolVar(&f.detach, "detach", false, "with --task: print the id of the task the call becomes and exit, to resume with 'mcpkit task wait TARGET ID'")
}

// adjust applies the flags' implications once parsed: --detach implies
// --task, and --task lifts --timeout's default.
func (f *taskFlags) adjust(s *sub) {
	f.on = f.on || f.detach
	if !f.on {
		return
	}
	set := false
	s.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == "timeout" })
	if !set {
		s.c.timeout = 0
	}
}

// use returns the client options of s, declaring the extension when asked.
func (f *taskFlags) use(s *sub) *client.Options {
	o := s.clientOptions()
	if f.on {
		tasks.Use(o, &tasks.ClientOptions{OnStatus: newTaskReporter(s).report})
	}
	return o
}

// context returns the call's context: under --detach, one whose call
// returns as soon as it becomes a task.
func (f *taskFlags) context(ctx context.Context) context.Context {
	if f.detach {
		return tasks.Detach(ctx)
	}
	return ctx
}

// started returns the id of the task a detached call became.
func (f *taskFlags) started(err error) (string, bool) {
	var st *tasks.StartedError
	if errors.As(err, &st) {
		return st.Task.TaskID, true
	}
	return "", false
}

// taskReporter shows a task's status on stderr as it changes: one line
// updated in place on a terminal, else a JSON object per line (the task
// as tasks/get gives it, without its result).
type taskReporter struct {
	s        *sub
	last     string
	announce bool
}

func newTaskReporter(s *sub) *taskReporter { return &taskReporter{s: s, announce: true} }

func (r *taskReporter) report(t *tasks.Task) {
	shown := *t
	shown.Result = nil
	key := string(shown.Status) + "\x00" + shown.StatusMessage + "\x00" + fmt.Sprint(len(shown.InputRequests))
	if key == r.last {
		return
	}
	r.last = key
	if !r.s.e.StderrTTY {
		b, err := json.Marshal(shown)
		if err == nil {
			r.s.status.println(string(b))
		}
		return
	}
	if r.announce {
		r.announce = false
		r.s.status.println(fmt.Sprintf("mcpkit %s: the call is task %s (mcpkit task wait|get|cancel %s %s)", r.s.name, t.TaskID, r.s.target.String(), t.TaskID))
	}
	line := "task " + string(t.Status)
	if t.StatusMessage != "" {
		line += ": " + oneLine(t.StatusMessage)
	}
	r.s.status.progress(line)
}

const taskAbout = `Follow a task of the Tasks extension (io.modelcontextprotocol/tasks) by
its id, from any process of the same caller: the id 'mcpkit call --task
--detach' prints, or the one 'mcpkit call --task' shows.

  mcpkit task get TARGET ID      print the task's state as JSON
  mcpkit task wait TARGET ID     follow the task to its end and print its
                                 result as 'mcpkit call' does
  mcpkit task cancel TARGET ID   ask the server to cancel the task`

func runTask(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		w := e.Stdout
		if len(args) == 0 {
			w = e.Stderr
		}
		fmt.Fprintf(w, "Usage:\n  mcpkit task get|wait|cancel [flags] TARGET ID\n\n%s\n\nRun 'mcpkit task wait --help' for the flags.\n", taskAbout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	verb := args[0]
	switch verb {
	case "get", "wait", "cancel":
	default:
		return usageError(e, "task", fmt.Sprintf("unknown task subcommand %q (get, wait or cancel)", verb))
	}
	about := map[string]string{
		"get":    "Print the state of a task as JSON: its status, status message, times, TTL, poll\ninterval, the input it waits for, and once ended its result or error.",
		"wait":   "Follow a task to its end, showing its status on stderr (a line updated in place\non a terminal, a JSON object per change otherwise), answering the input it asks\nfor (elicitation) as 'mcpkit call' does, and print its result as 'mcpkit call'\nwould have. A failed task exits 1 with its error, a cancelled one exits 1.\n--timeout defaults to no limit here. Ctrl-C cancels the task on the server.",
		"cancel": "Ask the server to cancel a task. Cancellation is cooperative: the task ends\ncancelled once its handler stops. Cancelling an ended task does nothing.",
	}[verb]
	s := newSub(ctx, e, "task "+verb, about, "[flags] TARGET ID", "[flags] ID -- command args...")
	var el *answerFlags
	if verb == "wait" {
		el = addAnswerFlags(s)
	}
	rest, code, done := s.parse(args[1:], true)
	if done {
		return code
	}
	if len(rest) != 1 || strings.TrimSpace(rest[0]) == "" {
		return s.usageError("give one task ID after the target")
	}
	id := rest[0]
	if verb == "wait" {
		f := taskFlags{on: true}
		f.adjust(s)
		if code := el.parseFlags(s); code != 0 {
			return code
		}
	}
	o := s.clientOptions()
	tasks.Use(o, nil)
	var (
		sess    *client.Session
		octx    context.Context
		cleanup func()
	)
	if el != nil {
		sess, octx, cleanup, code = el.connectWith(s, o)
	} else {
		sess, octx, cleanup, code = s.open(o)
	}
	if sess == nil {
		return code
	}
	defer cleanup()
	switch verb {
	case "get":
		t, err := tasks.Get(octx, sess, id)
		if err != nil {
			return s.fail(err, false)
		}
		b, err := json.Marshal(t)
		if err != nil {
			return s.fail(err, false)
		}
		if err := writeRawJSON(e.Stdout, b); err != nil {
			return s.fail(err, false)
		}
		return exitOK
	case "cancel":
		if err := tasks.Cancel(octx, sess, id); err != nil {
			return s.fail(err, false)
		}
		return exitOK
	}
	rep := newTaskReporter(s)
	rep.announce = false
	res, err := tasks.WaitTool(octx, sess, id, &tasks.ClientOptions{OnStatus: rep.report})
	s.status.clear()
	switch {
	case errors.Is(err, tasks.ErrCancelled):
		s.errorf("the task was cancelled")
		return exitFailed
	case err != nil:
		return el.fail(s, err)
	}
	return printCallResult(s, sess, el, "task "+id, res, "")
}
