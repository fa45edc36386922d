package sqlserver

import (
	"strings"
	"testing"
	"time"
)

// testReadCache: the schema overview and a table's description are
// computed once and served again until change detection sees the data
// change; then they are computed anew and show it.
func testReadCache(t *testing.T, e *env) {
	d, s := e.open(t, func(o *Options) { o.PollInterval = 20 * time.Millisecond })
	misses := func() int {
		d.kept.mu.Lock()
		defer d.kept.mu.Unlock()
		return d.kept.misses
	}
	readSchema := func() string {
		r := mustHandle(t, s, "resources/read", map[string]any{"uri": SchemaURI})
		text, _ := r.Contents[1]["text"].(string)
		return text
	}
	first := readSchema()
	callTool(t, s, "describe_table", map[string]any{"table": "t"})
	before := misses()
	if again := readSchema(); again != first {
		t.Errorf("the schema changed with no change in the database:\n%s\n%s", first, again)
	}
	callTool(t, s, "describe_table", map[string]any{"table": "t"})
	if n := misses(); n != before {
		t.Errorf("reading again computed %d more times, want none", n-before)
	}
	if !strings.Contains(first, "(3 rows)") {
		t.Fatalf("schema text without t's 3 rows:\n%s", first)
	}
	mustExec(t, e.write, "INSERT INTO t (id, name) VALUES (40, 'forty')")
	t.Cleanup(func() { mustExec(t, e.write, "DELETE FROM t WHERE id = 40") })
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(readSchema(), "(4 rows)") {
		if time.Now().After(deadline) {
			t.Fatal("the schema overview still shows 3 rows 10s after a fourth was added")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := callTool(t, s, "describe_table", map[string]any{"table": "t"}); !strings.Contains(r.text(), "(4 rows)") {
		t.Errorf("describe_table after the change:\n%s", r.text())
	}
}
