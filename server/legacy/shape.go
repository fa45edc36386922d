package legacy

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// What each legacy revision lacks of what the core sends, from the
// schemas (schema/<revision>/schema.ts), and how a session of an older
// revision gets it:
//
//	added in    member, block or message                     older revisions get
//	2025-03-26  ServerCapabilities.completions               nothing
//	            Tool.annotations                             nothing
//	            audio content (results, sampling)            a text block saying it was omitted
//	            notifications/progress message               nothing
//	2025-06-18  title: Tool, Resource, ResourceTemplate,     nothing
//	            Prompt, PromptArgument, serverInfo
//	            _meta: Tool, Resource, ResourceTemplate,     nothing
//	            Prompt, resource contents, content blocks
//	            Tool.outputSchema                            nothing
//	            CallToolResult.structuredContent             nothing; its JSON as a text block when
//	                                                         the result has no text block
//	            resource_link content                        a text block with the link's name and URI
//	            Annotations.lastModified                     nothing
//	            elicitation/create (elicitation capability)  the capability is not declared
//	2025-11-25  icons: Tool, Resource, ResourceTemplate,     nothing
//	            Prompt, resource_link, serverInfo
//	            serverInfo description and websiteUrl        nothing
//	            elicitation mode, url mode, elicitationId,   mode is left out of form mode; url
//	            notifications/elicitation/complete           mode is not declared
//	            sampling tools, toolChoice, tool_use and     sampling.tools is not declared
//	            tool_result blocks
//	            SamplingMessage _meta, several blocks        nothing; one message per block
//	2026-07-28  resultType, ttlMs, cacheScope, serverInfo    nothing (every legacy revision)
//	            in result _meta, capabilities.extensions
//	            structuredContent other than an object      as structuredContent before 2025-06-18
//
// Capabilities the client declares that its revision does not define
// (elicitation before 2025-06-18, elicitation modes and sampling's context
// and tools before 2025-11-25) are not passed on to the core, so a handler
// that needs them fails as it does for a client that did not declare them.
//
// Only a result's header is changed in place: what else it holds (tools,
// resources, prompts, content blocks, which the registries or the handler
// may share) is copied before anything is left out, and only when there
// is something to leave out.

// revision is a legacy revision with what it has of later additions.
type revision struct {
	name string
	// since2025_03_26 and the others: the members added in that revision.
	since2025_03_26 bool
	since2025_06_18 bool
	since2025_11_25 bool
}

// revisionOf returns the revision of a negotiated version. Versions are
// dates, which order as strings.
func revisionOf(v string) revision {
	return revision{
		name:            v,
		since2025_03_26: v >= protocol.Version2025_03_26,
		since2025_06_18: v >= protocol.Version2025_06_18,
		since2025_11_25: v >= protocol.Version2025_11_25,
	}
}

// clientCapabilities returns the capabilities the client declared, without
// those its revision does not define.
func (r revision) clientCapabilities(c *protocol.ClientCapabilities) *protocol.ClientCapabilities {
	if r.since2025_11_25 {
		return c
	}
	out := *c
	out.Tasks = nil // revision 2025-11-25's
	if !r.since2025_06_18 {
		out.Elicitation = nil
	} else if out.Elicitation != nil {
		out.Elicitation = &protocol.ElicitationCapability{} // form mode
	}
	if out.Sampling != nil {
		out.Sampling = &protocol.SamplingCapability{}
	}
	return &out
}

// serverCapabilities shapes the core's capabilities.
func (r revision) serverCapabilities(c protocol.ServerCapabilities) protocol.ServerCapabilities {
	c.Extensions = nil
	if !r.since2025_11_25 {
		c.Tasks = nil
	}
	if !r.since2025_03_26 {
		c.Completions = nil
	}
	return c
}

// implementation shapes the server's identity.
func (r revision) implementation(i protocol.Implementation) protocol.Implementation {
	if !r.since2025_11_25 {
		i.Description, i.WebsiteURL, i.Icons = "", "", nil
	}
	if !r.since2025_06_18 {
		i.Title = ""
	}
	return i
}

// annotations returns a without lastModified before 2025-06-18.
func (r revision) annotations(a *protocol.Annotations) (*protocol.Annotations, bool) {
	if a == nil || r.since2025_06_18 || a.LastModified == "" {
		return a, false
	}
	c := *a
	c.LastModified = ""
	return &c, true
}

// copied returns copies of the elements of list, each changed by shape,
// in one allocation: the registry's values are shared and never changed.
func copied[T any](list []*T, shape func(*T)) []*T {
	out := make([]*T, len(list))
	copies := make([]T, len(list))
	for i, v := range list {
		copies[i] = *v
		shape(&copies[i])
		out[i] = &copies[i]
	}
	return out
}

func (r revision) tools(list []*protocol.Tool) []*protocol.Tool {
	if r.since2025_11_25 {
		return list
	}
	return copied(list, func(c *protocol.Tool) {
		c.Icons, c.Execution = nil, nil
		if !r.since2025_06_18 {
			c.Title, c.OutputSchema, c.Meta = "", nil, nil
		}
		if !r.since2025_03_26 {
			c.Annotations = nil
		}
	})
}

func (r revision) resources(list []*protocol.Resource) []*protocol.Resource {
	if r.since2025_11_25 {
		return list
	}
	return copied(list, func(c *protocol.Resource) { *c = r.resource(c) })
}

// resource returns a copy of res shaped for the revision (before
// 2025-11-25).
func (r revision) resource(res *protocol.Resource) protocol.Resource {
	c := *res
	c.Icons = nil
	if !r.since2025_06_18 {
		c.Title, c.Meta = "", nil
		c.Annotations, _ = r.annotations(c.Annotations)
	}
	return c
}

func (r revision) templates(list []*protocol.ResourceTemplate) []*protocol.ResourceTemplate {
	if r.since2025_11_25 {
		return list
	}
	return copied(list, func(c *protocol.ResourceTemplate) {
		c.Icons = nil
		if !r.since2025_06_18 {
			c.Title, c.Meta = "", nil
			c.Annotations, _ = r.annotations(c.Annotations)
		}
	})
}

func (r revision) prompts(list []*protocol.Prompt) []*protocol.Prompt {
	if r.since2025_11_25 {
		return list
	}
	return copied(list, func(c *protocol.Prompt) {
		c.Icons = nil
		if !r.since2025_06_18 {
			c.Title, c.Meta = "", nil
			c.Arguments = r.promptArguments(c.Arguments)
		}
	})
}

// promptArguments returns the arguments without titles, copied when any
// has one.
func (r revision) promptArguments(args []*protocol.PromptArgument) []*protocol.PromptArgument {
	titled := false
	for _, a := range args {
		titled = titled || a.Title != ""
	}
	if !titled {
		return args
	}
	return copied(args, func(c *protocol.PromptArgument) { c.Title = "" })
}

// contents returns resource contents without _meta before 2025-06-18,
// copied when any has one.
func (r revision) contents(list []*protocol.ResourceContents) []*protocol.ResourceContents {
	if r.since2025_06_18 {
		return list
	}
	var out []*protocol.ResourceContents
	for i, c := range list {
		if c.Meta == nil {
			if out != nil {
				out[i] = c
			}
			continue
		}
		if out == nil {
			out = make([]*protocol.ResourceContents, len(list))
			copy(out, list[:i])
		}
		d := *c
		d.Meta = nil
		out[i] = &d
	}
	if out == nil {
		return list
	}
	return out
}

// content returns a block of a tool result or prompt message as the
// revision can carry it, and whether that is not the block itself: a copy
// without the members the revision lacks, or a text block standing for a
// block of a type it lacks.
func (r revision) content(c protocol.Content) (protocol.Content, bool) {
	if r.since2025_11_25 {
		return c, false
	}
	if r.since2025_06_18 {
		if l, ok := c.(*protocol.ResourceLink); ok && l.Icons != nil {
			t := *l
			t.Icons = nil
			return &t, true
		}
		return c, false
	}
	switch b := c.(type) {
	case *protocol.TextContent:
		a, changed := r.annotations(b.Annotations)
		if b.Meta == nil && !changed {
			return b, false
		}
		t := *b
		t.Annotations, t.Meta = a, nil
		return &t, true
	case *protocol.ImageContent:
		a, changed := r.annotations(b.Annotations)
		if b.Meta == nil && !changed {
			return b, false
		}
		t := *b
		t.Annotations, t.Meta = a, nil
		return &t, true
	case *protocol.AudioContent:
		if !r.since2025_03_26 {
			return &protocol.TextContent{Text: "[audio content omitted: not supported by protocol revision " + r.name + "]"}, true
		}
		a, changed := r.annotations(b.Annotations)
		if b.Meta == nil && !changed {
			return b, false
		}
		t := *b
		t.Annotations, t.Meta = a, nil
		return &t, true
	case *protocol.ResourceLink:
		a, _ := r.annotations(b.Annotations)
		return &protocol.TextContent{Text: "[resource link: " + b.Name + " (" + b.URI + ")]", Annotations: a}, true
	case *protocol.EmbeddedResource:
		a, changed := r.annotations(b.Annotations)
		if b.Meta == nil && !changed && (b.Resource == nil || b.Resource.Meta == nil) {
			return b, false
		}
		t := *b
		t.Annotations, t.Meta = a, nil
		if b.Resource != nil && b.Resource.Meta != nil {
			res := *b.Resource
			res.Meta = nil
			t.Resource = &res
		}
		return &t, true
	}
	return c, false
}

// contentList shapes each block, copying the list when any changes.
func (r revision) contentList(list []protocol.Content) ([]protocol.Content, bool) {
	if r.since2025_11_25 {
		return list, false
	}
	var out []protocol.Content
	for i, c := range list {
		d, changed := r.content(c)
		if changed && out == nil {
			out = make([]protocol.Content, len(list), len(list)+1)
			copy(out, list[:i])
		}
		if out != nil {
			out[i] = d
		}
	}
	if out == nil {
		return list, false
	}
	return out, true
}

// callTool shapes a tool result: blocks as content does, and
// structuredContent only where the revision has it (from 2025-06-18, as an
// object); where it is left out and the result has no text block, its JSON
// becomes one, as the revisions that have it ask tools to send.
func (r revision) callTool(res *protocol.CallToolResult) *protocol.CallToolResult {
	content, changed := r.contentList(res.Content)
	sc := res.StructuredContent
	drop := len(sc) > 0 && (!r.since2025_06_18 || firstNonSpace(sc) != '{')
	if !changed && !drop {
		return res
	}
	c := *res
	c.Content = content
	if drop {
		c.StructuredContent = nil
		if !hasText(res.Content) {
			if !changed {
				c.Content = append(make([]protocol.Content, 0, len(content)+1), content...)
			}
			c.Content = append(c.Content, &protocol.TextContent{Text: string(sc)})
		}
	}
	return &c
}

func hasText(list []protocol.Content) bool {
	for _, c := range list {
		if _, ok := c.(*protocol.TextContent); ok {
			return true
		}
	}
	return false
}

// getPrompt shapes the blocks of a prompt's messages.
func (r revision) getPrompt(res *protocol.GetPromptResult) *protocol.GetPromptResult {
	if r.since2025_11_25 {
		return res
	}
	var msgs []*protocol.PromptMessage
	for i, m := range res.Messages {
		d, changed := r.content(m.Content)
		if changed && msgs == nil {
			msgs = make([]*protocol.PromptMessage, len(res.Messages))
			copy(msgs, res.Messages[:i])
		}
		if msgs == nil {
			continue
		}
		if changed {
			m = &protocol.PromptMessage{Role: m.Role, Content: d}
		}
		msgs[i] = m
	}
	if msgs == nil {
		return res
	}
	c := *res
	c.Messages = msgs
	return &c
}

// createMessage shapes sampling params for a revision before 2025-11-25:
// messages without _meta, one block each, blocks as content shapes them.
// Tool use needs sampling.tools, which those revisions do not define.
func (r revision) createMessage(p *protocol.CreateMessageParams) (*protocol.CreateMessageParams, error) {
	if len(p.Tools) > 0 || p.ToolChoice != nil {
		return nil, missingSamplingTools
	}
	c := *p
	c.Messages = make([]*protocol.SamplingMessage, 0, len(p.Messages))
	for _, m := range p.Messages {
		for _, b := range m.Content {
			switch b.(type) {
			case *protocol.ToolUseContent, *protocol.ToolResultContent:
				return nil, missingSamplingTools
			}
			b, _ = r.content(b)
			c.Messages = append(c.Messages, &protocol.SamplingMessage{Role: m.Role, Content: []protocol.Content{b}})
		}
	}
	return &c, nil
}

var missingSamplingTools = protocol.MissingCapability(protocol.ClientCapabilities{Sampling: &protocol.SamplingCapability{Tools: protocol.Object{}}})

// notifier returns the notifier of a request's progress and log messages
// as the revision reads them: before 2025-03-26, progress without message.
func (r revision) notifier(n transport.Notifier) transport.Notifier {
	if r.since2025_03_26 || n == nil {
		return n
	}
	return progressNotifier{n}
}

// progressNotifier leaves message out of notifications/progress.
type progressNotifier struct{ n transport.Notifier }

func (p progressNotifier) Notify(msg []byte) error {
	m, err := jsonrpc.Decode(msg)
	if err != nil || !m.IsNotification() || m.Method != protocol.NotificationProgress || len(m.Params) == 0 || m.Params[0] != '{' {
		return p.n.Notify(msg)
	}
	params := make([]byte, 0, len(m.Params))
	params = append(params, '{')
	_ = jsonrpc.EachMember(m.Params, func(key []byte, value jsontext.Value) error {
		if string(key) != "message" {
			params = appendMember(params, key, value)
		}
		return nil
	})
	return p.n.Notify(jsonrpc.AppendNotification(nil, m.Method, append(params, '}')))
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}
