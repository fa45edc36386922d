package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/protocol"
)

// ReadRequest is a resources/read request as a resource handler sees it.
type ReadRequest struct {
	*Request
	// URI is the URI being read.
	URI string
	// Vars holds the URI template's variables when the URI matched a
	// template; nil for a plain resource.
	Vars map[string]string
}

// ResourceHandler serves resources/read for a resource or a template. It
// may return ErrInputRequired (see Request.Elicit) and protocol errors; set
// CacheHints on the result to override the server's ReadCache for this item.
type ResourceHandler func(ctx context.Context, req *ReadRequest) (*protocol.ReadResourceResult, error)

type resourceEntry struct {
	def     *protocol.Resource
	handler ResourceHandler
	scopes  []string // RequireScopes
}

type templateEntry struct {
	def     *protocol.ResourceTemplate
	tmpl    *uriTemplate
	handler ResourceHandler
	scopes  []string // RequireScopes
}

// AddResource registers a resource served by h; one with the same URI is
// replaced. opts may require scopes (RequireScopes). It panics on a
// definition without URI or name.
func (s *Server) AddResource(r *protocol.Resource, h ResourceHandler, opts ...FeatureOption) {
	if r == nil || r.URI == "" || r.Name == "" || h == nil {
		panic("server: AddResource needs a URI, a name and a handler")
	}
	def := *r
	s.mu.Lock()
	s.resources.put(def.URI, &resourceEntry{def: &def, handler: h, scopes: applyFeatureOptions(opts).scopes})
	s.mu.Unlock()
	s.publish(Event{Kind: ResourcesListChanged})
}

// AddResourceTemplate registers an RFC 6570 URI template served by h for
// every URI it matches (a resource registered with the URI itself comes
// first). opts may require scopes (RequireScopes), needed to read any URI
// the template serves. It panics on an invalid template.
func (s *Server) AddResourceTemplate(t *protocol.ResourceTemplate, h ResourceHandler, opts ...FeatureOption) {
	if t == nil || t.Name == "" || h == nil {
		panic("server: AddResourceTemplate needs a template, a name and a handler")
	}
	tmpl, err := parseURITemplate(t.URITemplate)
	if err != nil {
		panic(fmt.Sprintf("server: AddResourceTemplate %q: %v", t.URITemplate, err))
	}
	def := *t
	s.mu.Lock()
	s.templates.put(def.URITemplate, &templateEntry{def: &def, tmpl: tmpl, handler: h, scopes: applyFeatureOptions(opts).scopes})
	s.mu.Unlock()
	s.publish(Event{Kind: ResourcesListChanged})
}

// RemoveResource unregisters resources by URI and templates by template.
func (s *Server) RemoveResource(uris ...string) {
	changed := false
	s.mu.Lock()
	for _, u := range uris {
		changed = s.resources.remove(u) || changed
		changed = s.templates.remove(u) || changed
	}
	s.mu.Unlock()
	if changed {
		s.publish(Event{Kind: ResourcesListChanged})
	}
}

// TextResource returns a handler that serves fixed text.
func TextResource(mimeType, text string) ResourceHandler {
	return func(ctx context.Context, req *ReadRequest) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{{URI: req.URI, MIMEType: mimeType, Text: text}}}, nil
	}
}

// BlobResource returns a handler that serves fixed binary data.
func BlobResource(mimeType string, data []byte) ResourceHandler {
	return func(ctx context.Context, req *ReadRequest) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{{URI: req.URI, MIMEType: mimeType, Blob: data}}}, nil
	}
}

func (s *Server) serveListResources(ctx context.Context, r *Request) (protocol.Result, error) {
	list, next, hints, err := listPage(s, r, &s.resources, func(e *resourceEntry) *protocol.Resource { return e.def })
	if err != nil {
		return nil, err
	}
	return &protocol.ListResourcesResult{Resources: list, NextCursor: next, CacheHints: hints}, nil
}

func (s *Server) serveListTemplates(ctx context.Context, r *Request) (protocol.Result, error) {
	list, next, hints, err := listPage(s, r, &s.templates, func(e *templateEntry) *protocol.ResourceTemplate { return e.def })
	if err != nil {
		return nil, err
	}
	return &protocol.ListResourceTemplatesResult{ResourceTemplates: list, NextCursor: next, CacheHints: hints}, nil
}

// findResource returns the handler for uri, the template variables and
// the scopes reading it needs.
func (s *Server) findResource(uri string) (ResourceHandler, map[string]string, []string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.resources.get(uri); ok {
		return e.handler, nil, e.scopes, true
	}
	for _, k := range s.templates.keys {
		e := s.templates.byKey[k]
		if vars, ok := e.tmpl.match(uri); ok {
			return e.handler, vars, e.scopes, true
		}
	}
	return nil, nil, nil, false
}

// ErrResourceNotFound may be returned by a resource handler (a template's,
// typically) for a URI it does not know; the client gets the spec's
// resource-not-found error.
var ErrResourceNotFound = errors.New("server: resource not found")

func (s *Server) serveRead(ctx context.Context, r *Request) (protocol.Result, error) {
	uri, err := stringParam(r.raw.uri, "uri")
	if err != nil {
		return nil, err
	}
	if uri == "" {
		return nil, protocol.InvalidParams("resources/read needs a uri")
	}
	h, vars, need, ok := s.findResource(uri)
	if !ok {
		return nil, protocol.ResourceNotFound(uri)
	}
	if err := r.authorize(need); err != nil {
		return nil, err
	}
	if err := r.startInput(ctx); err != nil {
		return nil, err
	}
	res, err := guard(s, "resource", uri, h, ctx, &ReadRequest{Request: r, URI: uri, Vars: vars})
	if err != nil {
		if ir, ok := r.inputRequired(err); ok {
			return ir, nil
		}
		if errors.Is(err, ErrResourceNotFound) {
			return nil, protocol.ResourceNotFound(uri)
		}
		return nil, err
	}
	if res == nil {
		// A missing resource must be an error, never an empty contents list.
		return nil, protocol.ResourceNotFound(uri)
	}
	if res.Contents == nil {
		res.Contents = []*protocol.ResourceContents{}
	}
	if res.CacheScope == "" {
		res.CacheHints = s.readCache()
	}
	return res, nil
}
