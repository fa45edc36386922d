package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport/sse"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// eraServerEnv makes the test binary an stdio server of one kind (see
// eraServer), for the era tests' server commands.
const eraServerEnv = "MCPKIT_TEST_ERA_SERVER"

// eraServer returns a server with one tool, echo, serving the eras and
// revisions kind names: "modern" (modern only), "dual" (both eras),
// "sessions" (every handshake revision, no modern one) or a single
// handshake revision such as "2024-11-05".
func eraServer(kind string) *server.Server {
	var opts server.Options
	switch kind {
	case "modern":
		opts.Legacy.Disabled = true
	case "dual":
	case "sessions":
		opts.Legacy.ModernDisabled = true
	default:
		opts.Legacy = legacy.Options{ModernDisabled: true, Versions: []string{kind}}
	}
	srv := server.New(protocol.Implementation{Name: "era-" + kind, Version: "1.0.0"}, &opts)
	server.AddTool(srv, &protocol.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *server.CallRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		})
	return srv
}

// serveEraStdio is the test binary's stdio server mode.
func serveEraStdio(kind string) int {
	srv := eraServer(kind)
	defer srv.Close()
	if err := stdio.Serve(context.Background(), srv, os.Stdin, os.Stdout, nil); err != nil {
		return 1
	}
	return 0
}

// handshakeOnlyDiscover stands for a server of another SDK in sessions
// mode: it answers server/discover (asModernError false) or any modern
// request (asModernError true: -32022) naming only handshake revisions,
// and serves initialize and its sessions with next.
func handshakeOnlyDiscover(next http.Handler, asModernError bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(streamable.HeaderSessionID) != "" {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		msg, err := jsonrpc.Decode(body)
		if err != nil || msg.Method == protocol.MethodInitialize || !msg.IsRequest() {
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
			return
		}
		supported := []string{protocol.Version2025_11_25, protocol.Version2025_06_18, protocol.Version2025_03_26}
		w.Header().Set("Content-Type", "application/json")
		if asModernError || msg.Method != protocol.MethodDiscover {
			w.WriteHeader(http.StatusBadRequest)
			w.Write(jsonrpc.AppendError(nil, msg.ID, protocol.UnsupportedVersion(r.Header.Get(streamable.HeaderProtocolVersion), supported)))
			return
		}
		res, _ := json.Marshal(map[string]any{
			"supportedVersions": supported,
			"capabilities":      map[string]any{"tools": map[string]any{}},
			"serverInfo":        map[string]any{"name": "other-sdk", "version": "2.0.0"},
		})
		w.Write(jsonrpc.AppendResult(nil, msg.ID, res))
	})
}

// TestReachAnyEra: by URL or command alone, with no era flag, mcpkit
// reaches servers of every era and HTTP transport, and says which it found.
func TestReachAnyEra(t *testing.T) {
	httpServer := func(t *testing.T, h http.Handler) string {
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return ts.URL
	}
	endpoint := func(kind string) func(t *testing.T) []string {
		return func(t *testing.T) []string {
			srv := eraServer(kind)
			t.Cleanup(func() { srv.Close() })
			return []string{httpServer(t, streamable.NewHandler(srv, nil)) + "/mcp"}
		}
	}
	tests := []struct {
		name      string
		target    func(t *testing.T) []string
		era       string
		transport string
		version   string
	}{
		{"http modern-only", endpoint("modern"), "modern", "streamable-http", protocol.LatestVersion},
		{"http dual-era", endpoint("dual"), "modern", "streamable-http", protocol.LatestVersion},
		{"http sessions-only, discover lists handshake revisions", func(t *testing.T) []string {
			srv := eraServer("sessions")
			t.Cleanup(func() { srv.Close() })
			return []string{httpServer(t, handshakeOnlyDiscover(streamable.NewHandler(srv, nil), false)) + "/mcp"}
		}, "legacy", "streamable-http", protocol.Version2025_11_25},
		{"http sessions-only, -32022 lists handshake revisions", func(t *testing.T) []string {
			srv := eraServer("sessions")
			t.Cleanup(func() { srv.Close() })
			return []string{httpServer(t, handshakeOnlyDiscover(streamable.NewHandler(srv, nil), true)) + "/mcp"}
		}, "legacy", "streamable-http", protocol.Version2025_11_25},
		{"http streamable 2025-03-26", endpoint(protocol.Version2025_03_26), "legacy", "streamable-http", protocol.Version2025_03_26},
		{"http+sse 2024-11-05", func(t *testing.T) []string {
			srv := eraServer(protocol.Version2024_11_05)
			t.Cleanup(func() { srv.Close() })
			mux := http.NewServeMux()
			mux.Handle("/sse", sse.NewHandler(srv, nil))
			return []string{httpServer(t, mux) + "/sse"}
		}, "legacy", "http+sse", protocol.Version2024_11_05},
		{"stdio modern-only", stdioEra("modern"), "modern", "stdio", protocol.LatestVersion},
		{"stdio dual-era", stdioEra("dual"), "modern", "stdio", protocol.LatestVersion},
		{"stdio 2024-11-05", stdioEra(protocol.Version2024_11_05), "legacy", "stdio", protocol.Version2024_11_05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := tt.target(t)
			r := mcpkit(t, withTarget("discover", []string{"--json"}, target)...)
			if r.code != exitOK {
				t.Fatalf("discover: exit %d; stderr %q", r.code, r.stderr)
			}
			var d discovery
			if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
				t.Fatalf("discover output %q: %v", r.stdout, err)
			}
			if d.Era != tt.era || d.Transport != tt.transport || d.ProtocolVersion != tt.version {
				t.Errorf("discover found %s %s %s, want %s %s %s", d.Era, d.Transport, d.ProtocolVersion, tt.era, tt.transport, tt.version)
			}
			r = mcpkit(t, withTarget("call", []string{"echo", "text=hello"}, target)...)
			if r.code != exitOK || r.stdout != "hello\n" {
				t.Errorf("call: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// stdioEra returns the command line of the test binary serving kind over
// stdio.
func stdioEra(kind string) func(t *testing.T) []string {
	return func(t *testing.T) []string {
		t.Setenv(eraServerEnv, kind) // inherited by the server process
		return []string{"--", os.Args[0]}
	}
}
