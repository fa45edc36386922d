package server

import (
	"context"
	"fmt"
	"sort"

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
}

// AddPrompt registers a prompt served by h; one of the same name is
// replaced. It panics on a definition without a name.
func (s *Server) AddPrompt(p *protocol.Prompt, h PromptHandler) {
	if p == nil || p.Name == "" || h == nil {
		panic("server: AddPrompt needs a name and a handler")
	}
	def := *p
	s.mu.Lock()
	s.prompts.put(def.Name, &promptEntry{def: &def, handler: h})
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
	var p paramsWithCursor
	if err := r.decodeParams(&p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	entries, next, err := s.prompts.page(p.Cursor, s.pageSize())
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	res := &protocol.ListPromptsResult{Prompts: make([]*protocol.Prompt, len(entries)), NextCursor: next, CacheHints: s.listCache()}
	for i, e := range entries {
		res.Prompts[i] = e.def
	}
	return res, nil
}

type getPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
	protocol.InputParams
}

func (s *Server) serveGetPrompt(ctx context.Context, r *Request) (protocol.Result, error) {
	var p getPromptParams
	if err := r.decodeParams(&p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	e, ok := s.prompts.get(p.Name)
	s.mu.RUnlock()
	if !ok {
		return nil, protocol.InvalidParams("Unknown prompt: " + p.Name)
	}
	for _, a := range e.def.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			return nil, protocol.InvalidParams(fmt.Sprintf("prompt %s: missing required argument %q", p.Name, a.Name))
		}
	}
	if err := r.startInput(&p.InputParams, func() string { return promptDigest(p.Name, p.Arguments) }); err != nil {
		return nil, err
	}
	res, err := s.runPrompt(ctx, e.handler, &PromptRequest{Request: r, Name: p.Name, Arguments: p.Arguments})
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

func promptDigest(name string, args map[string]string) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := [][]byte{[]byte(name)}
	for _, k := range keys {
		parts = append(parts, []byte(k), []byte(args[k]))
	}
	return digestOf(parts...)
}

func (s *Server) runPrompt(ctx context.Context, h PromptHandler, req *PromptRequest) (res *protocol.GetPromptResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.logger.Error("prompt handler panicked", "prompt", req.Name, "panic", v)
			res, err = nil, protocol.InternalError("internal error in prompt "+req.Name)
		}
	}()
	return h(ctx, req)
}
