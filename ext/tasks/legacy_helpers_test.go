package tasks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// legacyClient is a 2025-11-25 client speaking raw JSON-RPC to a server,
// in process (Serve/Receive with the session, as a transport does) or
// over Streamable HTTP. It answers the server's requests with answer.
type legacyClient struct {
	t      testing.TB
	h      transport.Handler // in process
	sess   transport.Session
	url    string // over HTTP
	sessID string
	next   atomic.Int64
	answer func(method string, params json.RawMessage) any
	asked  atomic.Int64 // server-to-client requests answered
}

// rpcError is a JSON-RPC error answer.
type rpcError = jsonrpc.Error

// openLegacy initializes a session of version with the client
// capabilities caps, in process (url "") or over HTTP.
func openLegacy(t testing.TB, h transport.Handler, url, version, caps string) (*legacyClient, json.RawMessage) {
	t.Helper()
	c := &legacyClient{t: t, h: h, url: url}
	params := `{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"legacy-test","version":"1"}}`
	res, err := c.do("initialize", json.RawMessage(params))
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if url == "" {
		h.Receive(context.Background(), &jsonrpc.Message{Method: "notifications/initialized"}, c.sess)
	} else {
		c.post(jsonrpc.AppendNotification(nil, "notifications/initialized", nil))
	}
	return c, res
}

// call sends a request and returns its result or its JSON-RPC error.
func (c *legacyClient) call(method string, params any) (json.RawMessage, *rpcError) {
	c.t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := c.do(method, b)
	if err == nil {
		return res, nil
	}
	if e, ok := err.(*rpcError); ok {
		return nil, e
	}
	c.t.Fatalf("%s: %v", method, err)
	return nil, nil
}

func (c *legacyClient) do(method string, params json.RawMessage) (json.RawMessage, error) {
	id := jsonrpc.IntID(c.next.Add(1))
	if c.url != "" {
		return c.doHTTP(id, method, params)
	}
	msg := &jsonrpc.Message{ID: id, Method: method, Params: params}
	req := &transport.Request{Message: msg, Kind: transport.KindSession, Session: c.sess, Notifier: notifierFunc(c.serverMessage)}
	if method == "initialize" {
		req.Kind, req.Session = transport.KindInitialize, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req.Cancel = cancel
	res, err := c.h.Serve(ctx, req)
	if err != nil {
		return nil, transport.Respond(ctx, id, nil, err).Error
	}
	if o, ok := res.(*transport.Opened); ok {
		c.sess, res = o.Session, o.Result
	}
	return json.Marshal(res)
}

type notifierFunc func(msg []byte) error

func (f notifierFunc) Notify(msg []byte) error { return f(msg) }

// serverMessage takes a message the server sent on a request's stream:
// a request is answered (in process, through Receive).
func (c *legacyClient) serverMessage(b []byte) error {
	m, err := jsonrpc.Decode(bytes.Clone(b))
	if err != nil || m.Method == "" || !m.ID.IsValid() {
		return nil
	}
	reply := c.reply(m)
	if c.url != "" {
		go c.post(reply)
		return nil
	}
	r, _ := jsonrpc.Decode(reply)
	go c.h.Receive(context.Background(), r, c.sess)
	return nil
}

func (c *legacyClient) reply(m *jsonrpc.Message) []byte {
	c.asked.Add(1)
	var res any = map[string]any{}
	if c.answer != nil {
		res = c.answer(m.Method, m.Params)
	}
	b, _ := json.Marshal(res)
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID.Raw(), b))
}

func (c *legacyClient) httpRequest(body []byte) *http.Request {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if c.sessID != "" {
		req.Header.Set("Mcp-Session-Id", c.sessID)
	}
	return req
}

func (c *legacyClient) post(body []byte) {
	resp, err := http.DefaultClient.Do(c.httpRequest(body))
	if err != nil {
		c.t.Error(err)
		return
	}
	resp.Body.Close()
}

func (c *legacyClient) doHTTP(id jsonrpc.ID, method string, params json.RawMessage) (json.RawMessage, error) {
	body := jsonrpc.AppendRequest(nil, id, method, params)
	req := c.httpRequest(body)
	if method == "initialize" {
		req.Header.Del("MCP-Protocol-Version")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.sessID = sid
	}
	var msgs [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data:") {
				continue
			}
			data := []byte(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			m, err := jsonrpc.Decode(bytes.Clone(data))
			if err != nil {
				continue
			}
			if m.Method != "" {
				c.serverMessage(data)
				continue
			}
			msgs = append(msgs, data)
			break
		}
	} else {
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		if buf.Len() > 0 {
			msgs = append(msgs, buf.Bytes())
		}
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%s: HTTP %d, no response", method, resp.StatusCode)
	}
	m, err := jsonrpc.Decode(msgs[0])
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
}

// legacyTransports runs f with a 2025-11-25 client in process and over
// Streamable HTTP against s (as principal).
func legacyTransports(t *testing.T, s *server.Server, principal string, f func(t *testing.T, open func(version, caps string) (*legacyClient, json.RawMessage))) {
	h := as(s, principal)
	t.Run("inprocess", func(t *testing.T) {
		f(t, func(version, caps string) (*legacyClient, json.RawMessage) {
			return openLegacy(t, h, "", version, caps)
		})
	})
	t.Run("http", func(t *testing.T) {
		if principal != "" {
			t.Skip("the HTTP transport serves a session's requests with the adapter: no principal middleware")
		}
		hs := httptest.NewServer(streamable.NewHandler(h, nil))
		t.Cleanup(hs.Close)
		f(t, func(version, caps string) (*legacyClient, json.RawMessage) {
			return openLegacy(t, h, hs.URL, version, caps)
		})
	})
}
