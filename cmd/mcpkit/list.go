package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// lister is one of the list subcommands: what it lists and how it shows a
// page of it.
type lister struct {
	name  string
	about string
	// list fetches the list result and its table.
	list func(ctx context.Context, sess *client.Session, o *client.ListOptions) (any, *table, error)
}

var listTools = &lister{"tools", "List the server's tools: name, title, description and required arguments.",
	func(ctx context.Context, sess *client.Session, o *client.ListOptions) (any, *table, error) {
		r, err := sess.ListTools(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		t := &table{header: []string{"NAME", "TITLE", "DESCRIPTION", "REQUIRED"}, optional: []int{1}}
		for _, tool := range r.Tools {
			title := tool.Title
			if title == "" && tool.Annotations != nil {
				title = tool.Annotations.Title
			}
			t.add(tool.Name, title, tool.Description, strings.Join(requiredArgs(tool.InputSchema), ", "))
		}
		return r, t, nil
	}}

var listResources = &lister{"resources", "List the server's resources: URI, name, title, description and MIME type.",
	func(ctx context.Context, sess *client.Session, o *client.ListOptions) (any, *table, error) {
		r, err := sess.ListResources(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		t := &table{header: []string{"URI", "NAME", "TITLE", "DESCRIPTION", "MIME TYPE"}, optional: []int{2}}
		for _, res := range r.Resources {
			t.add(res.URI, res.Name, res.Title, res.Description, res.MIMEType)
		}
		return r, t, nil
	}}

var listTemplates = &lister{"templates", "List the server's resource templates: URI template, name, title, description and MIME type.",
	func(ctx context.Context, sess *client.Session, o *client.ListOptions) (any, *table, error) {
		r, err := sess.ListResourceTemplates(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		t := &table{header: []string{"URI TEMPLATE", "NAME", "TITLE", "DESCRIPTION", "MIME TYPE"}, optional: []int{2}}
		for _, res := range r.ResourceTemplates {
			t.add(res.URITemplate, res.Name, res.Title, res.Description, res.MIMEType)
		}
		return r, t, nil
	}}

var listPrompts = &lister{"prompts", "List the server's prompts: name, title, description and arguments\n(optional ones in brackets).",
	func(ctx context.Context, sess *client.Session, o *client.ListOptions) (any, *table, error) {
		r, err := sess.ListPrompts(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		t := &table{header: []string{"NAME", "TITLE", "DESCRIPTION", "ARGUMENTS"}, optional: []int{1}}
		for _, p := range r.Prompts {
			var args []string
			for _, a := range p.Arguments {
				if a.Required {
					args = append(args, a.Name)
				} else {
					args = append(args, "["+a.Name+"]")
				}
			}
			t.add(p.Name, p.Title, p.Description, strings.Join(args, " "))
		}
		return r, t, nil
	}}

// listCommand returns the run function of a list subcommand.
func listCommand(l *lister) func(ctx context.Context, e *env, args []string) int {
	return func(ctx context.Context, e *env, args []string) int {
		s := newSub(ctx, e, l.name, l.about+`

A table on a terminal (long cells shortened), the raw list result with
--json. Without --all only the first page is shown.`, "[flags] TARGET", "[flags] -- command args...")
		all := s.fs.Bool("all", false, "follow nextCursor and list every page")
		rest, code, done := s.parse(args, true)
		if done {
			return code
		}
		if len(rest) > 0 {
			return s.usageError(fmt.Sprintf("unexpected argument %q", rest[0]))
		}
		sess, octx, closeAll, code := s.open(s.clientOptions())
		if sess == nil {
			return code
		}
		defer closeAll()
		res, t, err := l.list(octx, sess, &client.ListOptions{All: *all})
		if err != nil {
			return s.fail(err, false)
		}
		if s.c.json {
			err = writeResult(e.Stdout, res, sess.Era() == client.EraLegacy)
		} else {
			err = t.write(e.Stdout, e.StdoutTTY)
		}
		if err != nil {
			return s.fail(err, false)
		}
		return exitOK
	}
}

// inputSchema is the part of a tool's input schema that shapes arguments.
type inputSchema struct {
	Properties map[string]*propertySchema `json:"properties"`
	Required   []string                   `json:"required"`
}

// propertySchema is one property of an input or elicitation schema.
type propertySchema struct {
	Type        json.RawMessage `json:"type"` // a name or a list of names
	Description string          `json:"description"`
	Title       string          `json:"title"`
	Default     json.RawMessage `json:"default"`
	Enum        []any           `json:"enum"`
	OneOf       []struct {
		Const any    `json:"const"`
		Title string `json:"title"`
	} `json:"oneOf"`
	Items *propertySchema `json:"items"`
}

// types returns the property's type names.
func (p *propertySchema) types() []string {
	if p == nil || len(p.Type) == 0 {
		return nil
	}
	var one string
	if jsonrpc.Unmarshal(p.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = jsonrpc.Unmarshal(p.Type, &many)
	return many
}

// kind returns the type a command-line value is parsed as: "string" when
// the property may be a string (or is unknown), else its first non-null
// type.
func (p *propertySchema) kind() string {
	ts := p.types()
	first := ""
	for _, t := range ts {
		if t == "string" {
			return "string"
		}
		if t != "null" && first == "" {
			first = t
		}
	}
	if first == "" {
		return "string"
	}
	return first
}

func parseInputSchema(raw json.RawMessage) *inputSchema {
	var s inputSchema
	_ = jsonrpc.Unmarshal(raw, &s)
	return &s
}

// requiredArgs returns the required properties of an input schema, sorted.
func requiredArgs(raw json.RawMessage) []string {
	req := append([]string(nil), parseInputSchema(raw).Required...)
	sort.Strings(req)
	return req
}
