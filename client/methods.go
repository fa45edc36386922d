package client

import (
	"context"
	"encoding/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// ListOptions adjust a list request.
type ListOptions struct {
	// Cursor continues a previous page.
	Cursor string
	// All follows nextCursor and returns every item.
	All bool
	// NoCache bypasses the cache.
	NoCache bool
}

type cursorParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// Discover returns the server's server/discover result (modern era).
func (s *Session) Discover(ctx context.Context) (*protocol.DiscoverResult, error) {
	var r protocol.DiscoverResult
	if err := s.Call(ctx, protocol.MethodDiscover, nil, &r, nil); err != nil {
		return nil, err
	}
	return &r, nil
}

// ListTools lists the server's tools. Over HTTP, tools whose x-mcp-header
// annotations break the spec's rules are left out, with a logged warning.
func (s *Session) ListTools(ctx context.Context, o *ListOptions) (*protocol.ListToolsResult, error) {
	var out protocol.ListToolsResult
	err := listAll(ctx, s, protocol.MethodToolsList, o, &out, func(page *protocol.ListToolsResult) string {
		out.Tools = append(out.Tools, page.Tools...)
		out.ResultHeader, out.NextCursor, out.CacheHints = page.ResultHeader, page.NextCursor, page.CacheHints
		return page.NextCursor
	})
	if err != nil {
		return nil, err
	}
	out.Tools = s.acceptTools(out.Tools)
	return &out, nil
}

// acceptTools records the tools' x-mcp-header parameters and drops the
// tools whose annotations are invalid (where headers are carried).
func (s *Session) acceptTools(tools []*protocol.Tool) []*protocol.Tool {
	http := s.conn.CarriesHeaders()
	kept := tools[:0]
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tools {
		ps, err := transport.ParseHeaderParams(t.InputSchema)
		if err != nil && http {
			s.c.logger.Warn("ignoring tool with an invalid x-mcp-header annotation", "tool", t.Name, "reason", err.Error())
			continue
		}
		s.tools[t.Name] = ps
		kept = append(kept, t)
	}
	return kept
}

// ListResources lists the server's resources.
func (s *Session) ListResources(ctx context.Context, o *ListOptions) (*protocol.ListResourcesResult, error) {
	var out protocol.ListResourcesResult
	err := listAll(ctx, s, protocol.MethodResourcesList, o, &out, func(page *protocol.ListResourcesResult) string {
		out.Resources = append(out.Resources, page.Resources...)
		out.ResultHeader, out.NextCursor, out.CacheHints = page.ResultHeader, page.NextCursor, page.CacheHints
		return page.NextCursor
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListResourceTemplates lists the server's resource templates.
func (s *Session) ListResourceTemplates(ctx context.Context, o *ListOptions) (*protocol.ListResourceTemplatesResult, error) {
	var out protocol.ListResourceTemplatesResult
	err := listAll(ctx, s, protocol.MethodResourceTemplatesList, o, &out, func(page *protocol.ListResourceTemplatesResult) string {
		out.ResourceTemplates = append(out.ResourceTemplates, page.ResourceTemplates...)
		out.ResultHeader, out.NextCursor, out.CacheHints = page.ResultHeader, page.NextCursor, page.CacheHints
		return page.NextCursor
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPrompts lists the server's prompts.
func (s *Session) ListPrompts(ctx context.Context, o *ListOptions) (*protocol.ListPromptsResult, error) {
	var out protocol.ListPromptsResult
	err := listAll(ctx, s, protocol.MethodPromptsList, o, &out, func(page *protocol.ListPromptsResult) string {
		out.Prompts = append(out.Prompts, page.Prompts...)
		out.ResultHeader, out.NextCursor, out.CacheHints = page.ResultHeader, page.NextCursor, page.CacheHints
		return page.NextCursor
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// listAll fetches one page, or every page with o.All; add appends a page's
// items to the combined result and returns its next cursor. The combined
// result keeps the last page's header and cache hints.
func listAll[R any](ctx context.Context, s *Session, method string, o *ListOptions, out *R, add func(*R) string) error {
	var lo ListOptions
	if o != nil {
		lo = *o
	}
	cursor := lo.Cursor
	for pages := 0; pages < 10000; pages++ {
		var page R
		if err := s.Call(ctx, method, cursorParams{Cursor: cursor}, &page, &CallOptions{NoCache: lo.NoCache}); err != nil {
			return err
		}
		next := add(&page)
		if !lo.All || next == "" {
			return nil
		}
		cursor = next
	}
	return nil
}

type callToolParams struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments,omitempty"`
}

// CallTool calls a tool with arguments (any value encoding to a JSON
// object, or nil).
func (s *Session) CallTool(ctx context.Context, name string, arguments any, o *CallOptions) (*protocol.CallToolResult, error) {
	var r protocol.CallToolResult
	if err := s.Call(ctx, protocol.MethodToolsCall, callToolParams{Name: name, Arguments: arguments}, &r, o); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReadResource reads a resource.
func (s *Session) ReadResource(ctx context.Context, uri string, o *CallOptions) (*protocol.ReadResourceResult, error) {
	var r protocol.ReadResourceResult
	if err := s.Call(ctx, protocol.MethodResourcesRead, struct {
		URI string `json:"uri"`
	}{uri}, &r, o); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetPrompt gets a prompt with its arguments.
func (s *Session) GetPrompt(ctx context.Context, name string, arguments map[string]string, o *CallOptions) (*protocol.GetPromptResult, error) {
	var r protocol.GetPromptResult
	if err := s.Call(ctx, protocol.MethodPromptsGet, struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments,omitempty"`
	}{name, arguments}, &r, o); err != nil {
		return nil, err
	}
	return &r, nil
}

// Complete asks for completions of an argument of a prompt or a resource
// template.
func (s *Session) Complete(ctx context.Context, ref protocol.CompleteReference, arg protocol.CompleteArgument, resolved map[string]string) (*protocol.Completion, error) {
	p := struct {
		Ref      protocol.CompleteReference `json:"ref"`
		Argument protocol.CompleteArgument  `json:"argument"`
		Context  *protocol.CompleteContext  `json:"context,omitempty"`
	}{Ref: ref, Argument: arg}
	if len(resolved) > 0 {
		p.Context = &protocol.CompleteContext{Arguments: resolved}
	}
	var r protocol.CompleteResult
	if err := s.Call(ctx, protocol.MethodComplete, p, &r, nil); err != nil {
		return nil, err
	}
	return &r.Completion, nil
}

// Ping pings a legacy server (the modern era has no ping).
func (s *Session) Ping(ctx context.Context) error {
	return s.Call(ctx, protocol.MethodPing, nil, nil, nil)
}

// SetLogLevel sets the session's log level on a legacy server; in the
// modern era the level travels with each request (Options.LogLevel).
func (s *Session) SetLogLevel(ctx context.Context, level protocol.LoggingLevel) error {
	return s.Call(ctx, protocol.MethodLoggingSetLevel, map[string]any{"level": level}, nil, nil)
}

// paramHeaders returns the Mcp-Param-* headers for a tools/call's params.
func (s *Session) paramHeaders(params json.RawMessage) map[string]string {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if jsonrpc.Unmarshal(params, &p) != nil {
		return nil
	}
	s.mu.Lock()
	ps := s.tools[p.Name]
	s.mu.Unlock()
	if len(ps) == 0 {
		return nil
	}
	h := map[string]string{}
	for _, hp := range ps {
		v, ok := valueAt(p.Arguments, hp.Path)
		if !ok || v == nil {
			continue // absent or null: no header
		}
		var text string
		switch x := v.(type) {
		case string:
			text = x
		case bool:
			text = "false"
			if x {
				text = "true"
			}
		case float64:
			b, _ := json.Marshal(x)
			text = string(b)
		default:
			b, _ := json.Marshal(x)
			text = string(b)
		}
		h["Mcp-Param-"+hp.Name] = transport.EncodeHeaderValue(text)
	}
	return h
}

func valueAt(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}
