package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
)

func runListen(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "listen", `Subscribe to the server's change notifications and print each as one
line (a JSON object per line with --json) until interrupted (exit 0) or
the server ends the stream. Without a choice of notifications, listens for
the tool, prompt and resource list changes. --timeout bounds connecting
and subscribing only.`,
		"[flags] TARGET [--tools] [--prompts] [--resources-list] [--resources URI ...]",
		"[flags] [--tools] [--prompts] [--resources-list] [--resources URI ...] -- command args...")
	tools := s.fs.Bool("tools", false, "listen for tool list changes")
	prompts := s.fs.Bool("prompts", false, "listen for prompt list changes")
	resourcesList := s.fs.Bool("resources-list", false, "listen for resource list changes")
	var resources listFlag
	s.fs.Var(&resources, "resources", "listen for updates of the resource `URI` (repeatable)")
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	// Further positional arguments are more resource URIs.
	resources = append(resources, rest...)
	filter := protocol.SubscriptionFilter{
		ToolsListChanged: *tools, PromptsListChanged: *prompts, ResourcesListChanged: *resourcesList,
		ResourceSubscriptions: resources,
	}
	if !filter.ToolsListChanged && !filter.PromptsListChanged && !filter.ResourcesListChanged && len(filter.ResourceSubscriptions) == 0 {
		filter.ToolsListChanged, filter.PromptsListChanged, filter.ResourcesListChanged = true, true, true
	}
	sess, octx, closeAll, code := s.open(s.clientOptions())
	if sess == nil {
		return code
	}
	defer closeAll()
	sub, err := sess.Listen(octx, filter)
	if err != nil {
		if ctx.Err() != nil {
			return exitOK
		}
		return s.fail(err, false)
	}
	defer sub.Close()
	s.status.println("listening for " + describeFilter(sub.Acknowledged) + " (Ctrl-C to stop)")
	for {
		select {
		case n, ok := <-sub.C():
			if !ok {
				return s.ended(sub.Err())
			}
			if err := s.printNotification(n); err != nil {
				return s.fail(err, false)
			}
		case <-ctx.Done():
			return exitOK
		}
	}
}

// ended reports how a subscription ended and returns the exit code.
func (s *sub) ended(err error) int {
	switch {
	case s.interrupt.Err() != nil:
		return exitOK
	case err == nil:
		s.status.println("the server ended the subscription")
		return exitOK
	case errors.Is(err, client.ErrSubscriptionDropped):
		s.errorf("the subscription was dropped (the connection ended)")
		return exitUnreachable
	}
	return s.fail(err, false)
}

// notificationLine is the JSON form of a notification.
type notificationLine struct {
	Method string          `json:"method"`
	URI    string          `json:"uri,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (s *sub) printNotification(n client.Notification) error {
	if s.c.json {
		b, err := json.Marshal(notificationLine{n.Method, n.URI, n.Params})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(s.e.Stdout, "%s\n", b)
		return err
	}
	line := n.Method
	if n.URI != "" {
		line += " " + n.URI
	}
	_, err := fmt.Fprintln(s.e.Stdout, line)
	return err
}

// describeFilter names what a subscription listens for.
func describeFilter(f protocol.SubscriptionFilter) string {
	var parts []string
	if f.ToolsListChanged {
		parts = append(parts, "tool list changes")
	}
	if f.PromptsListChanged {
		parts = append(parts, "prompt list changes")
	}
	if f.ResourcesListChanged {
		parts = append(parts, "resource list changes")
	}
	for _, u := range f.ResourceSubscriptions {
		parts = append(parts, "updates of "+u)
	}
	if len(parts) == 0 {
		return "nothing the server agreed to"
	}
	return strings.Join(parts, ", ")
}
