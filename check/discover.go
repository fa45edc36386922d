package check

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// detect probes the server with server/discover and with initialize and
// records its era. It fails only when neither probe got any answer.
func (c *checker) detect(ctx context.Context) error {
	if c.http == nil {
		std, err := c.startProcess()
		if err != nil {
			return fmt.Errorf("check: starting %s: %w", c.target, err)
		}
		c.std = std
	}
	f := c.begin("era.detect")
	f.Sent = "server/discover; initialize (protocolVersion " + protocol.Version2025_11_25 + ")"
	dr, derr := c.call(ctx, protocol.MethodDiscover, nil)
	c.discoverReply = dr
	if res := dr.result(); res != nil {
		c.modern, c.discover = true, res
		_ = jsonrpc.Unmarshal(res["capabilities"], &c.caps)
	}
	ir, ierr := c.initialize(ctx)
	c.initReply = ir
	if derr != nil && ierr != nil {
		return fmt.Errorf("check: %s cannot be reached: %w", c.target, derr)
	}
	switch {
	case c.modern && c.legacy:
		c.era = eraDual
	case c.modern:
		c.era = eraModern
	case c.legacy:
		c.era = eraLegacy
	case c.detectSSE(ctx):
		c.era = eraSSE
	}
	f.Got = "server/discover: " + answerOf(dr, derr) + "; initialize: " + answerOf(ir, ierr) + c.sseNote() + " → " + c.era
	if c.era == eraSSE {
		f.Sent += "; GET (HTTP+SSE)"
		f.Got = "server/discover: " + answerOf(dr, derr) + "; initialize: " + answerOf(ir, ierr) + "; GET: endpoint event → " + c.era
	}
	if c.era == eraUnknown {
		f.fail("neither server/discover nor initialize got a result")
	}
	c.end(f)
	return nil
}

func answerOf(r *reply, err error) string {
	if err != nil {
		return "no answer (" + clip(err.Error(), 60) + ")"
	}
	if r.result() != nil {
		return "result"
	}
	return r.got()
}

// notModern is the reason modern checks are skipped.
func (c *checker) notModern() string {
	if c.legacy {
		return "legacy-only server (initialize handshake): modern check"
	}
	return "server/discover gave no result"
}

// checkDiscover checks the server/discover result.
func (c *checker) checkDiscover(ctx context.Context) {
	rest := []string{"discover.result-type", "discover.supported-versions", "discover.server-info", "discover.ttl", "discover.cache-scope"}
	if !c.modern && c.legacy {
		c.skipAll(c.notModern(), append([]string{"discover.answers"}, rest...)...)
		return
	}
	f := c.begin("discover.answers")
	f.Sent = protocol.MethodDiscover
	f.Got = answerOf(c.discoverReply, nil)
	if c.discoverReply == nil {
		f.Got = "no answer"
	}
	if !c.modern {
		f.fail("server/discover must answer with a result")
		c.end(f)
		c.skipAll("server/discover gave no result", rest...)
		return
	}
	c.end(f)
	res := c.discover

	f = c.begin("discover.result-type")
	f.Sent = protocol.MethodDiscover
	checkResultType(f, res)
	c.end(f)

	f = c.begin("discover.supported-versions")
	f.Sent = protocol.MethodDiscover
	var vs []string
	if err := jsonrpc.Unmarshal(res["supportedVersions"], &vs); err != nil || res["supportedVersions"] == nil {
		f.Got = "supportedVersions " + rawOf(res["supportedVersions"])
		f.fail("supportedVersions must be an array of strings")
	} else {
		f.Got = "supportedVersions " + strings.Join(vs, ", ")
		if len(vs) == 0 {
			f.fail("supportedVersions is empty")
		} else if !contains(vs, c.version) {
			f.fail("supportedVersions does not list %s, the version of the request", c.version)
		}
	}
	c.end(f)

	f = c.begin("discover.server-info")
	f.Sent = protocol.MethodDiscover
	var meta map[string]json.RawMessage
	_ = jsonrpc.Unmarshal(res["_meta"], &meta)
	var info struct {
		Name    *string `json:"name"`
		Version *string `json:"version"`
	}
	if raw := meta[protocol.MetaServerInfo]; raw == nil {
		f.Got = "no " + protocol.MetaServerInfo
		f.warn("servers SHOULD identify themselves in _meta %s", protocol.MetaServerInfo)
	} else if jsonrpc.Unmarshal(raw, &info) != nil || info.Name == nil || info.Version == nil || *info.Name == "" {
		f.Got = protocol.MetaServerInfo + " " + clip(string(raw), 80)
		f.fail("serverInfo must be an Implementation with name and version")
	} else {
		f.Got = *info.Name + " " + *info.Version
	}
	c.end(f)

	f = c.begin("discover.ttl")
	f.Sent = protocol.MethodDiscover
	checkTTL(f, res)
	c.end(f)

	f = c.begin("discover.cache-scope")
	f.Sent = protocol.MethodDiscover
	checkScope(f, res)
	c.end(f)
}

// checkResultType requires resultType "complete".
func checkResultType(f *finding, res map[string]json.RawMessage) {
	var rt string
	f.Got = addGot(f.Got, "resultType "+rawOf(res["resultType"]))
	if jsonrpc.Unmarshal(res["resultType"], &rt) != nil || rt != string(protocol.ResultComplete) {
		f.fail(`resultType must be "complete"`)
	}
}

// checkTTL requires ttlMs to be an integer ≥ 0.
func checkTTL(f *finding, res map[string]json.RawMessage) {
	raw := res["ttlMs"]
	f.Got = addGot(f.Got, "ttlMs "+rawOf(raw))
	if raw == nil {
		f.fail("ttlMs is missing")
		return
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		var x float64
		if jsonrpc.Unmarshal(raw, &x) != nil || x != float64(int64(x)) {
			f.fail("ttlMs must be an integer")
			return
		}
		n = int64(x)
	}
	if n < 0 {
		f.fail("ttlMs must be ≥ 0")
	}
}

// checkScope requires cacheScope public or private.
func checkScope(f *finding, res map[string]json.RawMessage) {
	var s string
	f.Got = addGot(f.Got, "cacheScope "+rawOf(res["cacheScope"]))
	if jsonrpc.Unmarshal(res["cacheScope"], &s) != nil || (s != string(protocol.CachePublic) && s != string(protocol.CachePrivate)) {
		f.fail(`cacheScope must be "public" or "private"`)
	}
}

func addGot(got, s string) string {
	if got == "" {
		return s
	}
	return got + ", " + s
}

func rawOf(raw json.RawMessage) string {
	if raw == nil {
		return "absent"
	}
	return clip(string(raw), 60)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkMeta checks that the required per-request _meta fields are enforced.
func (c *checker) checkMeta(ctx context.Context) {
	ids := []string{"meta.missing", "meta.no-protocol-version", "meta.no-client-capabilities", "meta.no-client-info"}
	if !c.modern {
		c.skipAll(c.notModern(), ids...)
		return
	}
	without := func(key string) map[string]any {
		m := c.meta()
		delete(m, key)
		return m
	}
	cases := []struct {
		id     string
		meta   map[string]any
		accept bool
		sent   string
	}{
		{"meta.missing", nil, false, "server/discover without _meta"},
		{"meta.no-protocol-version", without(protocol.MetaProtocolVersion), false, "server/discover, _meta without protocolVersion"},
		{"meta.no-client-capabilities", without(protocol.MetaClientCapabilities), false, "server/discover, _meta without clientCapabilities"},
		{"meta.no-client-info", without(protocol.MetaClientInfo), true, "server/discover, _meta without clientInfo"},
	}
	for _, tc := range cases {
		f := c.begin(tc.id)
		f.Sent = tc.sent
		r, err := c.send(ctx, &request{method: protocol.MethodDiscover, meta: tc.meta}, c.version)
		if err != nil {
			f.Got = "no answer"
			f.fail("%v", err)
			c.end(f)
			continue
		}
		f.Got = r.got()
		if tc.accept {
			if r.result() == nil {
				f.fail("clientInfo is optional: the request must be served")
			}
		} else {
			if r.errorCode() != protocol.CodeInvalidParams {
				f.fail("want JSON-RPC error -32602")
			}
			if r.status != 0 && r.status != http.StatusBadRequest {
				f.fail("want HTTP 400, got %d", r.status)
			}
		}
		c.end(f)
	}
}

// checkVersion checks the answer to an unsupported protocol version.
func (c *checker) checkVersion(ctx context.Context) {
	const bogus = "1900-01-01"
	if !c.modern {
		c.skipAll(c.notModern(), "version.unsupported", "http.unsupported-version")
		return
	}
	q := c.modernReq(protocol.MethodDiscover, nil)
	q.meta[protocol.MetaProtocolVersion] = bogus
	f := c.begin("version.unsupported")
	f.Sent = "server/discover with protocolVersion " + bogus + " (header and _meta)"
	r, err := c.send(ctx, q, bogus)
	if err != nil {
		f.Got = "no answer"
		f.fail("%v", err)
		c.end(f)
		if c.http != nil {
			c.skip("http.unsupported-version", "no answer")
		}
		return
	}
	f.Got = r.got()
	if r.errorCode() != protocol.CodeUnsupportedProtocolVersion {
		f.fail("want JSON-RPC error -32022 (UnsupportedProtocolVersion)")
	} else {
		var data struct {
			Supported json.RawMessage `json:"supported"`
			Requested *string         `json:"requested"`
		}
		_ = jsonrpc.Unmarshal(r.msg.Error.Data, &data)
		var sup []string
		if jsonrpc.Unmarshal(data.Supported, &sup) != nil || data.Supported == nil || data.Supported[0] != '[' {
			f.fail("data.supported must be an array of versions")
		}
		if data.Requested == nil || *data.Requested != bogus {
			f.fail("data.requested must be %q", bogus)
		}
	}
	c.end(f)
	if c.http == nil {
		return
	}
	f = c.begin("http.unsupported-version")
	f.Sent = "POST server/discover, MCP-Protocol-Version: " + bogus
	f.Got = r.got()
	if r.status != http.StatusBadRequest {
		f.fail("want HTTP 400")
	}
	if r.ctype != "application/json" || r.msg == nil || r.msg.Error == nil {
		f.fail("want an application/json JSON-RPC error body")
	}
	c.noteError("http.unsupported-version", r)
	c.end(f)
}

// capability pairs a server capability with a method it makes available.
var capabilityMethods = []struct {
	cap, method string
}{
	{"tools", protocol.MethodToolsList},
	{"resources", protocol.MethodResourcesList},
	{"prompts", protocol.MethodPromptsList},
	{"completions", protocol.MethodComplete},
}

// checkCapabilities checks that what server/discover lists is answered and
// what it does not list answers -32601.
func (c *checker) checkCapabilities(ctx context.Context) {
	if !c.modern {
		c.skip("discover.capabilities", c.notModern())
		return
	}
	f := c.begin("discover.capabilities")
	var sent, got []string
	for _, cm := range capabilityMethods {
		_, listed := c.caps[cm.cap]
		var params map[string]any
		if cm.method == protocol.MethodComplete {
			params = map[string]any{
				"ref":      map[string]any{"type": protocol.RefPrompt, "name": "mcpkit-check"},
				"argument": map[string]any{"name": "x", "value": ""},
			}
		}
		sent = append(sent, cm.method)
		r, err := c.call(ctx, cm.method, params)
		if err != nil {
			f.fail("%s: no answer: %v", cm.method, err)
			continue
		}
		code := r.errorCode()
		switch {
		case listed && cm.method != protocol.MethodComplete && r.result() == nil:
			f.fail("%s is listed but %s answers %s", cm.cap, cm.method, r.got())
		case listed && code == protocol.CodeMethodNotFound:
			f.fail("%s is listed but %s answers -32601", cm.cap, cm.method)
		case !listed && code != protocol.CodeMethodNotFound:
			f.fail("%s is not listed but %s answers %s (want -32601)", cm.cap, cm.method, r.got())
		}
		state := "absent"
		if listed {
			state = "listed"
		}
		got = append(got, fmt.Sprintf("%s %s: %s", cm.cap, state, short(r)))
	}
	f.Sent = strings.Join(sent, ", ")
	f.Got = strings.Join(got, "; ")
	c.end(f)
}

// short is a compact form of a reply: "result" or the error code.
func short(r *reply) string {
	switch {
	case r.result() != nil:
		return "result"
	case r.errorCode() != 0:
		return strconv.FormatInt(r.errorCode(), 10)
	}
	return r.got()
}
