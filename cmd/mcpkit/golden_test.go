package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// golden compares got with testdata/NAME.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the tests with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// stockItem and stock are the structured result of the inventory tool.
type stockItem struct {
	SKU   string `json:"sku"`
	Name  string `json:"name"`
	Count int    `json:"count"`
}

type stock struct {
	Items []stockItem `json:"items"`
}

type health struct {
	OK      bool     `json:"ok"`
	Regions []string `json:"regions"`
}

// newStructured serves tools with structured results.
func newStructured(t *testing.T) string {
	t.Helper()
	core := server.New(protocol.Implementation{Name: "structured", Version: "1.0.0"}, nil)
	server.AddTool(core, &protocol.Tool{Name: "inventory", Description: "Lists the stock"},
		func(ctx context.Context, req *server.CallRequest, _ everything.NoArgs) (stock, error) {
			return stock{Items: []stockItem{{"A-1", "anvil", 3}, {"B-22", "bellows", 12}}}, nil
		})
	server.AddTool(core, &protocol.Tool{Name: "health", Description: "Reports the service health"},
		func(ctx context.Context, req *server.CallRequest, _ everything.NoArgs) (health, error) {
			return health{OK: true, Regions: []string{"eu", "us"}}, nil
		})
	return serveCore(t, core)
}

func TestGolden(t *testing.T) {
	url := newEverything(t)
	structured := newStructured(t)
	tty := terminal{stdout: true}
	tests := []struct {
		name string
		tty  terminal
		args []string
	}{
		{"discover", tty, []string{"discover", url, "--era", "modern"}},
		{"discover.json", terminal{}, []string{"discover", url, "--era", "modern", "--json"}},
		{"discover-legacy", tty, []string{"discover", url, "--era", "legacy"}},
		{"discover-legacy.json", terminal{}, []string{"discover", url, "--era", "legacy", "--json"}},
		{"tools", tty, []string{"tools", url, "--all"}},
		{"tools.json", terminal{}, []string{"tools", url, "--all", "--json"}},
		{"call-text", tty, []string{"call", url, "echo", "text=Hello, world"}},
		{"call-text.json", terminal{}, []string{"call", url, "echo", "text=Hello, world", "--json"}},
		{"call-text-legacy.json", terminal{}, []string{"call", url, "echo", "text=Hello, world", "--json", "--era", "legacy"}},
		{"tools-legacy.json", terminal{}, []string{"tools", url, "--json", "--era", "legacy"}},
		{"call-structured", tty, []string{"call", structured, "inventory"}},
		{"call-structured-pipe", terminal{}, []string{"call", structured, "inventory"}},
		{"call-structured.json", terminal{}, []string{"call", structured, "inventory", "--json"}},
		{"call-structured-object", tty, []string{"call", structured, "health"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mcpkitWith(t, tt.tty, "", tt.args...)
			if r.code != exitOK {
				t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
			}
			golden(t, tt.name, r.stdout)
		})
	}
	for _, tt := range []struct {
		name string
		own  []string
	}{
		{"listen", []string{"--era", "modern"}},
		{"listen.json", []string{"--era", "modern", "--json"}},
		{"listen-legacy", []string{"--era", "legacy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := listenUntil(t, append([]string{"listen", url, "--tools"}, tt.own...),
				[]string{"call", url, "test_trigger_tool_change", "--era", tt.own[1]})
			golden(t, tt.name, strings.SplitAfterN(r.stdout, "\n", 2)[0])
		})
	}
}
