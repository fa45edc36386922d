package check

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/schema"
	"github.com/mcpkit/mcpkit/transport"
)

// listKind is one of the list methods.
type listKind struct {
	key, method, member, capability, nameField string
}

var listKinds = []listKind{
	{"tools", protocol.MethodToolsList, "tools", "tools", "name"},
	{"resources", protocol.MethodResourcesList, "resources", "resources", "uri"},
	{"resource-templates", protocol.MethodResourceTemplatesList, "resourceTemplates", "resources", "uriTemplate"},
	{"prompts", protocol.MethodPromptsList, "prompts", "prompts", "name"},
}

// maxPages bounds how many pages of one list are followed.
const maxPages = 5

// badCursor is a cursor no server issued.
const badCursor = "mcpkit-check-invalid-cursor"

// list sends one list request, in the modern era or else within the legacy
// session.
func (c *checker) list(ctx context.Context, method, cursor string) (*reply, error) {
	var params map[string]any
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	if c.modern {
		return c.call(ctx, method, params)
	}
	return c.legacyCall(ctx, method, params)
}

// page is one list answer.
type page struct {
	r     *reply
	res   map[string]json.RawMessage
	items []json.RawMessage
	next  string
}

func (c *checker) fetchPage(ctx context.Context, k listKind, cursor string) (*page, error) {
	r, err := c.list(ctx, k.method, cursor)
	if err != nil {
		return nil, err
	}
	p := &page{r: r, res: r.result()}
	if p.res == nil {
		return p, fmt.Errorf("%s answers %s", k.method, r.got())
	}
	if jsonrpc.Unmarshal(p.res[k.member], &p.items) != nil || p.res[k.member] == nil {
		return p, fmt.Errorf("%s result has no %s array", k.method, k.member)
	}
	_ = jsonrpc.Unmarshal(p.res["nextCursor"], &p.next)
	return p, nil
}

func names(items []json.RawMessage, field string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		var v string
		_ = jsonrpc.Unmarshal(jsonMember(it, field), &v)
		out[i] = v
	}
	return out
}

func jsonMember(obj json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = jsonrpc.Unmarshal(obj, &m)
	return m[key]
}

// checkLists checks every list method the server offers.
func (c *checker) checkLists(ctx context.Context) {
	for _, k := range listKinds {
		ids := []string{"list." + k.key + ".result", "list." + k.key + ".order", "list." + k.key + ".pages"}
		caps := c.caps
		if !c.modern {
			caps = c.legacyCaps
		}
		if !c.modern && !c.legacy {
			c.skipAll("no era answered", ids...)
			continue
		}
		if _, ok := caps[k.capability]; !ok {
			c.skipAll("capability "+k.capability+" not offered", ids...)
			continue
		}
		c.checkList(ctx, k, ids)
	}
}

func (c *checker) checkList(ctx context.Context, k listKind, ids []string) {
	first, err := c.fetchPage(ctx, k, "")
	if c.modern {
		f := c.begin(ids[0])
		f.Sent = k.method
		if err != nil {
			f.Got = "error"
			f.fail("%v", err)
		} else {
			checkResultType(f, first.res)
			checkTTL(f, first.res)
			checkScope(f, first.res)
		}
		c.end(f)
	} else {
		c.skip(ids[0], c.notModern())
	}
	if err != nil {
		c.skipAll(k.method+" gave no list", ids[1:]...)
		return
	}

	f := c.begin(ids[1])
	f.Sent = k.method + " twice"
	second, err := c.fetchPage(ctx, k, "")
	a := names(first.items, k.nameField)
	if err != nil {
		f.fail("second call: %v", err)
	} else {
		b := names(second.items, k.nameField)
		f.Got = fmt.Sprintf("%d and %d items", len(a), len(b))
		if strings.Join(a, "\n") != strings.Join(b, "\n") || first.next != second.next {
			f.fail("the two answers differ: [%s] then [%s]", clip(strings.Join(a, " "), 120), clip(strings.Join(b, " "), 120))
		}
	}
	c.end(f)

	f = c.begin(ids[2])
	items := append([]json.RawMessage(nil), first.items...)
	pages, next := 1, first.next
	scope := string(first.res["cacheScope"])
	seen := map[string]bool{}
	for _, n := range a {
		seen[n] = true
	}
	for next != "" && pages < maxPages {
		p, err := c.fetchPage(ctx, k, next)
		if err != nil {
			f.fail("page %d: %v", pages+1, err)
			break
		}
		pages++
		if c.modern && string(p.res["cacheScope"]) != scope {
			f.fail("page %d has cacheScope %s, the first %s: every page must have the same", pages, rawOf(p.res["cacheScope"]), scope)
		}
		for _, n := range names(p.items, k.nameField) {
			if seen[n] {
				f.fail("page %d repeats %q", pages, n)
			}
			seen[n] = true
		}
		items = append(items, p.items...)
		next = p.next
	}
	r, err := c.list(ctx, k.method, badCursor)
	f.Sent = fmt.Sprintf("%s, following nextCursor (%d page(s)); cursor %q", k.method, pages, badCursor)
	switch {
	case err != nil:
		f.fail("invalid cursor: no answer: %v", err)
	case r.errorCode() == protocol.CodeInvalidParams:
		f.Got = fmt.Sprintf("%d item(s) in %d page(s); invalid cursor: -32602", len(items), pages)
	default:
		f.Got = fmt.Sprintf("%d item(s) in %d page(s); invalid cursor: %s", len(items), pages, r.got())
		f.warn("an invalid cursor SHOULD get -32602")
	}
	c.end(f)

	switch k.key {
	case "tools":
		c.tools = nil
		for _, it := range items {
			var t tool
			_ = jsonrpc.Unmarshal(it, &t)
			c.tools = append(c.tools, t)
		}
		c.toolsListed = true
	case "resources":
		c.resources = names(items, "uri")
	case "prompts":
		c.prompts = names(items, "name")
	}
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// checkTools checks the listed tool definitions.
func (c *checker) checkTools() {
	ids := []string{"tools.names", "tools.input-schema", "tools.schemas", "tools.x-mcp-header"}
	if !c.toolsListed {
		c.skipAll("no tools listed", ids...)
		return
	}
	if len(c.tools) == 0 {
		c.skipAll("the server lists no tools", ids...)
		return
	}
	sent := fmt.Sprintf("tools/list (%d tools)", len(c.tools))

	f := c.begin("tools.names")
	f.Sent = sent
	seen := map[string]bool{}
	for _, t := range c.tools {
		if !toolName.MatchString(t.Name) {
			f.warn("tool name %q SHOULD be 1–128 characters of A-Z a-z 0-9 _ - .", clip(t.Name, 40))
		}
		if seen[t.Name] {
			f.warn("tool name %q is not unique", t.Name)
		}
		seen[t.Name] = true
	}
	c.end(f)

	f = c.begin("tools.input-schema")
	f.Sent = sent
	for _, t := range c.tools {
		switch {
		case len(t.InputSchema) == 0 || string(t.InputSchema) == "null":
			f.fail("tool %q has no inputSchema", t.Name)
		case !schema.IsObjectSchema(t.InputSchema):
			f.fail("tool %q: inputSchema root type must be \"object\"", t.Name)
		}
	}
	c.end(f)

	f = c.begin("tools.schemas")
	f.Sent = sent
	for _, t := range c.tools {
		for _, s := range []struct {
			name string
			doc  json.RawMessage
		}{{"inputSchema", t.InputSchema}, {"outputSchema", t.OutputSchema}} {
			if len(s.doc) == 0 || string(s.doc) == "null" {
				continue
			}
			if _, err := schema.Compile(s.doc); err != nil {
				f.fail("tool %q %s: %v", t.Name, s.name, err)
			}
		}
	}
	c.end(f)

	f = c.begin("tools.x-mcp-header")
	f.Sent = sent
	n := 0
	for _, t := range c.tools {
		if len(t.InputSchema) == 0 {
			continue
		}
		ps, err := transport.ParseHeaderParams(t.InputSchema)
		if err != nil {
			f.fail("tool %q: %v", t.Name, err)
		}
		n += len(ps)
	}
	f.Got = fmt.Sprintf("%d mirrored parameter(s)", n)
	c.end(f)
}

// findTool returns the listed definition of the named tool.
func (c *checker) findTool(name string) *tool {
	for i := range c.tools {
		if c.tools[i].Name == name {
			return &c.tools[i]
		}
	}
	return nil
}

// headerParams returns the x-mcp-header parameters of a tools/call's tool.
func (c *checker) headerParams(q *request) []transport.HeaderParam {
	if q.method != protocol.MethodToolsCall {
		return nil
	}
	name, _ := q.params["name"].(string)
	t := c.findTool(name)
	if t == nil {
		return nil
	}
	ps, _ := transport.ParseHeaderParams(t.InputSchema)
	return ps
}

// unknownURI is a resource URI no server lists.
const unknownURI = "mcpkit-check://does-not-exist"

// checkResources reads the first listed resource and an unknown one.
func (c *checker) checkResources(ctx context.Context) {
	if !c.modern {
		c.skipAll(c.notModern(), "resources.read", "resources.read-unknown")
		return
	}
	if _, ok := c.caps["resources"]; !ok {
		c.skipAll("capability resources not offered", "resources.read", "resources.read-unknown")
		return
	}
	if len(c.resources) == 0 {
		c.skip("resources.read", "the server lists no resources")
	} else {
		f := c.begin("resources.read")
		f.Sent = "resources/read " + c.resources[0]
		r, err := c.call(ctx, protocol.MethodResourcesRead, map[string]any{"uri": c.resources[0]})
		switch res := r.result(); {
		case err != nil:
			f.fail("no answer: %v", err)
		case res == nil:
			f.Got = r.got()
			f.fail("a listed resource must be readable")
		default:
			var contents []json.RawMessage
			if jsonrpc.Unmarshal(res["contents"], &contents) != nil || res["contents"] == nil {
				f.fail("result has no contents array")
			}
			checkResultType(f, res)
			checkTTL(f, res)
			checkScope(f, res)
		}
		c.end(f)
	}

	f := c.begin("resources.read-unknown")
	f.Sent = "resources/read " + unknownURI
	r, err := c.call(ctx, protocol.MethodResourcesRead, map[string]any{"uri": unknownURI})
	if err != nil {
		f.fail("no answer: %v", err)
		c.end(f)
		return
	}
	f.Got = r.got()
	switch r.errorCode() {
	case protocol.CodeInvalidParams:
		var data struct {
			URI *string `json:"uri"`
		}
		_ = jsonrpc.Unmarshal(r.msg.Error.Data, &data)
		if data.URI == nil || *data.URI != unknownURI {
			f.fail("error data.uri must be %q", unknownURI)
		}
	case protocol.CodeResourceNotFoundLegacy:
		f.warn("-32002 is the legacy code; revision 2026-07-28 uses -32602 with data.uri")
	default:
		f.fail("want JSON-RPC error -32602 with data.uri")
	}
	c.end(f)
}

// checkCall calls the tool the operator named.
func (c *checker) checkCall(ctx context.Context) {
	if c.o.CallTool == "" {
		c.skipAll("no tool to call given (Options.CallTool)", "call.result", "call.structured")
		return
	}
	if !c.modern {
		c.skipAll(c.notModern(), "call.result", "call.structured")
		return
	}
	var args any
	if err := jsonrpc.Unmarshal(c.o.CallArgs, &args); err != nil {
		f := c.begin("call.result")
		f.fail("Options.CallArgs is not JSON: %v", err)
		c.end(f)
		c.skip("call.structured", "no call made")
		return
	}
	f := c.begin("call.result")
	f.Sent = "tools/call " + c.o.CallTool
	r, err := c.call(ctx, protocol.MethodToolsCall, map[string]any{"name": c.o.CallTool, "arguments": args})
	var res map[string]json.RawMessage
	if err != nil {
		f.fail("no answer: %v", err)
	} else if res = r.result(); res == nil {
		f.Got = r.got()
		f.fail("tools/call must answer with a result")
	}
	var rt string
	if res != nil {
		_ = jsonrpc.Unmarshal(res["resultType"], &rt)
		f.Got = "resultType " + rawOf(res["resultType"])
		switch rt {
		case string(protocol.ResultComplete):
			var content []json.RawMessage
			if jsonrpc.Unmarshal(res["content"], &content) != nil || res["content"] == nil {
				f.fail("result has no content array")
			}
		case "input_required":
			if res["inputRequests"] == nil && res["requestState"] == nil {
				f.fail("an input_required result needs inputRequests or requestState")
			}
		default:
			f.fail(`resultType must be "complete" or "input_required"`)
		}
	}
	c.end(f)

	t := c.findTool(c.o.CallTool)
	switch {
	case res == nil:
		c.skip("call.structured", "no result")
	case t == nil || len(t.OutputSchema) == 0 || string(t.OutputSchema) == "null":
		c.skip("call.structured", "the tool has no outputSchema")
	case rt != string(protocol.ResultComplete):
		c.skip("call.structured", "the result is not complete")
	case string(res["isError"]) == "true":
		c.skip("call.structured", "the result is a tool error, which carries no structuredContent")
	default:
		f := c.begin("call.structured")
		f.Sent = "tools/call " + c.o.CallTool
		sc := res["structuredContent"]
		f.Got = "structuredContent " + rawOf(sc)
		s, err := schema.Compile(t.OutputSchema)
		switch {
		case err != nil:
			f.fail("outputSchema does not compile: %v", err)
		case sc == nil:
			f.fail("a tool with an outputSchema must return structuredContent")
		default:
			if err := s.ValidateJSON(sc); err != nil {
				f.fail("structuredContent does not validate: %v", err)
			}
		}
		c.end(f)
	}
}
