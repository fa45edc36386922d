package server

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// PromptRequest is a prompts/get request as a prompt handler sees it.
type PromptRequest struct {
	*Request
	// Name is the prompt's name.
	Name string
	// Arguments are the prompt's arguments; required ones are present.
	Arguments map[string]string
}

// PromptHandler serves prompts/get for one prompt. It may return
// ErrInputRequired (see Request.Elicit) and protocol errors.
type PromptHandler func(ctx context.Context, req *PromptRequest) (*protocol.GetPromptResult, error)

type promptEntry struct {
	def     *protocol.Prompt
	handler PromptHandler
	scopes  []string // RequireScopes
}

// AddPrompt registers a prompt served by h; one of the same name is
// replaced. opts may require scopes (RequireScopes). It panics on a
// definition without a name.
func (s *Server) AddPrompt(p *protocol.Prompt, h PromptHandler, opts ...FeatureOption) {
	if p == nil || p.Name == "" || h == nil {
		panic("server: AddPrompt needs a name and a handler")
	}
	def := *p
	s.mu.Lock()
	s.prompts.put(def.Name, &promptEntry{def: &def, handler: h, scopes: applyFeatureOptions(opts).scopes})
	s.mu.Unlock()
	s.publish(Event{Kind: PromptsListChanged})
}

// RemovePrompt unregisters the named prompts.
func (s *Server) RemovePrompt(names ...string) {
	changed := false
	s.mu.Lock()
	for _, n := range names {
		changed = s.prompts.remove(n) || changed
	}
	s.mu.Unlock()
	if changed {
		s.publish(Event{Kind: PromptsListChanged})
	}
}

func (s *Server) serveListPrompts(ctx context.Context, r *Request) (protocol.Result, error) {
	list, next, hints, err := listPage(s, r, &s.prompts, func(e *promptEntry) *protocol.Prompt { return e.def })
	if err != nil {
		return nil, err
	}
	return &protocol.ListPromptsResult{Prompts: list, NextCursor: next, CacheHints: hints}, nil
}

func (s *Server) serveGetPrompt(ctx context.Context, r *Request) (protocol.Result, error) {
	name, err := stringParam(r.raw.name, "name")
	if err != nil {
		return nil, err
	}
	var args map[string]string
	if a := r.raw.arguments; a != nil && string(a) != "null" {
		if err := jsonrpc.Unmarshal(a, &args); err != nil {
			return nil, protocol.InvalidParams("prompt arguments must be an object of strings")
		}
	}
	s.mu.RLock()
	e, ok := s.prompts.get(name)
	s.mu.RUnlock()
	if !ok {
		return nil, protocol.InvalidParams("Unknown prompt: " + clip(name))
	}
	if err := r.authorize(e.scopes); err != nil {
		return nil, err
	}
	for _, a := range e.def.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, protocol.InvalidParams(fmt.Sprintf("prompt %s: missing required argument %q", name, a.Name))
		}
	}
	if err := r.startInput(ctx); err != nil {
		return nil, err
	}
	res, err := guard(s, "prompt", name, e.handler, ctx, &PromptRequest{Request: r, Name: name, Arguments: args})
	if err != nil {
		if ir, ok := r.inputRequired(err); ok {
			return ir, nil
		}
		return nil, err
	}
	if res == nil {
		res = &protocol.GetPromptResult{}
	}
	if res.Messages == nil {
		res.Messages = []*protocol.PromptMessage{}
	}
	return res, nil
}
