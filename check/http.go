package check

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// httpIDs are the checks of the Streamable HTTP transport, in order.
var httpIDs = []string{
	"http.version-header-missing", "http.version-header-mismatch",
	"http.method-header-missing", "http.method-header-mismatch",
	"http.name-header-missing", "http.name-header-mismatch", "http.name-base64",
	"http.origin-rejected", "http.host-rebinding",
	"http.accept-json", "http.accept-sse", "http.accept-unsupported", "http.content-type",
	"http.notification", "http.get-no-session", "http.delete-no-session",
	"http.malformed", "http.batch", "http.unknown-method", "http.error-bodies",
}

// raw posts body with a modern request's headers for q (nil: none of
// them), changed by edit.
func (c *checker) raw(ctx context.Context, body []byte, q *request, edit func(*http.Request)) (*reply, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	return c.http.post(ctx, body, func(r *http.Request) {
		if q != nil {
			modernHeaders(r.Header, c.version, q, c.headerParams(q))
		}
		if edit != nil {
			edit(r)
		}
	})
}

// bare sends a GET or DELETE and reads its status, without waiting on a
// stream the server may open.
func (c *checker) bare(ctx context.Context, method string, edit func(*http.Request)) (*reply, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.o.URL, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.o.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", "text/event-stream")
	if edit != nil {
		edit(req)
	}
	resp, err := c.http.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &reply{status: resp.StatusCode, header: resp.Header}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil {
		r.ctype = mt
	}
	if r.ctype == "text/event-stream" {
		r.sse = true
		return r, nil
	}
	r.body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	r.msg = decodeResponse(r.body)
	return r, nil
}

// noteError keeps an HTTP error answer for http.error-bodies.
func (c *checker) noteError(id string, r *reply) {
	if r != nil && r.status >= 400 {
		c.errBodies = append(c.errBodies, errBody{check: id, r: r})
	}
}

// expect records whether r has the HTTP status and, when code is not 0,
// the JSON-RPC error code wanted.
func (c *checker) expect(f *finding, r *reply, err error, status int, code int64) {
	if err != nil {
		f.Got = "no answer"
		f.fail("%v", err)
		return
	}
	f.Got = r.got()
	c.noteError(f.ID, r)
	if r.status != status {
		f.fail("want HTTP %d %s", status, http.StatusText(status))
	}
	if code != 0 && r.errorCode() != code {
		f.fail("want JSON-RPC error %d", code)
	}
}

// checkHTTP runs the raw Streamable HTTP checks.
func (c *checker) checkHTTP(ctx context.Context) {
	if c.http == nil {
		c.skipAll("stdio target", append([]string{"http.unsupported-version"}, httpIDs...)...)
		return
	}
	if !c.modern {
		c.skipAll(c.notModern(), httpIDs...)
		return
	}
	disc := c.modernReq(protocol.MethodDiscover, nil)
	body := disc.body(c.id())
	run := func(id, sent string, status int, code int64, b []byte, q *request, edit func(*http.Request)) {
		f := c.begin(id)
		f.Sent = sent
		r, err := c.raw(ctx, b, q, edit)
		c.expect(f, r, err, status, code)
		c.end(f)
	}
	del := func(name string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Del(name) }
	}
	set := func(name, value string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set(name, value) }
	}

	run("http.version-header-missing", "POST server/discover without MCP-Protocol-Version",
		http.StatusBadRequest, protocol.CodeHeaderMismatch, body, disc, del("MCP-Protocol-Version"))
	run("http.version-header-mismatch", "POST server/discover, MCP-Protocol-Version: "+protocol.Version2025_11_25+", _meta "+c.version,
		http.StatusBadRequest, protocol.CodeHeaderMismatch, body, disc, set("MCP-Protocol-Version", protocol.Version2025_11_25))
	run("http.method-header-missing", "POST server/discover without Mcp-Method",
		http.StatusBadRequest, protocol.CodeHeaderMismatch, body, disc, del("Mcp-Method"))
	run("http.method-header-mismatch", "POST server/discover, Mcp-Method: tools/list",
		http.StatusBadRequest, protocol.CodeHeaderMismatch, body, disc, set("Mcp-Method", protocol.MethodToolsList))

	c.checkNameHeaders(ctx)

	run("http.origin-rejected", "POST server/discover, Origin: http://evil.example.com",
		http.StatusForbidden, 0, body, disc, set("Origin", "http://evil.example.com"))
	if c.loopback {
		run("http.host-rebinding", "POST server/discover, Host: evil.example.com",
			http.StatusForbidden, 0, body, disc, func(r *http.Request) { r.Host = "evil.example.com" })
	} else {
		c.skip("http.host-rebinding", "the target is not a loopback address")
	}

	for _, a := range []struct {
		id, accept, ctype string
	}{
		{"http.accept-json", "application/json", "application/json"},
		{"http.accept-sse", "text/event-stream", "text/event-stream"},
	} {
		f := c.begin(a.id)
		f.Sent = "POST server/discover, Accept: " + a.accept
		r, err := c.raw(ctx, body, disc, set("Accept", a.accept))
		c.expect(f, r, err, http.StatusOK, 0)
		if err == nil {
			if r.ctype != a.ctype {
				f.fail("want Content-Type %s", a.ctype)
			}
			if r.result() == nil {
				f.fail("want a JSON-RPC result")
			}
		}
		c.end(f)
	}
	run("http.accept-unsupported", "POST server/discover, Accept: image/png",
		http.StatusNotAcceptable, 0, body, disc, set("Accept", "image/png"))
	run("http.content-type", "POST server/discover, Content-Type: text/plain",
		http.StatusUnsupportedMediaType, 0, body, disc, set("Content-Type", "text/plain"))

	f := c.begin("http.notification")
	note := &request{method: protocol.NotificationCancelled, params: map[string]any{"requestId": "mcpkit-check-none"}, meta: c.meta()}
	f.Sent = "POST " + note.method + " (a notification)"
	nb := append([]byte(nil), `{"jsonrpc":"2.0","method":"`+note.method+`","params":`...)
	nb = append(append(nb, note.encode()...), '}')
	r, err := c.raw(ctx, nb, note, nil)
	c.expect(f, r, err, http.StatusAccepted, 0)
	if err == nil && len(strings.TrimSpace(string(r.body))) > 0 {
		f.fail("a 202 answer has no body")
	}
	c.end(f)

	for _, m := range []struct{ id, method string }{
		{"http.get-no-session", http.MethodGet},
		{"http.delete-no-session", http.MethodDelete},
	} {
		f := c.begin(m.id)
		f.Sent = m.method + " without Mcp-Session-Id"
		r, err := c.bare(ctx, m.method, set("MCP-Protocol-Version", c.version))
		switch {
		case err != nil:
			f.Got = "no answer"
			f.fail("%v", err)
		case c.legacy && (r.status == http.StatusMethodNotAllowed || r.status == http.StatusBadRequest):
			f.Got = r.got()
		case r.status != http.StatusMethodNotAllowed:
			f.Got = r.got()
			if c.legacy {
				f.fail("want 405 or 400 without a session")
			} else {
				f.fail("a modern-only server answers %s with 405", m.method)
			}
		default:
			f.Got = r.got()
		}
		if err == nil {
			c.noteError(m.id, r)
		}
		c.end(f)
	}

	run("http.malformed", `POST {"jsonrpc":"2.0","id":1,`, http.StatusBadRequest, protocol.CodeParseError,
		[]byte(`{"jsonrpc":"2.0","id":1,`), disc, nil)
	run("http.batch", "POST [server/discover] (a batch)", http.StatusBadRequest, protocol.CodeInvalidRequest,
		append(append([]byte{'['}, body...), ']'), disc, nil)
	unk := c.modernReq("mcpkit-check/unknown", nil)
	run("http.unknown-method", "POST mcpkit-check/unknown", http.StatusNotFound, protocol.CodeMethodNotFound,
		unk.body(c.id()), unk, nil)

	c.checkErrorBodies()
}

// checkNameHeaders checks Mcp-Name validation on tools/call and
// resources/read. The tools/call bodies name a tool that is not listed, so
// even a server that ignores the header runs nothing.
func (c *checker) checkNameHeaders(ctx context.Context) {
	type target struct {
		q      *request
		header string // a value differing from the body
	}
	var targets []target
	if len(c.tools) > 0 {
		absent := c.tools[0].Name + "-mcpkit-check-absent"
		for c.findTool(absent) != nil {
			absent += "-"
		}
		targets = append(targets, target{
			c.modernReq(protocol.MethodToolsCall, map[string]any{"name": absent, "arguments": map[string]any{}}),
			c.tools[0].Name,
		})
	}
	if _, ok := c.caps["resources"]; ok {
		uri := unknownURI
		if len(c.resources) > 0 {
			uri = c.resources[0]
		}
		targets = append(targets, target{
			c.modernReq(protocol.MethodResourcesRead, map[string]any{"uri": uri}),
			unknownURI + "/other",
		})
	}
	if len(targets) == 0 {
		c.skipAll("no tools or resources to address", "http.name-header-missing", "http.name-header-mismatch")
	} else {
		for _, mode := range []string{"http.name-header-missing", "http.name-header-mismatch"} {
			f := c.begin(mode)
			var sent, got []string
			for _, t := range targets {
				edit := func(r *http.Request) { r.Header.Del("Mcp-Name") }
				s := t.q.method + " without Mcp-Name"
				if mode == "http.name-header-mismatch" {
					h := t.header
					edit = func(r *http.Request) { r.Header.Set("Mcp-Name", h) }
					s = fmt.Sprintf("%s %s, Mcp-Name: %s", t.q.method, t.q.params[protocol.NameParam(t.q.method)], h)
				}
				sent = append(sent, s)
				r, err := c.raw(ctx, t.q.body(c.id()), t.q, edit)
				sub := &finding{Result: Result{ID: mode}}
				c.expect(sub, r, err, http.StatusBadRequest, protocol.CodeHeaderMismatch)
				for _, p := range sub.fails {
					f.fail("%s: %s", t.q.method, p)
				}
				got = append(got, t.q.method+": "+sub.Got)
			}
			f.Sent = strings.Join(sent, "; ")
			f.Got = strings.Join(got, "; ")
			c.end(f)
		}
	}

	if len(c.resources) == 0 {
		c.skip("http.name-base64", "the server lists no resources")
		return
	}
	f := c.begin("http.name-base64")
	q := c.modernReq(protocol.MethodResourcesRead, map[string]any{"uri": c.resources[0]})
	enc := transport.SentinelPrefix + base64.StdEncoding.EncodeToString([]byte(c.resources[0])) + transport.SentinelSuffix
	f.Sent = "resources/read " + c.resources[0] + ", Mcp-Name: " + enc
	r, err := c.raw(ctx, q.body(c.id()), q, func(r *http.Request) { r.Header.Set("Mcp-Name", enc) })
	c.expect(f, r, err, http.StatusOK, 0)
	if err == nil && r.result() == nil {
		f.fail("the Base64 form of the URI must be accepted")
	}
	c.end(f)
}

// checkErrorBodies checks every HTTP error answer seen: a body, where there
// is one (400 and 404 must have one), is an application/json JSON-RPC error.
func (c *checker) checkErrorBodies() {
	f := c.begin("http.error-bodies")
	n := 0
	for _, e := range c.errBodies {
		r := e.r
		empty := len(strings.TrimSpace(string(r.body))) == 0 && !r.sse
		if empty {
			if r.status == http.StatusBadRequest || r.status == http.StatusNotFound {
				f.fail("%s: HTTP %d has no JSON-RPC error body", e.check, r.status)
			}
			continue
		}
		n++
		if r.ctype != "application/json" {
			f.fail("%s: HTTP %d body has Content-Type %q, want application/json", e.check, r.status, r.ctype)
		}
		if r.msg == nil || r.msg.Error == nil {
			f.fail("%s: HTTP %d body is not a JSON-RPC error object", e.check, r.status)
		}
	}
	f.Sent = "the error answers above"
	f.Got = fmt.Sprintf("%d error bodies", n)
	c.end(f)
}
