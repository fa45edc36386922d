package check

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// legacyIDs are the checks of the legacy era, in order.
var legacyIDs = []string{"legacy.initialize", "legacy.session-id", "legacy.lists", "legacy.no-result-type", "legacy.unknown-session", "legacy.delete"}

// unknownSession is a session id no server issued.
const unknownSession = "mcpkit-check-unknown-session"

// initialize probes the legacy era with initialize (2025-11-25) and, when
// it succeeds, completes the handshake with notifications/initialized. On
// stdio it uses a process of its own.
func (c *checker) initialize(ctx context.Context) (*reply, error) {
	params := map[string]any{
		"protocolVersion": protocol.Version2025_11_25,
		"capabilities":    map[string]any{},
		"clientInfo":      clientInfo,
	}
	b, _ := json.Marshal(params)
	tctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	var r *reply
	var err error
	if c.http != nil {
		r, err = c.http.post(tctx, jsonrpc.AppendRequest(nil, jsonrpc.IntID(c.id()), protocol.MethodInitialize, b), nil)
	} else {
		if c.stdLeg, err = c.startProcess(); err != nil {
			return nil, err
		}
		r, err = c.stdLeg.call(tctx, c.id(), protocol.MethodInitialize, b)
	}
	res := r.result()
	if err != nil || res == nil {
		if c.stdLeg != nil {
			_ = c.stdLeg.cmd.Close()
			c.stdLeg = nil
		}
		return r, err
	}
	c.legacy = true
	_ = jsonrpc.Unmarshal(res["protocolVersion"], &c.sessionVersion)
	_ = jsonrpc.Unmarshal(res["capabilities"], &c.legacyCaps)
	note := jsonrpc.AppendNotification(nil, protocol.MethodNotificationInitialized, nil)
	if c.http != nil {
		c.session = r.header.Get("Mcp-Session-Id")
		nr, nerr := c.http.post(tctx, note, c.sessionHeaders(c.session))
		if nerr == nil && nr.status != http.StatusAccepted {
			c.initNote = nr.got()
		}
	} else {
		_ = c.stdLeg.cmd.Send(tctx, note, c.sessionVersion)
	}
	return r, nil
}

// sessionHeaders returns an edit adding the legacy session's headers.
func (c *checker) sessionHeaders(sid string) func(*http.Request) {
	return func(r *http.Request) {
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
		}
		if c.sessionVersion != "" {
			r.Header.Set("MCP-Protocol-Version", c.sessionVersion)
		}
	}
}

// legacyCall sends a request within the legacy session.
func (c *checker) legacyCall(ctx context.Context, method string, params map[string]any) (*reply, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	var p json.RawMessage
	if params != nil {
		p, _ = json.Marshal(params)
	}
	if c.http != nil {
		return c.http.post(ctx, jsonrpc.AppendRequest(nil, jsonrpc.IntID(c.id()), method, p), c.sessionHeaders(c.session))
	}
	if c.stdLeg == nil {
		return nil, errNoAnswer
	}
	return c.stdLeg.call(ctx, c.id(), method, p)
}

// checkLegacy checks the initialize handshake and the legacy session.
func (c *checker) checkLegacy(ctx context.Context) {
	if !c.legacy {
		c.skipAll("no legacy era: initialize answered "+answerOf(c.initReply, nil), legacyIDs...)
		return
	}
	f := c.begin("legacy.initialize")
	f.Sent = "initialize, protocolVersion " + protocol.Version2025_11_25
	res := c.initReply.result()
	var info struct {
		Name string `json:"name"`
	}
	_ = jsonrpc.Unmarshal(res["serverInfo"], &info)
	f.Got = "protocolVersion " + rawOf(res["protocolVersion"]) + ", serverInfo " + rawOf(res["serverInfo"])
	if c.sessionVersion != protocol.Version2025_11_25 && !contains(protocol.LegacyVersions, c.sessionVersion) && c.sessionVersion != "2024-11-05" {
		f.fail("protocolVersion must be the one asked for (%s) or another legacy version the server supports", protocol.Version2025_11_25)
	}
	if c.legacyCaps == nil {
		f.fail("the result must have a capabilities object")
	}
	if info.Name == "" {
		f.fail("the result must have serverInfo with a name")
	}
	if c.initNote != "" {
		f.fail("notifications/initialized: want 202, got %s", c.initNote)
	}
	c.end(f)

	switch {
	case c.http == nil:
		c.skip("legacy.session-id", "stdio target")
	case c.session == "":
		c.skip("legacy.session-id", "the server assigned no session (Mcp-Session-Id)")
	default:
		f = c.begin("legacy.session-id")
		f.Sent = "initialize"
		f.Got = "Mcp-Session-Id " + clip(c.session, 60)
		for i := 0; i < len(c.session); i++ {
			if b := c.session[i]; b < 0x21 || b > 0x7e {
				f.fail("the session id must contain only visible ASCII (0x21–0x7E)")
				break
			}
		}
		c.end(f)
	}

	c.checkLegacyLists(ctx, res)

	if c.http == nil || c.session == "" {
		reason := "stdio target"
		if c.http != nil {
			reason = "the server assigned no session (Mcp-Session-Id)"
		}
		c.skipAll(reason, "legacy.unknown-session", "legacy.delete")
		return
	}
	f = c.begin("legacy.unknown-session")
	f.Sent = "POST ping, Mcp-Session-Id: " + unknownSession
	r, err := c.http.post(ctx, jsonrpc.AppendRequest(nil, jsonrpc.IntID(c.id()), protocol.MethodPing, nil), c.sessionHeaders(unknownSession))
	c.expect(f, r, err, http.StatusNotFound, 0)
	c.end(f)

	f = c.begin("legacy.delete")
	f.Sent = "DELETE with the session; then POST ping"
	dr, err := c.bare(ctx, http.MethodDelete, c.sessionHeaders(c.session))
	switch {
	case err != nil:
		f.fail("DELETE: no answer: %v", err)
	case dr.status == http.StatusMethodNotAllowed:
		f.Got = "DELETE: " + dr.got()
		f.warn("the server does not let clients end sessions (405)")
	case dr.status/100 != 2:
		f.Got = "DELETE: " + dr.got()
		f.fail("DELETE of the session must succeed")
	default:
		pr, err := c.http.post(ctx, jsonrpc.AppendRequest(nil, jsonrpc.IntID(c.id()), protocol.MethodPing, nil), c.sessionHeaders(c.session))
		if err != nil {
			f.fail("ping after DELETE: no answer: %v", err)
			break
		}
		f.Got = fmt.Sprintf("DELETE: HTTP %d; ping: %s", dr.status, pr.got())
		if pr.status != http.StatusNotFound {
			f.fail("after DELETE the session must be gone (404)")
		}
	}
	c.end(f)
}

// checkLegacyLists lists what the session offers and checks that no
// legacy result carries resultType.
func (c *checker) checkLegacyLists(ctx context.Context, initRes map[string]json.RawMessage) {
	lf := c.begin("legacy.lists")
	nf := c.begin("legacy.no-result-type")
	var sent []string
	withType := []string{}
	if _, ok := initRes["resultType"]; ok {
		withType = append(withType, "initialize")
	}
	calls := []string{protocol.MethodPing}
	for _, k := range listKinds {
		if _, ok := c.legacyCaps[k.capability]; ok {
			calls = append(calls, k.method)
		}
	}
	for _, m := range calls {
		sent = append(sent, m)
		r, err := c.legacyCall(ctx, m, nil)
		if err != nil {
			lf.fail("%s: no answer: %v", m, err)
			continue
		}
		res := r.result()
		if res == nil {
			lf.fail("%s answers %s", m, r.got())
			continue
		}
		if _, ok := res["resultType"]; ok {
			withType = append(withType, m)
		}
		for _, k := range listKinds {
			if k.method == m && res[k.member] == nil {
				lf.fail("%s result has no %s array", m, k.member)
			}
		}
	}
	lf.Sent = "within the session: " + strings.Join(sent, ", ")
	lf.Got = fmt.Sprintf("%d answered", len(calls)-len(lf.fails))
	c.end(lf)
	nf.Sent = "initialize, " + strings.Join(sent, ", ")
	if len(withType) > 0 {
		nf.Got = "resultType in " + strings.Join(withType, ", ")
		nf.fail("legacy results must not carry resultType (a 2026-07-28 member)")
	} else {
		nf.Got = "no resultType"
	}
	c.end(nf)
}
