package check

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixedReport has one result of each status.
var fixedReport = &Report{
	Target: "http://127.0.0.1:3001/mcp",
	Era:    eraDual,
	Results: []Result{
		{ID: "discover.result-type", Title: `server/discover result has resultType "complete"`, Status: Pass,
			Sent: "server/discover", Got: `resultType "complete"`, Spec: specDiscover},
		{ID: "discover.server-info", Title: "_meta carries io.modelcontextprotocol/serverInfo with name and version", Status: Warn,
			Sent: "server/discover", Got: "no io.modelcontextprotocol/serverInfo", Spec: specDiscover,
			Detail: "servers SHOULD identify themselves in _meta io.modelcontextprotocol/serverInfo"},
		{ID: "http.origin-rejected", Title: "a foreign Origin gets 403", Status: Fail,
			Sent: "POST server/discover, Origin: http://evil.example.com", Got: "HTTP 200 application/json, result",
			Spec: specHTTP + "#security-warning", Detail: "want HTTP 403 Forbidden"},
		{ID: "http.host-rebinding", Title: "a foreign Host on a loopback address gets 403", Status: Skip,
			Spec: specHTTP + "#security-warning", Detail: "the target is not a loopback address"},
	},
	Pass: 1, Warn: 1, Fail: 1, Skip: 1,
}

func TestGolden(t *testing.T) {
	tests := []struct {
		file  string
		write func(*Report, *bytes.Buffer) error
	}{
		{"report.txt", func(r *Report, b *bytes.Buffer) error { return r.WriteText(b) }},
		{"report.json", func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) }},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(fixedReport, &b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.file)
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", tc.file, b.Bytes(), want)
			}
		})
	}
}

func TestOK(t *testing.T) {
	tests := []struct {
		r    Report
		want bool
	}{
		{Report{Pass: 3, Warn: 1, Skip: 2}, true},
		{Report{Pass: 3, Fail: 1}, false},
	}
	for _, tc := range tests {
		if got := tc.r.OK(); got != tc.want {
			t.Errorf("%+v OK() = %v, want %v", tc.r, got, tc.want)
		}
	}
}
