package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// Several databases in one server: RegisterAll serves each under its
// Options.Name. The tools (query, describe_table, explain, and execute
// when a database allows writes) and the ask prompt are served once and
// take a database argument naming one (an enum of the names); each
// database keeps its own limits, role checks and change detection, and
// its resources are under sql://{name}/ (sql://{name}/schema,
// sql://{name}/table/{table}). A cursor belongs to its database.

// validName is what a database may be named: it appears in URIs and
// arguments.
var validName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,62}$`)

// ValidName reports whether name can name a database served beside
// others: a letter, then letters, digits, '_' or '-', at most 63 in all.
func ValidName(name string) bool { return validName.MatchString(name) }

// RegisterAll adds the databases to s. One database is registered as
// Register does; several must each have a distinct valid Options.Name,
// and are served as described above. It panics on a name that is missing,
// invalid or repeated, as server registration does on an invalid
// definition.
func RegisterAll(s *server.Server, dbs ...*DB) {
	if len(dbs) == 1 {
		dbs[0].Register(s)
		return
	}
	byName := map[string]*DB{}
	var names, writable []string
	for _, d := range dbs {
		n := d.opts.Name
		if !ValidName(n) {
			panic(fmt.Sprintf("sqlserver: RegisterAll: database name %q is not a name (letters, digits, _ and -)", n))
		}
		if byName[n] != nil {
			panic(fmt.Sprintf("sqlserver: RegisterAll: two databases named %q", n))
		}
		byName[n] = d
		names = append(names, n)
		if d.rw != nil {
			writable = append(writable, n)
		}
	}
	sort.Strings(names)
	for _, d := range dbs {
		d.served = d.opts.Name
		d.mu.Lock()
		d.servers = append(d.servers, s)
		tables := d.tables
		d.mu.Unlock()
		d.addResources(s, tables)
	}
	dbs[0].addView(s)
	m := &multi{byName: byName}
	m.addTools(s, names, writable)
	m.addPrompt(s, names)
}

type multi struct {
	byName map[string]*DB
}

// db returns the database named, or an error listing the names.
func (m *multi) db(name string) (*DB, error) {
	if d, ok := m.byName[name]; ok {
		return d, nil
	}
	names := make([]string, 0, len(m.byName))
	for n := range m.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown database %q (this server serves %s)", name, strings.Join(names, ", "))
}

type dbQueryArgs struct {
	Database string            `json:"database" description:"The database to query"`
	SQL      string            `json:"sql" description:"One read-only SQL statement" jsonschema:"minLength=1"`
	Params   []json.RawMessage `json:"params,omitempty" description:"Positional parameters: ? or ?1 in SQLite, $1, $2 in PostgreSQL"`
	MaxRows  int               `json:"max_rows,omitempty" description:"Most rows to return; capped by the database's limit" jsonschema:"minimum=1"`
	Cursor   string            `json:"cursor,omitempty" description:"The next_cursor of an earlier truncated result of the same database, sql and params, to read the rows after it"`
}

type dbTableArgs struct {
	Database string `json:"database" description:"The database the table is in"`
	Table    string `json:"table" description:"Table or view name (schema.table where several schemas are served)" jsonschema:"minLength=1"`
}

type dbSearchArgs struct {
	Database string `json:"database" description:"The database to search"`
	searchArgs
}

type dbExplainArgs struct {
	Database string            `json:"database" description:"The database to plan it in"`
	SQL      string            `json:"sql" description:"The statement to explain (it is planned, not run)" jsonschema:"minLength=1"`
	Params   []json.RawMessage `json:"params,omitempty" description:"Positional parameters, as for query"`
}

type dbExecuteArgs struct {
	Database string            `json:"database" description:"The database to change"`
	SQL      string            `json:"sql" description:"The statement to run after the user confirms it" jsonschema:"minLength=1"`
	Params   []json.RawMessage `json:"params,omitempty" description:"Positional parameters, as for query"`
}

// withDatabaseEnum returns the input schema of In with its database
// property limited to names.
func withDatabaseEnum[In any](names []string) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(mustSchema[In](), &m); err != nil {
		panic("sqlserver: " + err.Error())
	}
	props, _ := m["properties"].(map[string]any)
	db, _ := props["database"].(map[string]any)
	db["enum"] = names
	b, err := json.Marshal(m)
	if err != nil {
		panic("sqlserver: " + err.Error())
	}
	return b
}

// summary describes the databases for the tools' descriptions.
func (m *multi) summary(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		d := m.byName[n]
		parts[i] = fmt.Sprintf("%s (%s; at most %d rows, %d bytes; statements time out after %s)", n, d.dialect.name(),
			d.opts.MaxRows, d.opts.MaxResultBytes, d.opts.StatementTimeout)
	}
	return strings.Join(parts, ", ")
}

func (m *multi) addTools(s *server.Server, names, writable []string) {
	ro := &protocol.ToolAnnotations{ReadOnlyHint: boolp(true), OpenWorldHint: boolp(false)}
	server.AddTool(s, &protocol.Tool{
		Name: toolQuery,
		Description: "Runs one read-only SQL statement on one of the databases and returns its rows; the databases refuse writes. " +
			"Databases: " + m.summary(names) + ". A truncated result carries next_cursor to read on.",
		InputSchema:  withDatabaseEnum[dbQueryArgs](names),
		OutputSchema: queryOutputSchema(),
		Annotations:  ro,
		Meta:         queryToolMeta(),
	}, func(ctx context.Context, req *server.CallRequest, in dbQueryArgs) (*protocol.CallToolResult, error) {
		d, err := m.db(in.Database)
		if err != nil {
			return nil, err
		}
		return d.callQuery(ctx, req, queryArgs{SQL: in.SQL, Params: in.Params, MaxRows: in.MaxRows, Cursor: in.Cursor})
	})
	server.AddTool(s, &protocol.Tool{
		Name:        toolDescribe,
		Description: "Describes a table or view of one of the databases: columns, types, nullability, primary key, foreign keys, indexes, row count and sample rows.",
		InputSchema: withDatabaseEnum[dbTableArgs](names),
		Annotations: ro,
	}, func(ctx context.Context, req *server.CallRequest, in dbTableArgs) (*protocol.CallToolResult, error) {
		d, err := m.db(in.Database)
		if err != nil {
			return nil, err
		}
		return d.callDescribe(ctx, req, tableArgs{Table: in.Table})
	})
	server.AddTool(s, &protocol.Tool{
		Name:        toolSearch,
		Description: "Finds tables (or columns) of one of the databases by name pattern, a page at a time, with names only, a summary (columns) or full detail.",
		InputSchema: withDatabaseEnum[dbSearchArgs](names),
		Annotations: ro,
	}, func(ctx context.Context, req *server.CallRequest, in dbSearchArgs) (*protocol.CallToolResult, error) {
		d, err := m.db(in.Database)
		if err != nil {
			return nil, err
		}
		return d.callSearch(ctx, req, in.searchArgs)
	})
	server.AddTool(s, &protocol.Tool{
		Name:        toolExplain,
		Description: "Shows the query plan of a statement in one of the databases without running it.",
		InputSchema: withDatabaseEnum[dbExplainArgs](names),
		Annotations: ro,
	}, func(ctx context.Context, req *server.CallRequest, in dbExplainArgs) (string, error) {
		d, err := m.db(in.Database)
		if err != nil {
			return "", err
		}
		return d.callExplain(ctx, req, explainArgs{SQL: in.SQL, Params: in.Params})
	})
	if len(writable) == 0 {
		return
	}
	var opts []server.FeatureOption
	scopes := map[string]bool{}
	for _, n := range writable {
		if sc := m.byName[n].opts.WriteScope; sc != "" && !scopes[sc] {
			scopes[sc] = true
			opts = append(opts, server.RequireScopes(sc))
		}
	}
	sort.Strings(writable)
	server.AddTool(s, &protocol.Tool{
		Name: toolExecute,
		Description: "Runs a statement that changes one of the databases " + strings.Join(writable, ", ") + " (INSERT, UPDATE, DELETE, DDL). " +
			"The user is shown the exact statement, its parameters and the triggers it fires, and must confirm; nothing runs otherwise.",
		InputSchema: withDatabaseEnum[dbExecuteArgs](writable),
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: boolp(false), DestructiveHint: boolp(true), OpenWorldHint: boolp(false)},
	}, func(ctx context.Context, req *server.CallRequest, in dbExecuteArgs) (*protocol.CallToolResult, error) {
		d, err := m.db(in.Database)
		if err != nil {
			return nil, err
		}
		if d.rw == nil {
			return nil, fmt.Errorf("the database %s does not allow writes", in.Database)
		}
		return d.callExecute(ctx, req, executeArgs{SQL: in.SQL, Params: in.Params})
	}, opts...)
}

func (m *multi) addPrompt(s *server.Server, names []string) {
	s.AddPrompt(&protocol.Prompt{
		Name:        promptAsk,
		Title:       "Ask a database",
		Description: "Answer a question about the data of one database with one read-only SQL query, given its schema",
		Arguments: []*protocol.PromptArgument{
			{Name: "database", Description: "The database to ask: " + strings.Join(names, ", "), Required: true},
			{Name: "question", Description: "The question to answer from the data", Required: true},
			{Name: "tables", Description: "Comma-separated tables to include (default: all)"},
		},
	}, func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
		d, err := m.db(req.Arguments["database"])
		if err != nil {
			return nil, protocol.InvalidParams(err.Error())
		}
		return d.getAsk(ctx, req)
	})
	s.AddCompletion(protocol.RefPrompt, promptAsk, func(ctx context.Context, req *server.CompleteRequest) (*protocol.Completion, error) {
		if req.Argument.Name == "database" {
			return &protocol.Completion{Values: withPrefix(names, req.Argument.Value)}, nil
		}
		var name string
		if req.Context != nil {
			name = req.Context["database"]
		}
		d, ok := m.byName[name]
		if !ok {
			return &protocol.Completion{Values: []string{}}, nil
		}
		return d.completeAsk(ctx, req)
	})
}
