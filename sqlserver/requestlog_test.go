package sqlserver

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRequestLog: with RequestLog, every call is one structured line with
// the tool, a digest of the statement, the rows, the duration and the
// outcome, and never the statement's text or its parameters.
func TestRequestLog(t *testing.T) {
	var buf lockedBuf
	_, s := sqliteEnv(t).open(t, func(o *Options) { o.RequestLog = slog.New(slog.NewJSONHandler(&buf, nil)) })
	callTool(t, s, "query", map[string]any{"sql": "SELECT id FROM t WHERE name <> 'sekrit-literal' AND id > ?", "params": []any{"4242424"}})
	callTool(t, s, "query", map[string]any{"sql": "SELECT id FROM t", "max_rows": 1})
	callTool(t, s, "query", map[string]any{"sql": "SELECT nope FROM t"})
	callTool(t, s, "describe_table", map[string]any{"table": "t"})
	out := buf.String()
	for _, secret := range []string{"sekrit-literal", "4242424", "SELECT"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log shows %q:\n%s", secret, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), out)
	}
	want := []struct {
		tool, outcome string
		rows          float64
	}{{"query", "ok", 0}, {"query", "truncated", 1}, {"query", "error", 0}, {"describe_table", "ok", 0}}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["tool"] != want[i].tool || m["outcome"] != want[i].outcome || m["rows"] != want[i].rows || m["duration"] == nil {
			t.Errorf("line %d: %s", i, l)
		}
		if _, ok := m["principal"]; !ok {
			t.Errorf("line %d has no principal: %s", i, l)
		}
		if want[i].tool == "query" && len(m["statement"].(string)) != 16 {
			t.Errorf("line %d: statement digest %v", i, m["statement"])
		}
	}
}
