package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

const (
	wantViewMeta = `{"ui":{"csp":{"baseUriDomains":[],"connectDomains":[],"frameDomains":[],"resourceDomains":[]},"prefersBorder":true}}`
	wantToolMeta = `{"ui":{"resourceUri":"ui://mcpkit/query-result.html","visibility":["model","app"]},"ui/resourceUri":"ui://mcpkit/query-result.html"}`
)

// rawResult sends one modern request to s and returns its result as sent.
func rawResult(t *testing.T, s *server.Server, method, params string) string {
	t.Helper()
	p := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "" {
		p += "," + params
	}
	p += "}"
	resp := serveOne(s, context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: method, Params: json.RawMessage(p)}, &collector{})
	if resp == nil || resp.Error != nil {
		t.Fatalf("%s %s: %+v", method, params, resp)
	}
	return string(resp.Result)
}

func metaJSON(t *testing.T, m any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestQueryViewResource(t *testing.T) {
	_, s := sqliteEnv(t).open(t, nil)
	var listed map[string]any
	for _, r := range mustHandle(t, s, "resources/list", nil).Resources {
		if r["uri"] == QueryViewURI {
			listed = r
		}
	}
	if listed == nil {
		t.Fatalf("%s not listed", QueryViewURI)
	}
	if listed["mimeType"] != "text/html;profile=mcp-app" || listed["name"] == "" {
		t.Errorf("listed as %v", listed)
	}
	if got := metaJSON(t, listed["_meta"]); got != wantViewMeta {
		t.Errorf("listed _meta = %s, want %s", got, wantViewMeta)
	}
	r := mustHandle(t, s, "resources/read", map[string]any{"uri": QueryViewURI})
	if len(r.Contents) != 1 {
		t.Fatalf("contents: %v", r.Contents)
	}
	c := r.Contents[0]
	if c["uri"] != QueryViewURI || c["mimeType"] != "text/html;profile=mcp-app" || c["text"] != queryView {
		t.Errorf("read: uri %v, mimeType %v, %d characters", c["uri"], c["mimeType"], len(fmt.Sprint(c["text"])))
	}
	if got := metaJSON(t, c["_meta"]); got != wantViewMeta {
		t.Errorf("contents _meta = %s, want %s", got, wantViewMeta)
	}
	if r.CacheScope != "public" || r.TTLMs != viewCache.TTLMs {
		t.Errorf("cache hints %d %s", r.TTLMs, r.CacheScope)
	}
}

func TestQueryToolDeclaresView(t *testing.T) {
	_, s := sqliteEnv(t).open(t, nil)
	seen := false
	for _, tool := range mustHandle(t, s, "tools/list", nil).Tools {
		if tool["name"] != toolQuery {
			if m, ok := tool["_meta"].(map[string]any); ok && (m["ui"] != nil || m["ui/resourceUri"] != nil) {
				t.Errorf("%s declares a view: %v", tool["name"], m)
			}
			continue
		}
		seen = true
		if got := metaJSON(t, tool["_meta"]); got != wantToolMeta {
			t.Errorf("query _meta = %s, want %s", got, wantToolMeta)
		}
	}
	if !seen {
		t.Fatal("no query tool")
	}
}

func TestUIExtensionAdvertised(t *testing.T) {
	_, s := sqliteEnv(t).open(t, nil)
	var d struct {
		Capabilities protocol.ServerCapabilities `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(rawResult(t, s, "server/discover", "")), &d); err != nil {
		t.Fatal(err)
	}
	settings, ok := d.Capabilities.Extensions["io.modelcontextprotocol/ui"]
	if !ok || len(settings) != 0 {
		t.Errorf("extensions = %v, want io.modelcontextprotocol/ui with no settings", d.Capabilities.Extensions)
	}
}

// TestQueryResultUnchanged: results are what they were before the view,
// for every client: the same text and structuredContent, nothing added.
// The view's next-page call (the arguments it was shown plus cursor) reads
// on.
func TestQueryResultUnchanged(t *testing.T) {
	_, s := sqliteEnv(t).open(t, nil)
	got := rawResult(t, s, "tools/call", `"name":"query","arguments":{"sql":"SELECT id, name FROM t ORDER BY id"}`)
	want := `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sql-test","version":"1.0.0"}},` +
		`"content":[{"type":"text","text":"id | name\n---+------\n1  | one\n2  | two\n3  | three\n(3 rows)\ncolumn types: INTEGER, TEXT\n"}],` +
		`"structuredContent":{"columns":[{"name":"id","type":"INTEGER"},{"name":"name","type":"TEXT"}],"rows":[[1,"one"],[2,"two"],[3,"three"]],"row_count":3,"truncated":false}}`
	if got != want {
		t.Errorf("result\n%s\nwant\n%s", got, want)
	}

	args := `{"sql":"SELECT id, name FROM t WHERE id > ? ORDER BY id","params":[1],"max_rows":1}`
	got = rawResult(t, s, "tools/call", `"name":"query","arguments":`+args)
	cursor := regexp.MustCompile(`"next_cursor":"([^"]+)"`).FindStringSubmatch(got)
	if cursor == nil {
		t.Fatalf("no next_cursor: %s", got)
	}
	notice := "result truncated at 1 rows (max_rows argument; pass a larger max_rows, up to the server's limit of 1000); " +
		"pass next_cursor as cursor with the same sql and params to read on (the statement runs again and the rows " +
		"already returned are skipped, so give it an ORDER BY for a stable order)"
	want = `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sql-test","version":"1.0.0"}},` +
		`"content":[{"type":"text","text":"id | name\n---+-----\n2  | two\n(1 row; truncated, more rows follow)\ncolumn types: INTEGER, TEXT\n` + notice +
		`\nnext_cursor: ` + cursor[1] + `\nTo read on, call query again with the same sql and params and cursor set to that next_cursor.\n"}],` +
		`"structuredContent":{"columns":[{"name":"id","type":"INTEGER"},{"name":"name","type":"TEXT"}],"rows":[[2,"two"]],"row_count":1,"truncated":true,` +
		`"next_cursor":"` + cursor[1] + `","notice":"` + notice + `"}}`
	if got != want {
		t.Errorf("truncated result\n%s\nwant\n%s", got, want)
	}

	next := strings.TrimSuffix(args, "}") + `,"cursor":"` + cursor[1] + `"}`
	var page struct {
		StructuredContent wireQuery `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(rawResult(t, s, "tools/call", `"name":"query","arguments":`+next)), &page); err != nil {
		t.Fatal(err)
	}
	if q := page.StructuredContent; q.Offset != 1 || q.RowCount != 1 || q.Truncated || metaJSON(t, q.Rows) != `[[3,"three"]]` {
		t.Errorf("next page: %+v", q)
	}
}

// TestQueryViewPage: the page is self-contained (no URL it could load,
// nothing fetched from another origin), small, and has the hooks and
// messages the view is known by.
func TestQueryViewPage(t *testing.T) {
	if n := len(queryView); n > 25*1024 {
		t.Errorf("the view is %d bytes, over its 25 KiB budget", n)
	}
	if !strings.HasPrefix(queryView, "<!doctype html>") {
		t.Error("not an HTML5 document")
	}
	lower := strings.ToLower(queryView)
	for _, bad := range []string{"http:", "https:", "@import", "url(", "<link", "<iframe", "<img", "fetch(", "xmlhttprequest", "websocket", "eventsource"} {
		if strings.Contains(lower, bad) {
			t.Errorf("the view contains %q", bad)
		}
	}
	if m := regexp.MustCompile(`(?i)\b(src|href|action|srcset)\s*=`).FindString(queryView); m != "" {
		t.Errorf("the view loads something: %q", m)
	}
	for _, hook := range []string{`<table id="rows">`, `id="sql"`, `id="next"`, `id="prev"`, `id="status"`, `id="error"`, `id="chart"`, `data-column`} {
		if !strings.Contains(queryView, hook) {
			t.Errorf("the view lacks %s", hook)
		}
	}
	for _, m := range []string{`"2026-01-26"`, `"ui/initialize"`, `"ui/notifications/initialized"`, `"ui/notifications/tool-input"`,
		`"ui/notifications/tool-result"`, `"ui/notifications/tool-cancelled"`, `"ui/resource-teardown"`, `"tools/call"`, `"ui/notifications/size-changed"`} {
		if !strings.Contains(queryView, m) {
			t.Errorf("the view lacks %s", m)
		}
	}
}
