package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

const promptAsk = "ask"

func (d *DB) addPrompts(s *server.Server) {
	s.AddPrompt(&protocol.Prompt{
		Name:        promptAsk,
		Title:       "Ask the database",
		Description: "Answer a question about the data with one read-only SQL query, given the schema",
		Arguments: []*protocol.PromptArgument{
			{Name: "question", Description: "The question to answer from the data", Required: true},
			{Name: "tables", Description: "Comma-separated tables to include (default: all)"},
		},
	}, d.getAsk)
	s.AddCompletion(protocol.RefPrompt, promptAsk, d.completeAsk)
}

// splitTables splits a comma-separated list, dropping empty entries.
func splitTables(list string) []string {
	var out []string
	for _, t := range strings.Split(list, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func (d *DB) getAsk(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
	question := strings.TrimSpace(req.Arguments["question"])
	if question == "" {
		return nil, protocol.InvalidParams("the ask prompt needs a question")
	}
	tables, err := d.askTables(ctx, splitTables(req.Arguments["tables"]))
	var unknown *errUnknownTable
	if errors.As(err, &unknown) {
		return nil, protocol.InvalidParams(err.Error())
	}
	if err != nil {
		return nil, err
	}
	dialect := d.dialect.name()
	placeholder := "?1, ?2"
	if dialect == "PostgreSQL" {
		placeholder = "$1, $2"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Answer this question from a %s database:\n\n%s\n\n", dialect, question)
	fmt.Fprintf(&b, "The relevant schema, with row counts and, after --, comments and what the data holds "+
		"(the values of columns that have few, ranges, formats of dates kept as text, units):\n\n")
	for _, t := range tables {
		b.WriteString(t.text())
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Write exactly one read-only SQL statement (a SELECT or WITH ... SELECT) in the %s dialect that answers the question. "+
		"Do not modify data or schema: the connection is read-only and such statements fail. "+
		"Pass literal values as parameters (%s) rather than inlining them, spelled as the data spells them, and mind the units. "+
		"Run it with the query tool, then answer the question from its rows, showing the query you used. "+
		"If the result says it was truncated, aggregate or filter in SQL instead of reading more rows.\n", dialect, placeholder)
	return &protocol.GetPromptResult{
		Description: "Answer with one read-only " + dialect + " query",
		Messages:    []*protocol.PromptMessage{{Role: protocol.RoleUser, Content: &protocol.TextContent{Text: b.String()}}},
	}, nil
}

// completeAsk completes the last entry of tables with table names, and the
// last word of question with table and column names.
func (d *DB) completeAsk(ctx context.Context, req *server.CompleteRequest) (*protocol.Completion, error) {
	v := req.Argument.Value
	switch req.Argument.Name {
	case "tables":
		i := strings.LastIndex(v, ",")
		head, last := v[:i+1], strings.TrimLeft(v[i+1:], " ")
		if i >= 0 {
			head += " "
		}
		chosen := map[string]bool{}
		for _, t := range splitTables(v[:i+1]) {
			chosen[t] = true
		}
		out := []string{}
		for _, t := range withPrefix(tableNames(d.knownTables()), last) {
			if !chosen[t] {
				out = append(out, strings.TrimLeft(head, " ")+t)
			}
		}
		return &protocol.Completion{Values: out}, nil
	case "question":
		i := strings.LastIndexAny(v, " \t\n(,")
		head, word := v[:i+1], v[i+1:]
		if word == "" {
			return &protocol.Completion{Values: []string{}}, nil
		}
		var scope []string
		if req.Context != nil {
			scope = splitTables(req.Context["tables"])
		}
		cands := tableNames(d.knownTables())
		var cols []string
		var err error
		if len(scope) == 1 {
			cols, err = d.columnNames(ctx, scope[0])
		} else {
			cols, err = d.columnNames(ctx, "")
		}
		if err != nil {
			return nil, err
		}
		cands = append(cands, cols...)
		out := []string{}
		seen := map[string]bool{}
		for _, c := range withPrefix(cands, word) {
			if !seen[c] {
				seen[c] = true
				out = append(out, head+c)
			}
		}
		return &protocol.Completion{Values: out}, nil
	}
	return &protocol.Completion{Values: []string{}}, nil
}
