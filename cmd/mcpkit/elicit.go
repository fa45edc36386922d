package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// elicitor answers the server's elicitation requests: from --answer and
// --accept-defaults, else by asking on the terminal, else it refuses.
type elicitor struct {
	e        *env
	status   *status
	answers  []assignment
	defaults bool

	asking sync.Mutex    // one question at a time on the terminal
	lines  chan string   // the terminal's lines, closed at end of input
	stop   chan struct{} // closed by close: the reader stops delivering
	once   sync.Once

	mu      sync.Mutex
	refusal string // why a request was refused, for the final error
}

// stopped returns the channel close closes.
func (el *elicitor) stopped() chan struct{} {
	el.once.Do(func() { el.stop = make(chan struct{}) })
	return el.stop
}

// close stops the terminal reader (one blocked reading stays so until its
// input ends: the process is about to exit).
func (el *elicitor) close() { close(el.stopped()) }

// errNotInteractive is the error of a refused elicitation.
var errNotInteractive = errors.New("elicitation refused")

func (el *elicitor) refuse(msg string) error {
	el.mu.Lock()
	if el.refusal == "" {
		el.refusal = msg
	}
	el.mu.Unlock()
	return fmt.Errorf("%w: %s", errNotInteractive, msg)
}

// refused returns why an elicitation was refused, or "".
func (el *elicitor) refused() string {
	el.mu.Lock()
	defer el.mu.Unlock()
	return el.refusal
}

// handle is the client's Elicitation handler.
func (el *elicitor) handle(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	el.asking.Lock()
	defer el.asking.Unlock()
	if p.Mode == "url" {
		return nil, el.refuse("the server asks to open a URL (" + p.URL + "), which mcpkit does not do")
	}
	var sch inputSchema
	_ = jsonrpc.Unmarshal(p.RequestedSchema, &sch)
	order := propertyOrder(p.RequestedSchema)
	content := map[string]any{}
	if el.defaults {
		content = client.FormDefaults(p.RequestedSchema)
	}
	for _, a := range el.answers {
		prop, ok := sch.Properties[a.key]
		if !ok {
			continue // an answer for another question
		}
		if a.raw {
			content[a.key] = json.RawMessage(a.value)
			continue
		}
		v, err := typedValue(prop, a.value)
		if err != nil {
			return nil, el.refuse(fmt.Sprintf("--answer %s: %v", a.key, err))
		}
		content[a.key] = v
	}
	var missing []string
	for _, name := range order {
		if _, ok := content[name]; ok {
			continue
		}
		if contains(sch.Required, name) || (!el.defaults && len(el.answers) == 0) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: content}, nil
	}
	if !el.e.StdinTTY {
		return nil, el.refuse(fmt.Sprintf("the server asks %q (%s) but stdin is not a terminal; answer with --answer %s=VALUE or --accept-defaults",
			oneLine(p.Message), strings.Join(missing, ", "), missing[0]))
	}
	return el.ask(ctx, p, &sch, missing, content)
}

// ask asks for the missing fields on the terminal. End of input cancels.
func (el *elicitor) ask(ctx context.Context, p *protocol.ElicitParams, sch *inputSchema, missing []string, content map[string]any) (*protocol.ElicitResult, error) {
	if el.lines == nil {
		// Reading blocks; a reader of its own lets an interrupt end the
		// question. It ends at the end of input.
		el.lines = make(chan string)
		go func(in *bufio.Reader, out chan<- string, stop <-chan struct{}) {
			defer close(out)
			for {
				line, err := in.ReadString('\n')
				if line != "" {
					select {
					case out <- line:
					case <-stop:
						return
					}
				}
				if err != nil {
					return
				}
			}
		}(bufio.NewReader(el.e.Stdin), el.lines, el.stopped())
	}
	el.status.println(p.Message)
	for _, name := range missing {
		prop := sch.Properties[name]
		if prop == nil {
			prop = &propertySchema{}
		}
		required := contains(sch.Required, name)
		for {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			el.status.clear()
			fmt.Fprintf(el.e.Stderr, "  %s: ", fieldPrompt(name, prop, required))
			var line string
			var ok bool
			select {
			case line, ok = <-el.lines:
			case <-ctx.Done():
				fmt.Fprintln(el.e.Stderr)
				return nil, ctx.Err()
			}
			if !ok {
				fmt.Fprintln(el.e.Stderr)
				return &protocol.ElicitResult{Action: protocol.ElicitCancel}, nil
			}
			line = strings.TrimRight(line, "\r\n")
			boolean := prop.kind() == "boolean"
			if line == "" {
				var d any
				if len(prop.Default) > 0 && jsonrpc.Unmarshal(prop.Default, &d) == nil {
					content[name] = d
					break
				}
				if !required {
					if boolean {
						content[name] = false
					}
					break
				}
				fmt.Fprintln(el.e.Stderr, "  (required)")
				continue
			}
			v, err := typedValue(prop, line)
			if err != nil {
				if boolean {
					fmt.Fprintln(el.e.Stderr, "  (answer y or n)")
				} else {
					fmt.Fprintf(el.e.Stderr, "  (%v)\n", err)
				}
				continue
			}
			if choices := enumChoices(prop); len(choices) > 0 && !contains(choices, fmt.Sprint(v)) && prop.kind() != "array" {
				fmt.Fprintf(el.e.Stderr, "  (choose one of %s)\n", strings.Join(choices, ", "))
				continue
			}
			content[name] = v
			break
		}
	}
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: content}, nil
}

// fieldPrompt describes a field: its name, description, type, whether it
// is required, its default and its choices. A yes/no field shows, instead
// of its type and default, which answers it takes: "Y/n" (default yes),
// "y/N" (default no) or "y/n" (no default).
func fieldPrompt(name string, p *propertySchema, required bool) string {
	var b strings.Builder
	b.WriteString(name)
	if d := p.Title; d != "" {
		b.WriteString(" — " + d)
	} else if d := p.Description; d != "" {
		b.WriteString(" — " + d)
	}
	details := []string{p.kind()}
	showDefault := len(p.Default) > 0
	switch {
	case p.kind() == "boolean":
		var shown bool
		details[0], shown = yesNo(p)
		showDefault = showDefault && !shown
	case p.kind() == "array" && p.Items != nil:
		details[0] = "list of " + p.Items.kind() + ", comma-separated"
	}
	if required {
		details = append(details, "required")
	}
	if showDefault {
		details = append(details, "default "+string(p.Default))
	}
	if choices := enumChoices(p); len(choices) > 0 {
		details = append(details, "one of "+strings.Join(choices, "|"))
	} else if p.Items != nil {
		if choices := enumChoices(p.Items); len(choices) > 0 {
			details = append(details, "any of "+strings.Join(choices, "|"))
		}
	}
	b.WriteString(" [" + strings.Join(details, ", ") + "]")
	return b.String()
}

// yesNo returns the answers a yes/no field takes, with its default in
// capitals, and whether the field has a boolean default (which the hint
// then shows).
func yesNo(p *propertySchema) (hint string, hasDefault bool) {
	switch strings.TrimSpace(string(p.Default)) {
	case "true":
		return "Y/n", true
	case "false":
		return "y/N", true
	}
	return "y/n", false
}

// enumChoices returns the values a property may take, from enum or oneOf.
func enumChoices(p *propertySchema) []string {
	var out []string
	for _, v := range p.Enum {
		out = append(out, fmt.Sprint(v))
	}
	for _, o := range p.OneOf {
		out = append(out, fmt.Sprint(o.Const))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
