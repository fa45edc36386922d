package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// stamp is a small extension written against the public API only, as a
// third party would: it adds a method (stamp/get) served in both eras,
// reads a _meta key of its own on every request, and takes part in
// tools/call, adding a _meta key to every tool result.
type stamp struct{ label string }

const (
	stampID      = "com.example/stamp"
	stampMetaKey = "com.example/stamp-token"
)

func (x *stamp) ID() string { return stampID }

func (x *stamp) Register(s *server.Server) (protocol.Object, error) {
	s.HandleMethod(server.Method{
		Name: "stamp/get",
		Eras: server.EraModern | server.EraLegacy,
		Handler: func(ctx context.Context, r *server.Request) (protocol.Result, error) {
			var p struct {
				Of string `json:"of"`
			}
			if err := r.DecodeParams(&p); err != nil {
				return nil, err
			}
			token := r.Meta.Extra[stampMetaKey] // the extension's own _meta
			return &stampResult{Stamp: x.label + ":" + p.Of, Token: token}, nil
		},
	})
	s.UseToolCalls(func(next server.ToolCallFunc) server.ToolCallFunc {
		return func(ctx context.Context, call *server.CallRequest) (protocol.Result, error) {
			res, err := next(ctx, call)
			if tr, ok := res.(*protocol.CallToolResult); ok && err == nil {
				tr.Meta = &protocol.ResultMeta{Extra: map[string]json.RawMessage{stampID: json.RawMessage(`"` + x.label + `"`)}}
			}
			return res, err
		}
	})
	return protocol.Object{"label": json.RawMessage(`"` + x.label + `"`)}, nil
}

type stampResult struct {
	protocol.ResultHeader
	Stamp string          `json:"stamp"`
	Token json.RawMessage `json:"token,omitempty"`
}

func newStampServer(t testing.TB) *server.Server {
	s := server.New(protocol.Implementation{Name: "stamped", Version: "1"}, &server.Options{OmitServerInfo: true})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallRequest, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	if err := s.Install(&stamp{label: "v1"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// lineConn drives stdio.Serve with JSON-RPC lines.
type lineConn struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
}

func serveLines(t *testing.T, s *server.Server) *lineConn {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stdio.Serve(ctx, s, inR, outW, nil)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR)
		<-done
	})
	return &lineConn{t: t, in: inW, out: bufio.NewReader(outR)}
}

func (c *lineConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *lineConn) recv() string {
	c.t.Helper()
	got := make(chan string, 1)
	go func() {
		l, _ := c.out.ReadString('\n')
		got <- strings.TrimSpace(l)
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(10 * time.Second):
		c.t.Fatal("no answer")
		return ""
	}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

// TestExtensionBothEras: an extension installed through the public API
// is advertised by server/discover, its method and _meta key are served to
// a modern client and to a legacy session, and its tools/call middleware
// adds its _meta to tool results in both eras.
func TestExtensionBothEras(t *testing.T) {
	c := serveLines(t, newStampServer(t))

	c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}}`)
	if got := c.recv(); !strings.Contains(got, `"extensions":{"com.example/stamp":{"label":"v1"}}`) {
		t.Errorf("discover does not advertise the extension: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"stamp/get","params":{"of":"m",` + modernMeta + `,"com.example/stamp-token":"t-1"}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","stamp":"v1:m","token":"t-1"}}`; got != want {
		t.Errorf("modern stamp/get\n got %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` + modernMeta + `}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","_meta":{"com.example/stamp":"v1"},"content":[{"type":"text","text":"hi"}]}}`; got != want {
		t.Errorf("modern tools/call\n got %s\nwant %s", got, want)
	}

	// A legacy session on the same server.
	c.send(`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	if got := c.recv(); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":11,"method":"stamp/get","params":{"of":"l","_meta":{"com.example/stamp-token":"t-2"}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":11,"result":{"stamp":"v1:l","token":"t-2"}}`; got != want {
		t.Errorf("legacy stamp/get\n got %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"yo"}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":12,"result":{"_meta":{"com.example/stamp":"v1"},"content":[{"type":"text","text":"yo"}]}}`; got != want {
		t.Errorf("legacy tools/call\n got %s\nwant %s", got, want)
	}
	// Methods the extension did not serve to legacy sessions stay
	// unknown there.
	c.send(`{"jsonrpc":"2.0","id":13,"method":"server/discover","params":{}}`)
	if got := c.recv(); !strings.Contains(got, `"code":-32601`) {
		t.Errorf("legacy server/discover: %s", got)
	}
}
