package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/sqlserver"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// serveCore serves core in both eras over HTTP until the test ends and
// returns the endpoint URL.
func serveCore(t *testing.T, core *server.Server) string {
	t.Helper()
	both := legacy.New(core, nil)
	srv := httptest.NewServer(streamable.NewHandler(both, nil))
	t.Cleanup(func() {
		core.Close()
		both.Close()
		srv.Close()
	})
	return srv.URL + "/mcp"
}

// newSQL serves the demo database in process (sqlserver on a temporary
// copy) and returns the endpoint URL.
func newSQL(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.db")
	if err := sqlserver.EnsureDemo(path); err != nil {
		t.Fatal(err)
	}
	d, err := sqlserver.Open(context.Background(), &sqlserver.Options{Path: path, PollInterval: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	core := server.New(protocol.Implementation{Name: "sql", Version: "1.0.0"}, nil)
	d.Register(core)
	return serveCore(t, core)
}

// fixtureRows is a query result with every kind of cell, truncated.
const fixtureRows = `{"columns":[{"name":"id","type":"INTEGER"},{"name":"doc","type":"JSON"},{"name":"tags","type":""},{"name":"photo","type":"BLOB"},{"name":"note","type":"TEXT"}],
"rows":[[1,{"a":1,"b":[true,null]},["x","y"],{"base64":"AAEC"},"pipe | and\nnewline"],[2,null,[],{"base64":"AA=="},"plain"]],
"row_count":2,"truncated":true,"next_cursor":"CUR-1","notice":"result truncated at 2 rows"}`

// confirmSchema asks three yes/no questions: one required with default
// no, one without a default, one with default yes.
const confirmSchema = `{"type":"object","properties":{` +
	`"confirm":{"type":"boolean","title":"Run it","default":false},` +
	`"notify":{"type":"boolean","description":"Send a notice"},` +
	`"verbose":{"type":"boolean","default":true}},"required":["confirm"]}`

// newFixtures serves the tools and resources of the output tests.
func newFixtures(t *testing.T) string {
	t.Helper()
	core := server.New(protocol.Implementation{Name: "fixtures", Version: "1.0.0"}, nil)
	result := func(text, structured string, more ...protocol.Content) func(context.Context, *server.CallRequest, everything.NoArgs) (*protocol.CallToolResult, error) {
		return func(context.Context, *server.CallRequest, everything.NoArgs) (*protocol.CallToolResult, error) {
			content := append([]protocol.Content{&protocol.TextContent{Text: text}}, more...)
			return &protocol.CallToolResult{Content: content, StructuredContent: json.RawMessage(structured)}, nil
		}
	}
	server.AddTool(core, &protocol.Tool{Name: "rows", Description: "A truncated query result"},
		result("the rows as text\n", fixtureRows))
	server.AddTool(core, &protocol.Tool{Name: "one_row", Description: "A query result of one row"},
		result("n\n7\n(1 row)\n", `{"columns":["n"],"rows":[[7]],"row_count":1,"truncated":false}`))
	server.AddTool(core, &protocol.Tool{Name: "same_names", Description: "A query result with a repeated column name"},
		result("", `{"columns":["id","id","id_2"],"rows":[[1,2,3]],"row_count":1,"truncated":false}`))
	server.AddTool(core, &protocol.Tool{Name: "mixed", Description: "A list of flat objects and an image"},
		result(`{"items":[{"a":1,"b":"x"}]}`, `{"items":[{"a":1,"b":"x"}]}`,
			&protocol.ImageContent{Data: "AAEC", MIMEType: "image/png"}))
	server.AddTool(core, &protocol.Tool{Name: "nested", Description: "Structured content that is not a table"},
		result("a summary\n", `{"ok":true,"regions":["eu"]}`))
	server.AddTool(core, &protocol.Tool{Name: "confirm", Description: "Asks yes/no questions"},
		func(ctx context.Context, req *server.CallRequest, _ everything.NoArgs) (string, error) {
			res, err := req.Elicit("confirm", &protocol.ElicitParams{Message: "Go ahead?", RequestedSchema: json.RawMessage(confirmSchema)})
			if err != nil {
				return "", err
			}
			b, err := json.Marshal(res.Content)
			return res.Action + " " + string(b), err
		})
	core.AddResource(&protocol.Resource{URI: "fx://parts", Name: "parts"},
		func(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{
				{URI: "fx://parts/1", MIMEType: "text/plain", Text: "first"},
				{URI: "fx://parts/2", Text: "second\n"},
				{URI: "fx://parts/3", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}},
			}}, nil
		})
	core.AddResource(&protocol.Resource{URI: "fx://blob-first", Name: "blob-first"},
		func(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{
				{URI: "fx://blob-first/1", Blob: []byte("ab")},
				{URI: "fx://blob-first/2", MIMEType: "text/plain", Text: "last"},
			}}, nil
		})
	core.AddResource(&protocol.Resource{URI: "fx://single", Name: "single"}, server.TextResource("text/plain", "only"))
	return serveCore(t, core)
}

// TestCallQuery calls the query tool of the database server and checks
// each rendering of its result, byte for byte, in both eras.
func TestCallQuery(t *testing.T) {
	url := newSQL(t)
	const two = "sql=select id, name from customers order by id limit 2"
	tests := []struct {
		name   string
		tty    bool
		args   []string
		stdout string
	}{
		{"terminal", true, []string{two}, "id  name\n1   Chiara Jansen\n2   Uma Ito\n(2 rows)\n"},
		{"table", false, []string{two, "--format", "table"}, "id  name\n1   Chiara Jansen\n2   Uma Ito\n(2 rows)\n"},
		{"one row", true, []string{"sql=select 'x' as s"}, "s\nx\n(1 row)\n"},
		{"no rows", true, []string{"sql=select id from customers where id < 0"}, "id\n(0 rows)\n"},
		{"csv", false, []string{two, "--format", "csv"}, "id,name\n1,Chiara Jansen\n2,Uma Ito\n"},
		{"csv on a terminal", true, []string{two, "--format", "csv"}, "id,name\n1,Chiara Jansen\n2,Uma Ito\n"},
		{"markdown", false, []string{two, "--format", "markdown"},
			"| id | name |\n| --- | --- |\n| 1 | Chiara Jansen |\n| 2 | Uma Ito |\n\n(2 rows)\n"},
		{"jsonl", false, []string{two, "--format", "jsonl"},
			`{"id":1,"name":"Chiara Jansen"}` + "\n" + `{"id":2,"name":"Uma Ito"}` + "\n"},
		{"binary on a terminal", true, []string{"sql=select x'000102' as b, null as n"}, "b          n\n<3 bytes>  -\n(1 row)\n"},
		{"binary as CSV", false, []string{"sql=select x'000102' as b, null as n", "--format", "csv"}, "b,n\n\"{\"\"base64\"\":\"\"AAEC\"\"}\",\n"},
		{"JSON off a terminal", false, []string{"sql=select 1 as one"},
			"{\n  \"columns\": [\n    {\n      \"name\": \"one\",\n      \"type\": \"\"\n    }\n  ],\n  \"rows\": [\n    [\n      1\n    ]\n  ],\n  \"row_count\": 1,\n  \"truncated\": false\n}\n"},
	}
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					args := append([]string{"call", url, "query", "--era", era}, tt.args...)
					r := mcpkitWith(t, terminal{stdout: tt.tty}, "", args...)
					if r.code != exitOK {
						t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
					}
					if r.stdout != tt.stdout {
						t.Errorf("stdout:\n%q\nwant:\n%q", r.stdout, tt.stdout)
					}
					if r.stderr != "" {
						t.Errorf("stderr %q, want nothing", r.stderr)
					}
				})
			}
		})
	}
}

var cursorHint = regexp.MustCompile(`(?m)^more rows: call again with the same sql and cursor=(\S+)$`)

// TestCallQueryCursor reads a truncated query result on with the cursor
// the notice on stderr names, while stdout holds only the rows.
func TestCallQueryCursor(t *testing.T) {
	url := newSQL(t)
	const sql = "sql=select id from customers order by id"
	r := mcpkit(t, "call", url, "query", sql, "max_rows=2", "--format", "csv")
	if r.code != exitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	if want := "id\n1\n2\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "result truncated at 2 rows") {
		t.Fatalf("stderr is not the notice and the hint: %q", r.stderr)
	}
	m := cursorHint.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("stderr names no cursor: %q", r.stderr)
	}
	r = mcpkit(t, "call", url, "query", sql, "max_rows=2", "cursor="+m[1], "--format", "csv")
	if r.code != exitOK {
		t.Fatalf("reading on: exit %d; stderr %q", r.code, r.stderr)
	}
	if want := "id\n3\n4\n"; r.stdout != want {
		t.Errorf("read on: stdout %q, want %q", r.stdout, want)
	}
}

// TestCallFormats renders the fixtures' structured results: every cell
// kind in every format, lists of flat objects, and results that are not
// tables.
func TestCallFormats(t *testing.T) {
	url := newFixtures(t)
	evURL := newEverything(t)
	const notice = "result truncated at 2 rows\nmore rows: call again with the same sql and cursor=CUR-1\n"
	const image = "[image image/png, 3 bytes]\n"
	tests := []struct {
		name   string
		tty    bool
		args   []string
		stdout string
		stderr string
	}{
		{"table on a terminal", true, []string{url, "rows"},
			"id  doc                      tags       photo      note\n" +
				"1   {\"a\":1,\"b\":[true,null]}  [\"x\",\"y\"]  <3 bytes>  pipe | and newline\n" +
				"2   -                        []         <1 byte>   plain\n" +
				"(2 rows)\n", notice},
		{"csv", false, []string{url, "rows", "--format", "csv"},
			"id,doc,tags,photo,note\n" +
				"1,\"{\"\"a\"\":1,\"\"b\"\":[true,null]}\",\"[\"\"x\"\",\"\"y\"\"]\",\"{\"\"base64\"\":\"\"AAEC\"\"}\",\"pipe | and\nnewline\"\n" +
				"2,,[],\"{\"\"base64\"\":\"\"AA==\"\"}\",plain\n", notice},
		{"markdown", false, []string{url, "rows", "--format", "markdown"},
			"| id | doc | tags | photo | note |\n| --- | --- | --- | --- | --- |\n" +
				"| 1 | {\"a\":1,\"b\":[true,null]} | [\"x\",\"y\"] | <3 bytes> | pipe \\| and<br>newline |\n" +
				"| 2 |  | [] | <1 byte> | plain |\n\n(2 rows)\n", notice},
		{"jsonl", false, []string{url, "rows", "--format", "jsonl"},
			`{"id":1,"doc":{"a":1,"b":[true,null]},"tags":["x","y"],"photo":{"base64":"AAEC"},"note":"pipe | and\nnewline"}` + "\n" +
				`{"id":2,"doc":null,"tags":[],"photo":{"base64":"AA=="},"note":"plain"}` + "\n", notice},
		{"one row, markdown", false, []string{url, "one_row", "--format", "markdown"}, "| n |\n| --- |\n| 7 |\n\n(1 row)\n", ""},
		{"repeated names, jsonl", false, []string{url, "same_names", "--format", "jsonl"}, `{"id":1,"id_3":2,"id_2":3}` + "\n", ""},
		{"repeated names, csv", false, []string{url, "same_names", "--format", "csv"}, "id,id,id_2\n1,2,3\n", ""},
		{"list on a terminal", true, []string{url, "mixed"}, image + "A  B\n1  x\n", ""},
		{"list, jsonl", false, []string{url, "mixed", "--format", "jsonl"}, `{"a":1,"b":"x"}` + "\n", image},
		{"list, markdown on a terminal", true, []string{url, "mixed", "--format", "markdown"}, image + "| a | b |\n| --- | --- |\n| 1 | x |\n", ""},
		{"list off a terminal", false, []string{url, "mixed"}, "{\n  \"items\": [\n    {\n      \"a\": 1,\n      \"b\": \"x\"\n    }\n  ]\n}\n", image},
		{"not a table on a terminal", true, []string{url, "nested"}, "a summary\n",
			"mcpkit call: structuredContent left out on a terminal; --json, or a pipe, prints it\n"},
		{"not a table off a terminal", false, []string{url, "nested"}, "{\n  \"ok\": true,\n  \"regions\": [\n    \"eu\"\n  ]\n}\n", ""},
		{"not a table, csv", false, []string{url, "nested", "--format", "csv"}, "{\n  \"ok\": true,\n  \"regions\": [\n    \"eu\"\n  ]\n}\n",
			"mcpkit call: the result is not a table; --format csv does not apply\n"},
		{"text only, jsonl", false, []string{evURL, "echo", "text=hi", "--format", "jsonl"}, "hi\n",
			"mcpkit call: the result is not a table; --format jsonl does not apply\n"},
		{"text only off a terminal", false, []string{evURL, "echo", "text=hi"}, "hi\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mcpkitWith(t, terminal{stdout: tt.tty}, "", append([]string{"call"}, tt.args...)...)
			if r.code != exitOK {
				t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
			}
			if r.stdout != tt.stdout {
				t.Errorf("stdout:\n%q\nwant:\n%q", r.stdout, tt.stdout)
			}
			if r.stderr != tt.stderr {
				t.Errorf("stderr:\n%q\nwant:\n%q", r.stderr, tt.stderr)
			}
		})
	}
}

// TestUnknownTool calls tools the servers do not have: the message lists
// the tools there are, whether the server's error or the schema lookup
// finds out.
func TestUnknownTool(t *testing.T) {
	url := newFixtures(t)
	const want = `mcpkit call: the server has no tool "nope"; its tools: confirm, mixed, nested, one_row, rows, same_names` + "\n"
	for _, era := range []string{"modern", "legacy"} {
		for _, args := range [][]string{{"nope"}, {"nope", "a=1"}, {"nope", "a:=1"}} {
			t.Run(era+" "+strings.Join(args, " "), func(t *testing.T) {
				r := mcpkit(t, append([]string{"call", url, "--era", era}, args...)...)
				if r.code != exitFailed {
					t.Fatalf("exit %d, want %d; stderr %q", r.code, exitFailed, r.stderr)
				}
				if r.stderr != want {
					t.Errorf("stderr %q, want %q", r.stderr, want)
				}
			})
		}
	}
	// The everything server has more tools than the message lists.
	evURL := newEverything(t)
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			r := mcpkit(t, withTarget("call", []string{"no_such_tool"}, c.args(evURL))...)
			if r.code != exitFailed {
				t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
			}
			// In alphabetical order (the stdio server has the task
			// fixtures too: confirm_delete, failing_job, greet, ...).
			const prefix = `mcpkit call: the server has no tool "no_such_tool"; its tools: `
			if !strings.HasPrefix(r.stderr, prefix) || !strings.Contains(r.stderr, " echo, ") || !strings.HasSuffix(r.stderr, ", …\n") {
				t.Errorf("stderr %q", r.stderr)
			}
			if n := strings.Count(r.stderr, ", "); n != maxToolNames {
				t.Errorf("%d names listed, want %d: %q", n, maxToolNames, r.stderr)
			}
		})
	}
}

func TestNoSuchTool(t *testing.T) {
	tools := func(n int) []*protocol.Tool {
		var out []*protocol.Tool
		for i := n; i > 0; i-- {
			out = append(out, &protocol.Tool{Name: fmt.Sprintf("t%02d", i)})
		}
		return out
	}
	names := func(from, to int) string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("t%02d", i))
		}
		return strings.Join(out, ", ")
	}
	tests := []struct {
		tools []*protocol.Tool
		want  string
	}{
		{nil, `the server has no tool "x"; it has no tools`},
		{tools(1), `the server has no tool "x"; its tools: t01`},
		{tools(3), `the server has no tool "x"; its tools: t01, t02, t03`},
		{tools(20), `the server has no tool "x"; its tools: ` + names(1, 20)},
		{tools(21), `the server has no tool "x"; its tools: ` + names(1, 20) + ", …"},
	}
	for _, tt := range tests {
		if got := noSuchTool("x", tt.tools); got != tt.want {
			t.Errorf("%d tools: %q, want %q", len(tt.tools), got, tt.want)
		}
	}
}

// TestRead prints resources of one and of several parts, on a terminal
// and off it.
func TestRead(t *testing.T) {
	url := newFixtures(t)
	tests := []struct {
		name   string
		tty    bool
		uri    string
		stdout string
	}{
		{"parts", false, "fx://parts",
			"--- fx://parts/1 (text/plain) ---\nfirst\n--- fx://parts/2 ---\nsecond\n--- fx://parts/3 (application/octet-stream) ---\n\x00\x01\x02"},
		{"parts on a terminal", true, "fx://parts",
			"--- fx://parts/1 (text/plain) ---\nfirst\n--- fx://parts/2 ---\nsecond\n--- fx://parts/3 (application/octet-stream) ---\n[blob fx://parts/3 application/octet-stream, 3 bytes]\n"},
		{"binary part first", false, "fx://blob-first", "--- fx://blob-first/1 ---\nab\n--- fx://blob-first/2 (text/plain) ---\nlast"},
		{"binary part first on a terminal", true, "fx://blob-first",
			"--- fx://blob-first/1 ---\n[blob fx://blob-first/1 -, 2 bytes]\n--- fx://blob-first/2 (text/plain) ---\nlast\n"},
		{"one part", false, "fx://single", "only"},
		{"one part on a terminal", true, "fx://single", "only\n"},
	}
	for _, era := range []string{"modern", "legacy"} {
		for _, tt := range tests {
			t.Run(era+" "+tt.name, func(t *testing.T) {
				r := mcpkitWith(t, terminal{stdout: tt.tty}, "", "read", url, tt.uri, "--era", era)
				if r.code != exitOK {
					t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
				}
				if r.stdout != tt.stdout {
					t.Errorf("stdout:\n%q\nwant:\n%q", r.stdout, tt.stdout)
				}
			})
		}
	}
}

// TestReadNotFound reads a resource the server does not have, which the
// eras answer with different error codes.
func TestReadNotFound(t *testing.T) {
	url := newEverything(t)
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			r := mcpkit(t, withTarget("read", []string{"test://nowhere"}, c.args(url))...)
			if r.code != exitFailed {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, exitFailed, r.stderr)
			}
			if want := "mcpkit read: resource not found: test://nowhere\n"; r.stderr != want {
				t.Errorf("stderr %q, want %q", r.stderr, want)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
}

// TestYesNoQuestions answers the yes/no questions of an elicitation on
// the terminal and with --accept-defaults.
func TestYesNoQuestions(t *testing.T) {
	url := newFixtures(t)
	evURL := newEverything(t)
	const prompts = "Go ahead?\n  confirm — Run it [y/N, required]:   notify — Send a notice [y/n]:   verbose [Y/n]: "
	tests := []struct {
		name   string
		args   []string
		tty    terminal
		stdin  string
		stdout string
		stderr string
	}{
		{"defaults on the terminal", []string{url, "confirm"}, terminal{stdin: true}, "\n\n\n",
			`accept {"confirm":false,"notify":false,"verbose":true}` + "\n", prompts},
		{"answers on the terminal", []string{url, "confirm"}, terminal{stdin: true}, "YES\nN\nfalse\n",
			`accept {"confirm":true,"notify":false,"verbose":false}` + "\n", prompts},
		{"short answers", []string{url, "confirm"}, terminal{stdin: true}, "y\nyes\nno\n",
			`accept {"confirm":true,"notify":true,"verbose":false}` + "\n", prompts},
		{"asked again", []string{url, "confirm"}, terminal{stdin: true}, "maybe\ntrue\n\n\n",
			`accept {"confirm":true,"notify":false,"verbose":true}` + "\n",
			"Go ahead?\n  confirm — Run it [y/N, required]:   (answer y or n)\n  confirm — Run it [y/N, required]:   notify — Send a notice [y/n]:   verbose [Y/n]: "},
		{"accept defaults", []string{url, "confirm", "--accept-defaults"}, terminal{}, "",
			`accept {"confirm":false,"notify":false,"verbose":true}` + "\n", ""},
		{"required without a default", []string{evURL, "test_input_required_result_request_state"}, terminal{stdin: true}, "\nn\n",
			"state-ok: not confirmed\n", "Please confirm\n  ok [y/n, required]:   (required)\n  ok [y/n, required]: "},
		{"required without a default, defaults", []string{evURL, "test_input_required_result_request_state", "--accept-defaults"}, terminal{}, "",
			"state-ok: not confirmed\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mcpkitWith(t, tt.tty, tt.stdin, append([]string{"call"}, tt.args...)...)
			if r.code != exitOK {
				t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
			}
			if r.stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
			}
			if r.stderr != tt.stderr {
				t.Errorf("stderr %q, want %q", r.stderr, tt.stderr)
			}
		})
	}
}

func TestFieldPrompt(t *testing.T) {
	tests := []struct {
		schema   string
		required bool
		want     string
	}{
		{`{"type":"boolean"}`, false, "f [y/n]"},
		{`{"type":"boolean"}`, true, "f [y/n, required]"},
		{`{"type":"boolean","default":false}`, false, "f [y/N]"},
		{`{"type":"boolean","default":true,"title":"Go"}`, true, "f — Go [Y/n, required]"},
		{`{"type":["boolean","null"],"default":true}`, false, "f [Y/n]"},
		{`{"type":"string","default":"true"}`, false, `f [string, default "true"]`},
		{`{"type":"integer","default":3}`, true, "f [integer, required, default 3]"},
		{`{"type":"string","enum":["a","b"]}`, false, "f [string, one of a|b]"},
		{`{"type":"array","items":{"type":"string","enum":["a","b"]}}`, false, "f [list of string, comma-separated, any of a|b]"},
	}
	for _, tt := range tests {
		var p propertySchema
		if err := json.Unmarshal([]byte(tt.schema), &p); err != nil {
			t.Fatal(err)
		}
		if got := fieldPrompt("f", &p, tt.required); got != tt.want {
			t.Errorf("%s (required %v): %q, want %q", tt.schema, tt.required, got, tt.want)
		}
	}
}

// TestAcceptDefaultsHelp checks that the help says what --accept-defaults
// answers.
func TestAcceptDefaultsHelp(t *testing.T) {
	for _, sub := range []string{"call", "read", "prompt"} {
		r := mcpkit(t, sub, "--help")
		flat := strings.Join(strings.Fields(r.stdout), " ")
		for _, w := range []string{
			"-accept-defaults answer every question of the server (elicitation) with the form's defaults: each field's default, else its first choice, else an empty value",
			"a yes/no question without a default is answered no",
		} {
			if !strings.Contains(flat, w) {
				t.Errorf("%s --help does not say %q:\n%s", sub, w, r.stdout)
			}
		}
	}
	r := mcpkit(t, "call", "--help")
	flat := strings.Join(strings.Fields(r.stdout), " ")
	if w := "so it never confirms anything the server does not confirm by default"; !strings.Contains(flat, w) {
		t.Errorf("call --help does not say %q", w)
	}
}
