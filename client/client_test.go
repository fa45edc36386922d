package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// dial returns a fresh connection to the everything-server over one
// transport; the servers behind it end with the test.
type dialer struct {
	name string
	dial func(t *testing.T) transport.ClientConn
}

func transports(t *testing.T) []dialer {
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	return []dialer{
		{"http", func(t *testing.T) transport.ClientConn { return hs.conn() }},
		{"stdio-pipe", func(t *testing.T) transport.ClientConn { return serveStdio(t, both) }},
		{"stdio-process", func(t *testing.T) transport.ClientConn {
			cmd, err := stdio.Start(everythingBinary(t), []string{"-stdio"}, &stdio.CommandOptions{CloseWait: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Close() })
			return cmd
		}},
	}
}

func TestConnectBothErasAllTransports(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 30*time.Second)
	eras := []struct {
		pin     client.Era
		want    client.Era
		version string
	}{
		{client.EraAuto, client.EraModern, protocol.LatestVersion},
		{client.EraModern, client.EraModern, protocol.LatestVersion},
		{client.EraLegacy, client.EraLegacy, protocol.LegacyVersions[0]},
	}
	for _, tr := range transports(t) {
		for _, e := range eras {
			t.Run(tr.name+"/"+e.pin.String(), func(t *testing.T) {
				c := newClient(&client.Options{Era: e.pin})
				s, err := c.Connect(ctx, tr.dial(t), nil)
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				defer s.Close()
				if s.Era() != e.want || s.ProtocolVersion() != e.version {
					t.Fatalf("era %v version %q, want %v %q", s.Era(), s.ProtocolVersion(), e.want, e.version)
				}
				if s.ServerInfo().Name != everything.Info.Name {
					t.Errorf("server info %+v", s.ServerInfo())
				}
				if s.ServerCapabilities().Tools == nil {
					t.Errorf("no tools capability: %+v", s.ServerCapabilities())
				}
				exerciseEverything(ctx, t, s)
			})
		}
	}
}

// exerciseEverything checks the basic methods against the everything
// fixtures.
func exerciseEverything(ctx context.Context, t *testing.T, s *client.Session) {
	t.Helper()
	tools, err := s.ListTools(ctx, &client.ListOptions{All: true})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if !hasTool(tools.Tools, "echo") || !hasTool(tools.Tools, "test_sleep") {
		t.Errorf("tools lack echo or test_sleep: %d tools", len(tools.Tools))
	}
	res, err := s.CallTool(ctx, "echo", map[string]any{"text": "hello, wire"}, nil)
	if err != nil {
		t.Fatalf("CallTool echo: %v", err)
	}
	if got := textOf(t, res); got != "hello, wire" || res.IsError {
		t.Errorf("echo = %q (isError %v)", got, res.IsError)
	}
	rr, err := s.ReadResource(ctx, "test://static-text", nil)
	if err != nil {
		t.Fatalf("ReadResource: %v", err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "This is the content of the static text resource." {
		t.Errorf("read %+v", rr.Contents)
	}
	pr, err := s.GetPrompt(ctx, "test_prompt_with_arguments", map[string]string{"arg1": "a", "arg2": "b"}, nil)
	if err != nil {
		t.Fatalf("GetPrompt: %v", err)
	}
	if len(pr.Messages) != 1 {
		t.Fatalf("prompt messages %+v", pr.Messages)
	}
	if tc, ok := pr.Messages[0].Content.(*protocol.TextContent); !ok || tc.Text != "Prompt with arguments: arg1='a', arg2='b'" {
		t.Errorf("prompt content %#v", pr.Messages[0].Content)
	}
	comp, err := s.Complete(ctx, protocol.CompleteReference{Type: protocol.RefPrompt, Name: "test_prompt_with_arguments"}, protocol.CompleteArgument{Name: "arg1", Value: "testV"}, nil)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if !slices.Equal(comp.Values, []string{"testValue1", "testValue2"}) {
		t.Errorf("completion values %v", comp.Values)
	}
	if _, err := s.CallTool(ctx, "no_such_tool", nil, nil); err == nil {
		t.Errorf("calling an unknown tool succeeded")
	}
}

func TestDetectLegacyOnlyHTTP(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	_, both := everythingServers(t, nil, &legacy.Options{ModernDisabled: true})
	hs := serveHTTP(t, both)
	c := newClient(&client.Options{ProbeTimeout: 10 * time.Second})
	start := time.Now()
	s, err := c.Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("detection took %v: it waited rather than reading the answer", d)
	}
	if s.Era() != client.EraLegacy || s.ProtocolVersion() != protocol.LegacyVersions[0] {
		t.Fatalf("era %v version %q", s.Era(), s.ProtocolVersion())
	}
	if got := hs.rec.methods(); len(got) < 2 || got[0] != protocol.MethodDiscover || got[1] != protocol.MethodInitialize {
		t.Errorf("requests %q, want server/discover then initialize", got)
	}
	exerciseEverything(ctx, t, s)
}

func TestDetectLegacyOnlyStdio(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	_, both := everythingServers(t, nil, &legacy.Options{ModernDisabled: true})
	c := newClient(&client.Options{ProbeTimeout: 10 * time.Second})
	start := time.Now()
	s, err := c.Connect(ctx, serveStdio(t, both), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("detection took %v, though the server answered the probe with an error", d)
	}
	if s.Era() != client.EraLegacy {
		t.Fatalf("era %v", s.Era())
	}
	exerciseEverything(ctx, t, s)
}

func TestDetectSilentLegacyStdio(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	stub := &stubStdio{}
	conn := stub.serve(t, legacyInitialize)
	const probe = 150 * time.Millisecond
	c := newClient(&client.Options{ProbeTimeout: probe})
	start := time.Now()
	s, err := c.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := time.Since(start)
	s.Close()
	stub.wait()
	if s.Era() != client.EraLegacy || s.ProtocolVersion() != "2025-11-25" || s.ServerInfo().Name != "silent-legacy" {
		t.Fatalf("era %v version %q info %+v", s.Era(), s.ProtocolVersion(), s.ServerInfo())
	}
	if d < probe || d > probe+3*time.Second {
		t.Errorf("fallback after %v, want about %v", d, probe)
	}
	got := stub.received()
	want := []string{protocol.MethodDiscover, protocol.NotificationCancelled, protocol.MethodInitialize, protocol.MethodNotificationInitialized}
	if !slices.Equal(got, want) {
		t.Errorf("stub received %q, want %q", got, want)
	}
}

func TestDetectModernOnly(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	core, both := everythingServers(t, nil, &legacy.Options{Disabled: true})
	for name, h := range map[string]transport.Handler{"core": core, "legacy-disabled": both} {
		t.Run(name, func(t *testing.T) {
			hs := serveHTTP(t, h)
			s, err := newClient(nil).Connect(ctx, hs.conn(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Era() != client.EraModern || s.ProtocolVersion() != protocol.LatestVersion {
				t.Fatalf("era %v version %q", s.Era(), s.ProtocolVersion())
			}
			if n := hs.rec.count(protocol.MethodInitialize); n != 0 {
				t.Errorf("%d initialize requests to a modern server", n)
			}
			if !slices.Contains(s.SupportedVersions(), protocol.LatestVersion) {
				t.Errorf("supported versions %v", s.SupportedVersions())
			}
		})
	}
}

func TestEraRememberedPerKey(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 20*time.Second)
	_, legacyOnly := everythingServers(t, nil, &legacy.Options{ModernDisabled: true})
	_, dual := everythingServers(t, nil, nil)
	cases := []struct {
		name string
		h    transport.Handler
		era  client.Era
		// requests of the first Connect, of a remembered one
		first, again []string
	}{
		{"legacy", legacyOnly, client.EraLegacy,
			[]string{protocol.MethodDiscover, protocol.MethodInitialize},
			[]string{protocol.MethodInitialize}},
		{"modern", dual, client.EraModern,
			[]string{protocol.MethodDiscover},
			[]string{protocol.MethodDiscover}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hs := serveHTTP(t, tc.h)
			c := newClient(nil)
			key := &client.ConnectOptions{Key: hs.ts.URL}
			connect := func(want []string) {
				t.Helper()
				before := len(hs.rec.methods())
				s, err := c.Connect(ctx, hs.conn(), key)
				if err != nil {
					t.Fatal(err)
				}
				got := requestsOf(hs.rec.methods()[before:])
				s.Close()
				if s.Era() != tc.era {
					t.Errorf("era %v, want %v", s.Era(), tc.era)
				}
				if !slices.Equal(got, want) {
					t.Errorf("Connect sent %q, want %q", got, want)
				}
			}
			connect(tc.first)
			connect(tc.again)
			connect(tc.again)
			c.Forget(hs.ts.URL)
			connect(tc.first)
			// Another key is not affected by what this one remembered.
			before := len(hs.rec.methods())
			s, err := c.Connect(ctx, hs.conn(), &client.ConnectOptions{Key: "other"})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if got := requestsOf(hs.rec.methods()[before:]); !slices.Equal(got, tc.first) {
				t.Errorf("Connect with a new key sent %q, want %q", got, tc.first)
			}
		})
	}
}

// requestsOf keeps the handshake requests of a list of POSTed methods.
func requestsOf(methods []string) []string {
	var out []string
	for _, m := range methods {
		if m == protocol.MethodDiscover || m == protocol.MethodInitialize {
			out = append(out, m)
		}
	}
	return out
}

func TestConnectNoCommonVersion(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	stub := &stubStdio{}
	conn := stub.serve(t, func(m *jsonrpc.Message) []byte {
		return jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"0"}}`))
	})
	_, err := newClient(&client.Options{Era: client.EraLegacy}).Connect(ctx, conn, nil)
	if !errors.Is(err, client.ErrNoCommonVersion) {
		t.Fatalf("Connect = %v, want ErrNoCommonVersion", err)
	}
}

func TestListPages(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	_, both := everythingServers(t, &server.Options{PageSize: 3, ListCache: &protocol.CacheHints{TTLMs: 5000, CacheScope: protocol.CachePublic}}, nil)
	hs := serveHTTP(t, both)
	s, err := newClient(nil).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.ListTools(ctx, &client.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Tools) <= 6 || all.NextCursor != "" || all.TTLMs != 5000 {
		t.Fatalf("All: %d tools, nextCursor %q, ttlMs %d", len(all.Tools), all.NextCursor, all.TTLMs)
	}
	var paged []string
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := s.ListTools(ctx, &client.ListOptions{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tools) > 3 {
			t.Fatalf("page of %d tools", len(page.Tools))
		}
		paged = append(paged, names(page.Tools)...)
		if page.NextCursor == "" {
			break
		}
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		cursor = page.NextCursor
	}
	if !slices.Equal(paged, names(all.Tools)) {
		t.Errorf("pages list %v, All lists %v", paged, names(all.Tools))
	}
	res, err := s.ListResources(ctx, &client.ListOptions{All: true})
	if err != nil || len(res.Resources) != 3 {
		t.Errorf("resources: %v %d", err, len(res.Resources))
	}
	tmpl, err := s.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "test://template/{id}/data" {
		t.Errorf("templates: %v %+v", err, tmpl)
	}
	pr, err := s.ListPrompts(ctx, &client.ListOptions{All: true})
	if err != nil || len(pr.Prompts) != 5 {
		t.Errorf("prompts: %v %d", err, len(pr.Prompts))
	}
	first, err := s.ListPrompts(ctx, nil)
	if err != nil || len(first.Prompts) != 3 || first.NextCursor == "" {
		t.Errorf("first prompts page: %v %+v", err, first)
	}
}

// A modern server that refuses the probe's version answers with the
// versions it supports: the client retries with one it shares, or gives up,
// and never falls back to the handshake (the stub would accept it).
func TestDetectUnsupportedVersion(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	discover := []byte(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"picky","version":"1"}}}`)
	cases := []struct {
		name      string
		supported string
		wantErr   error
		want      []string
	}{
		{"shared", `["2099-01-01","2026-07-28"]`, nil, []string{protocol.MethodDiscover, protocol.MethodDiscover}},
		{"none shared", `["2099-01-01"]`, client.ErrNoCommonVersion, []string{protocol.MethodDiscover}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stub := &stubStdio{}
			refused := false
			conn := stub.serve(t, func(m *jsonrpc.Message) []byte {
				switch m.Method {
				case protocol.MethodDiscover:
					if !refused {
						refused = true
						return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(protocol.CodeUnsupportedProtocolVersion, "unsupported", json.RawMessage(`{"supported":`+tc.supported+`,"requested":"2026-07-28"}`)))
					}
					return jsonrpc.AppendResult(nil, m.ID, discover)
				}
				return legacyInitialize(m)
			})
			s, err := newClient(nil).Connect(ctx, conn, nil)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Connect = %v, want %v", err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if s.Era() != client.EraModern || s.ProtocolVersion() != protocol.LatestVersion || s.ServerInfo().Name != "picky" {
					t.Errorf("era %v version %q info %+v", s.Era(), s.ProtocolVersion(), s.ServerInfo())
				}
				s.Close()
			}
			stub.wait()
			if got := stub.received(); !slices.Equal(got, tc.want) {
				t.Errorf("stub received %q, want %q", got, tc.want)
			}
		})
	}
}
