package server

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/schema"
	"github.com/mcpkit/mcpkit/transport"
)

// CallRequest is a tools/call request as a tool handler sees it.
type CallRequest struct {
	*Request
	// Name is the tool's name.
	Name string
	// Arguments is the argument object as received, already validated
	// against the tool's input schema.
	Arguments json.RawMessage
	// Tool is the tool's definition, as registered; read-only.
	Tool *protocol.Tool

	entry *toolEntry
}

// ToolHandler serves tools/call for one tool. A returned *protocol.Error (or
// ErrInputRequired, from the Request's input methods) becomes a protocol
// answer; any other error becomes a tool result with isError set and the
// error's message as text, which the model can read and act on.
type ToolHandler func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error)

type toolEntry struct {
	def     *protocol.Tool
	in      *schema.Schema
	out     *schema.Schema
	headers []transport.HeaderParam
	handler ToolHandler
	scopes  []string // RequireScopes
}

// AddToolHandler registers a tool served by h. t.InputSchema is required and
// must have root type "object"; t.OutputSchema, when set, is enforced on the
// results. Schemas are compiled here, once. It panics on an invalid
// definition, as net/http does on an invalid pattern; a tool of the same
// name is replaced. opts may require scopes (RequireScopes).
func (s *Server) AddToolHandler(t *protocol.Tool, h ToolHandler, opts ...FeatureOption) {
	if err := s.addTool(t, h, opts); err != nil {
		panic("server: AddToolHandler: " + err.Error())
	}
}

func (s *Server) addTool(t *protocol.Tool, h ToolHandler, opts []FeatureOption) error {
	if t == nil || t.Name == "" {
		return errors.New("tool needs a name")
	}
	if h == nil {
		return fmt.Errorf("tool %q: nil handler", t.Name)
	}
	def := *t
	if len(def.InputSchema) == 0 {
		return fmt.Errorf("tool %q: no input schema", t.Name)
	}
	if !schema.IsObjectSchema(def.InputSchema) {
		return fmt.Errorf(`tool %q: input schema must have root "type": "object"`, t.Name)
	}
	in, err := schema.Compile(def.InputSchema)
	if err != nil {
		return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	var out *schema.Schema
	if len(def.OutputSchema) > 0 {
		if out, err = schema.Compile(def.OutputSchema); err != nil {
			return fmt.Errorf("tool %q: output schema: %w", t.Name, err)
		}
	}
	headers, err := transport.ParseHeaderParams(def.InputSchema)
	if err != nil {
		return fmt.Errorf("tool %q: %w", t.Name, err)
	}
	e := &toolEntry{def: &def, in: in, out: out, headers: headers, handler: h, scopes: applyFeatureOptions(opts).scopes}
	s.mu.Lock()
	s.tools.put(def.Name, e)
	s.mu.Unlock()
	s.publish(Event{Kind: ToolsListChanged})
	return nil
}

// RemoveTool unregisters the named tools.
func (s *Server) RemoveTool(names ...string) {
	changed := false
	s.mu.Lock()
	for _, n := range names {
		changed = s.tools.remove(n) || changed
	}
	s.mu.Unlock()
	if changed {
		s.publish(Event{Kind: ToolsListChanged})
	}
}

// AddTool registers a tool whose handler takes its arguments as a Go value
// of type In and returns a value of type Out.
//
// The input schema is inferred from In (see package schema for the struct
// tags) unless t.InputSchema is set; arguments are validated against it
// before h runs. For Out:
//   - *protocol.CallToolResult is returned as it is;
//   - string becomes one text content block;
//   - any other type becomes structuredContent, also serialised as text
//     content, with an output schema inferred from Out unless t.OutputSchema
//     is set (an interface type infers none).
//
// Errors are as for ToolHandler; opts are as for AddToolHandler. It panics
// on an invalid definition, an input type that arguments cannot be decoded
// into (such as a struct with no exported field) included.
func AddTool[In, Out any](s *Server, t *protocol.Tool, h func(ctx context.Context, req *CallRequest, in In) (Out, error), opts ...FeatureOption) {
	if t == nil {
		panic("server: AddTool: nil tool")
	}
	def := *t
	inType := reflect.TypeFor[In]()
	if len(def.InputSchema) == 0 {
		if isFreeForm(inType) {
			def.InputSchema = json.RawMessage(`{"type":"object"}`)
		} else {
			sch, err := schema.ForType(inType)
			if err != nil {
				panic(fmt.Sprintf("server: AddTool %q: input schema: %v", def.Name, err))
			}
			def.InputSchema = sch
		}
	}
	outType := reflect.TypeFor[Out]()
	mode := outputMode(outType)
	if mode == outStructured && len(def.OutputSchema) == 0 && outType.Kind() != reflect.Interface {
		sch, err := schema.ForType(outType)
		if err != nil {
			panic(fmt.Sprintf("server: AddTool %q: output schema: %v", def.Name, err))
		}
		def.OutputSchema = sch
	}
	// An input type the decoder cannot take (go-json-experiment refuses an
	// unexported field with a json tag, or two fields of one name) would
	// fail every call: refused here, when decoding {} shows it.
	if !isFreeForm(inType) && !decodesItself(inType) {
		if err := jsonrpc.Unmarshal([]byte("{}"), new(In)); err != nil {
			panic(fmt.Sprintf("server: AddTool %q: input type %v: %v", def.Name, inType, err))
		}
	}
	// Arguments are decoded with exact member names, as the input schema
	// validated them.
	handler := func(ctx context.Context, req *CallRequest) (*protocol.CallToolResult, error) {
		var in In
		if len(req.Arguments) > 0 {
			if err := jsonrpc.Unmarshal(req.Arguments, &in); err != nil {
				return nil, fmt.Errorf("invalid arguments: %v", err)
			}
		}
		out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		switch mode {
		case outResult:
			res := any(out).(*protocol.CallToolResult)
			if res == nil {
				res = &protocol.CallToolResult{}
			}
			return res, nil
		case outText:
			return TextResult(any(out).(string)), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, protocol.InternalError("encoding structured content: " + err.Error())
		}
		return &protocol.CallToolResult{
			Content:           []protocol.Content{&protocol.TextContent{Text: string(b)}},
			StructuredContent: b,
		}, nil
	}
	if err := s.addTool(&def, handler, opts); err != nil {
		panic("server: AddTool: " + err.Error())
	}
}

const (
	outStructured = iota
	outResult
	outText
)

var callToolResultType = reflect.TypeFor[*protocol.CallToolResult]()

func outputMode(t reflect.Type) int {
	switch {
	case t == callToolResultType:
		return outResult
	case t.Kind() == reflect.String:
		return outText
	}
	return outStructured
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func isFreeForm(t reflect.Type) bool {
	return t == rawMessageType || t.Kind() == reflect.Interface ||
		(t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Interface)
}

// decodesItself reports whether values of t decode themselves (with an
// UnmarshalJSON, UnmarshalJSONFrom or UnmarshalText method), which may
// refuse {}.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(jsonUnmarshalerType) || p.Implements(jsonFromUnmarshalerType) || p.Implements(textUnmarshalerType)
}

var (
	jsonUnmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	jsonFromUnmarshalerType = reflect.TypeFor[interface {
		UnmarshalJSONFrom(*jsontext.Decoder) error
	}]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// TextResult returns a tool result of one text block.
func TextResult(text string) *protocol.CallToolResult {
	// One allocation holds the result, its content list and the block.
	r := &struct {
		res   protocol.CallToolResult
		list  [1]protocol.Content
		block protocol.TextContent
	}{}
	r.block.Text = text
	r.list[0] = &r.block
	r.res.Content = r.list[:]
	return &r.res
}

// ErrorResult returns a tool result with isError set and the message as text.
func ErrorResult(message string) *protocol.CallToolResult {
	r := TextResult(message)
	r.IsError = true
	return r
}

// ParamHeaders returns the x-mcp-header parameters of the named tool. It
// implements transport.ParamHeaders.
func (s *Server) ParamHeaders(tool string) []transport.HeaderParam {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.tools.get(tool); ok {
		return e.headers
	}
	return nil
}

func (s *Server) serveListTools(ctx context.Context, r *Request) (protocol.Result, error) {
	tools, next, hints, err := listPage(s, r, &s.tools, func(e *toolEntry) *protocol.Tool { return e.def })
	if err != nil {
		return nil, err
	}
	return &protocol.ListToolsResult{Tools: tools, NextCursor: next, CacheHints: hints}, nil
}

func (s *Server) serveCallTool(ctx context.Context, r *Request) (protocol.Result, error) {
	name, err := stringParam(r.raw.name, "name")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, protocol.InvalidParams("tools/call needs a tool name")
	}
	s.mu.RLock()
	e, ok := s.tools.get(name)
	s.mu.RUnlock()
	if !ok {
		return nil, protocol.InvalidParams("Unknown tool: " + clip(name))
	}
	if err := r.authorize(e.scopes); err != nil {
		return nil, err
	}
	args := json.RawMessage(r.raw.arguments)
	if len(args) == 0 || string(args) == "null" {
		args = emptyObject
	} else if args[0] != '{' {
		return nil, protocol.InvalidParams("tool arguments must be an object")
	}
	if err := e.in.ValidateJSON(args); err != nil {
		var dup *schema.DuplicateMemberError
		if errors.As(err, &dup) {
			// The schema would check one of the two, a decoder could keep
			// the other: refused as malformed, whatever the tool.
			at := dup.Path
			if at == "" {
				at = "the top level"
			}
			return nil, protocol.InvalidParams(fmt.Sprintf("tool arguments: duplicate member %s at %s", echo(dup.Name), echo(at)))
		}
		return ErrorResult("Invalid arguments for tool " + name + ": " + err.Error()), nil
	}
	if err := r.startInput(ctx); err != nil {
		return nil, err
	}
	req := &r.callMem
	*req = CallRequest{Request: r, Name: name, Arguments: args, Tool: e.def, entry: e}
	return (*s.runTool.Load())(ctx, req)
}

// runHandler is the innermost ToolCallFunc: it runs the tool's handler
// and checks its result against the tool's output schema.
func (s *Server) runHandler(ctx context.Context, req *CallRequest) (protocol.Result, error) {
	e, r := req.entry, req.Request
	res, err := guard(s, "tool", req.Name, e.handler, ctx, req)
	if err != nil {
		if ir, ok := r.inputRequired(err); ok {
			return ir, nil
		}
		var pe *protocol.Error
		if errors.As(err, &pe) {
			return nil, pe
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return ErrorResult(err.Error()), nil
	}
	if res == nil {
		res = &protocol.CallToolResult{}
	}
	if e.out != nil && !res.IsError {
		if len(res.StructuredContent) == 0 {
			return nil, protocol.InternalError("tool " + req.Name + " returned no structuredContent though it declares an output schema")
		}
		if err := e.out.ValidateJSON(res.StructuredContent); err != nil {
			return nil, protocol.InternalError("tool " + req.Name + " returned structuredContent that does not match its output schema: " + err.Error())
		}
	}
	return res, nil
}
