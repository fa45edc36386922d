package server

import (
	"context"

	"github.com/mcpkit/mcpkit/protocol"
)

// CompleteRequest is a completion/complete request as a completion handler
// sees it.
type CompleteRequest struct {
	*Request
	// Ref names the prompt or resource template.
	Ref protocol.CompleteReference
	// Argument is the argument being completed and its current value.
	Argument protocol.CompleteArgument
	// Context holds arguments already resolved (may be empty).
	Context map[string]string
}

// CompleteHandler suggests values for an argument of a prompt or a variable
// of a resource template. At most 100 values are sent; the rest is
// reported through hasMore.
type CompleteHandler func(ctx context.Context, req *CompleteRequest) (*protocol.Completion, error)

type completionKey struct{ typ, name string }

// AddCompletion registers h to complete the arguments of the prompt named
// name (refType protocol.RefPrompt) or the variables of the resource
// template name (protocol.RefResource).
func (s *Server) AddCompletion(refType, name string, h CompleteHandler) {
	if refType != protocol.RefPrompt && refType != protocol.RefResource {
		panic("server: AddCompletion: refType must be ref/prompt or ref/resource")
	}
	s.mu.Lock()
	if s.completions == nil {
		s.completions = make(map[completionKey]CompleteHandler)
	}
	s.completions[completionKey{refType, name}] = h
	s.mu.Unlock()
}

func (s *Server) hasCompletions() bool { return len(s.completions) > 0 }

// CompleteFrom returns a handler that offers the candidates starting with
// the typed value, in order.
func CompleteFrom(candidates ...string) CompleteHandler {
	return func(ctx context.Context, req *CompleteRequest) (*protocol.Completion, error) {
		var out []string
		for _, c := range candidates {
			if len(c) >= len(req.Argument.Value) && c[:len(req.Argument.Value)] == req.Argument.Value {
				out = append(out, c)
			}
		}
		return &protocol.Completion{Values: out}, nil
	}
}

type completeParams struct {
	Ref      protocol.CompleteReference `json:"ref"`
	Argument protocol.CompleteArgument  `json:"argument"`
	Context  *protocol.CompleteContext  `json:"context"`
}

const maxCompletionValues = 100

func (s *Server) serveComplete(ctx context.Context, r *Request) (protocol.Result, error) {
	var p completeParams
	if err := r.DecodeParams(&p); err != nil {
		return nil, err
	}
	var key completionKey
	switch p.Ref.Type {
	case protocol.RefPrompt:
		s.mu.RLock()
		e, ok := s.prompts.get(p.Ref.Name)
		s.mu.RUnlock()
		if !ok {
			return nil, protocol.InvalidParams("Unknown prompt: " + clip(p.Ref.Name))
		}
		if err := r.authorize(e.scopes); err != nil {
			return nil, err
		}
		key = completionKey{p.Ref.Type, p.Ref.Name}
	case protocol.RefResource:
		s.mu.RLock()
		te, isTemplate := s.templates.get(p.Ref.URI)
		re, isResource := s.resources.get(p.Ref.URI)
		s.mu.RUnlock()
		if !isTemplate && !isResource {
			return nil, protocol.InvalidParams("Unknown resource template: " + clip(p.Ref.URI))
		}
		var need []string
		if isTemplate {
			need = te.scopes
		} else {
			need = re.scopes
		}
		if err := r.authorize(need); err != nil {
			return nil, err
		}
		key = completionKey{p.Ref.Type, p.Ref.URI}
	default:
		return nil, protocol.InvalidParams("ref.type must be ref/prompt or ref/resource")
	}
	s.mu.RLock()
	h := s.completions[key]
	s.mu.RUnlock()
	res := &protocol.CompleteResult{Completion: protocol.Completion{Values: []string{}}}
	if h == nil {
		return res, nil
	}
	req := &CompleteRequest{Request: r, Ref: p.Ref, Argument: p.Argument}
	if p.Context != nil {
		req.Context = p.Context.Arguments
	}
	c, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if c != nil {
		res.Completion = *c
		if res.Completion.Values == nil {
			res.Completion.Values = []string{}
		}
		if n := len(res.Completion.Values); n > maxCompletionValues {
			res.Completion.Values = res.Completion.Values[:maxCompletionValues]
			res.Completion.HasMore = true
			if res.Completion.Total == nil {
				t := int64(n)
				res.Completion.Total = &t
			}
		}
	}
	return res, nil
}
