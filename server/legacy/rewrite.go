package legacy

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// serveCore turns a legacy request into a modern one, runs it on the core
// (answering input_required rounds with real requests to the client) and
// maps the typed result or error to the legacy shapes.
func (s *Session) serveCore(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	msg := req.Message
	// The session's notifier, copied into the core request's allocation.
	var sn sessionNotifier
	if req.Notifier != nil {
		sn = sessionNotifier{s: s, n: s.rev.notifier(req.Notifier)}
	}
	var answers map[string]json.RawMessage
	state := ""
	// One allocation for the core's request: the message as it came with
	// the session's _meta beside it, or else (reused by the rounds, which
	// run one after the other) the rewritten message.
	var c *rewrittenCall
	for round := 0; ; round++ {
		var core *transport.Request
		if round == 0 && plainParams(msg) {
			// Nothing to leave out or add but _meta: the params go as they
			// came, and the session's _meta as a value.
			p := &plainCall{sn: sn}
			p.req = transport.Request{Message: msg, Kind: transport.KindSession, Session: s, Notifier: p.sn.orNil(), Cancel: req.Cancel, Meta: s.levelMeta()}
			core = &p.req
		} else {
			if c == nil {
				c = &rewrittenCall{sn: sn}
			}
			c.msg = jsonrpc.Message{ID: msg.ID, Method: msg.Method}
			if err := s.modernParams(msg, answers, state, &c.params); err != nil {
				return nil, err
			}
			c.msg.SetParams(&c.params)
			c.req = transport.Request{Message: &c.msg, Kind: transport.KindSession, Session: s, Notifier: c.sn.orNil(), Cancel: req.Cancel}
			core = &c.req
		}
		res, err := s.a.core.ServeModern(ctx, core)
		if err != nil {
			return nil, legacyError(err)
		}
		ir, inputRequired := res.(*protocol.InputRequiredResult)
		if !inputRequired {
			return legacyResult(res, s.rev), nil
		}
		if round >= s.a.opts.MaxRounds {
			return nil, protocol.InternalError(fmt.Sprintf("%s needed more than %d rounds of client input", msg.Method, s.a.opts.MaxRounds))
		}
		keys := make([]string, 0, len(ir.InputRequests))
		for k := range ir.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		got := make(map[string]json.RawMessage, len(keys))
		for _, k := range keys {
			in := ir.InputRequests[k]
			params, err := s.inputParams(ctx, in)
			if err != nil {
				return nil, legacyError(err)
			}
			res, err := s.ask(ctx, req.Notifier, in.Method, params)
			if err != nil {
				return nil, err
			}
			got[k] = res
		}
		answers, state = got, ir.RequestState
	}
}

// plainCall and rewrittenCall are what serveCore hands the core: the
// request of a round, whose Session names the session it belongs to,
// with the session's _meta beside the message as it came (plainCall), or
// with the message rewritten into the modern form (rewrittenCall).
type plainCall struct {
	req transport.Request
	sn  sessionNotifier
}

type rewrittenCall struct {
	req    transport.Request
	msg    jsonrpc.Message
	params jsonrpc.ParamsWriter
	sn     sessionNotifier
}

// errNotPlain stops plainParams at the first member it looks for.
var errNotPlain = errors.New("params to rewrite")

// plainParams reports whether the params of msg are absent or an object
// with none of the members modernParams leaves out or replaces (_meta,
// inputResponses, requestState): the core can then read them as they came,
// with the session's _meta given beside them.
func plainParams(msg *jsonrpc.Message) bool {
	if len(msg.Params) == 0 {
		return true
	}
	if msg.Params[0] != '{' {
		return false
	}
	err := msg.EachParam(func(key []byte, _ jsontext.Value) error {
		if rewrittenParam(key) {
			return errNotPlain
		}
		return nil
	})
	return err == nil
}

// rewrittenParam reports whether modernParams replaces or drops the params
// member key: _meta (the session's, merged with the request's own members)
// and the MRTR members, which only the session sets.
func rewrittenParam(key []byte) bool {
	switch string(key) {
	case "_meta", "inputResponses", "requestState":
		return true
	}
	return false
}

// levelMeta returns the session's _meta as the core reads it from what
// modernParams writes (metaMembers), with the session's log level: one
// value shared by the session's plain requests until the level changes
// (the core copies what it reads, and nothing writes it).
func (s *Session) levelMeta() *protocol.RequestMeta {
	level := s.level()
	if m := s.leveled.Load(); m != nil && m.LogLevel == level {
		return m
	}
	m := new(protocol.RequestMeta)
	b := append(append([]byte{'{'}, s.metaMembers()...), '}')
	if err := m.UnmarshalJSON(b); err != nil {
		// metaMembers writes what UnmarshalJSON reads; should it not,
		// the core says so for the request.
		*m = protocol.RequestMeta{}
	}
	m.LogLevel = level
	s.leveled.Store(m)
	return m
}

// inputParams encodes the params of a request for the client as the
// session's revision defines them. A URL-mode elicitation is sent only to
// a 2025-11-25 client that declared url mode, with an elicitationId (made
// up when the handler gave none); the session remembers the handler's, for
// ElicitationComplete.
func (s *Session) inputParams(ctx context.Context, in *protocol.InputRequest) (json.RawMessage, error) {
	switch in.Method {
	case protocol.MethodElicit:
		p, err := typedParams[protocol.ElicitParams](in.Params)
		if err != nil {
			return nil, err
		}
		return s.elicitParams(ctx, p)
	case protocol.MethodCreateMessage:
		if s.rev.since2025_11_25 {
			break
		}
		p, err := typedParams[protocol.CreateMessageParams](in.Params)
		if err != nil {
			return nil, err
		}
		if p, err = s.rev.createMessage(p); err != nil {
			return nil, err
		}
		return encodeParams(in.Method, p)
	}
	if in.Params == nil {
		return nil, nil
	}
	return encodeParams(in.Method, in.Params)
}

func (s *Session) elicitParams(ctx context.Context, p *protocol.ElicitParams) (json.RawMessage, error) {
	caps := s.caps.Elicitation
	if !s.rev.since2025_06_18 || caps == nil {
		return nil, protocol.MissingCapability(protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{}})
	}
	if p.Mode == "url" {
		if !s.rev.since2025_11_25 || caps.URL == nil {
			return nil, protocol.MissingCapability(protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{URL: protocol.Object{}}})
		}
		id := p.ElicitationID
		if id == "" {
			id = rand.Text()
		} else if err := s.a.rememberElicitation(ctx, s, id); err != nil {
			return nil, err
		}
		return encodeParams(protocol.MethodElicit, &protocol.ElicitParams{Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: id})
	}
	if p.ElicitationID == "" && (p.Mode == "" || s.rev.since2025_11_25) {
		return encodeParams(protocol.MethodElicit, p)
	}
	form := *p
	form.ElicitationID = "" // url mode's
	if !s.rev.since2025_11_25 {
		form.Mode = ""
	}
	return encodeParams(protocol.MethodElicit, &form)
}

// typedParams returns the params of an input request as a *T: the core's
// own value, or a decoded copy of another.
func typedParams[T any](params any) (*T, error) {
	if p, ok := params.(*T); ok && p != nil {
		return p, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, protocol.InternalError("encoding an input request: " + err.Error())
	}
	p := new(T)
	if err := jsonrpc.Unmarshal(b, p); err != nil {
		return nil, protocol.InternalError("reading an input request: " + err.Error())
	}
	return p, nil
}

func encodeParams(method string, p any) (json.RawMessage, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, protocol.InternalError("encoding " + method + ": " + err.Error())
	}
	return b, nil
}

// ask sends a request to the client on the request's stream and waits for
// its answer.
func (s *Session) ask(ctx context.Context, n transport.Notifier, method string, params json.RawMessage) (json.RawMessage, error) {
	id := s.a.requestID(s.nextID.Add(1))
	ch := make(chan *jsonrpc.Message, 1)
	s.mu.Lock()
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	if n == nil {
		return nil, protocol.InternalError("the client cannot be reached with " + method)
	}
	if err := n.Notify(jsonrpc.AppendRequest(nil, id, method, params)); err != nil {
		return nil, protocol.InternalError("sending " + method + " to the client: " + err.Error())
	}
	t := time.NewTimer(s.a.opts.InputTimeout)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, protocol.InternalError("session closed while waiting for " + method)
	case <-t.C:
		return nil, protocol.InternalError("the client did not answer " + method + " in time")
	case m := <-ch:
		if m.Error != nil {
			return nil, jsonrpc.NewError(protocol.CodeInternalError, "the client answered "+method+" with an error: "+m.Error.Message, nil)
		}
		return m.Result, nil
	}
}

// modernParams rebuilds the params of a legacy request, member by member,
// with the session's per-request _meta, keeping the request's own _meta
// members (such as a progressToken) and dropping MRTR members, which only
// the session sets: the answers and state of a retry, when given.
func (s *Session) modernParams(msg *jsonrpc.Message, answers map[string]json.RawMessage, state string, w *jsonrpc.ParamsWriter) error {
	params := msg.Params
	members := s.metaMembers()
	w.Reset(make([]byte, 0, len(params)+len(members)+64))
	var own []byte
	if len(params) > 0 {
		if params[0] != '{' {
			return protocol.InvalidParams("params must be an object")
		}
		err := msg.EachParam(func(key []byte, value jsontext.Value) error {
			switch {
			case string(key) == "_meta":
				own = value
			case !rewrittenParam(key):
				w.Add(key, value)
			}
			return nil
		})
		if err != nil {
			return protocol.InvalidParams("malformed params")
		}
	}
	bp := metaBufs.Get().(*[]byte)
	defer metaBufs.Put(bp)
	meta := append((*bp)[:0], '{')
	if own != nil && own[0] == '{' {
		_ = jsonrpc.EachMember(own, func(key []byte, value jsontext.Value) error {
			switch string(key) {
			case protocol.MetaProtocolVersion, protocol.MetaClientCapabilities, protocol.MetaClientInfo, protocol.MetaLogLevel:
				return nil
			}
			meta = appendQuoted(meta, key)
			meta = append(meta, ':')
			meta = append(meta, value...)
			meta = append(meta, ',')
			return nil
		})
	}
	meta = append(meta, members...)
	if level := s.level(); level != "" {
		meta = append(meta, `,"`+protocol.MetaLogLevel+`":`...)
		meta = appendQuoted(meta, []byte(level))
	}
	meta = append(meta, '}')
	w.Add([]byte("_meta"), meta)
	if cap(meta) <= 4<<10 {
		*bp = meta
	}
	if answers != nil {
		b, err := json.Marshal(answers)
		if err != nil {
			return protocol.InternalError("encoding the client's answers: " + err.Error())
		}
		w.Add([]byte("inputResponses"), b)
	}
	if state != "" {
		w.Add([]byte("requestState"), quote(state))
	}
	return nil
}

// metaBufs are the buffers modernParams builds a _meta in.
var metaBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func appendMember(obj []byte, key, value []byte) []byte {
	if len(obj) > 1 {
		obj = append(obj, ',')
	}
	obj = appendQuoted(obj, key)
	obj = append(obj, ':')
	return append(obj, value...)
}

// appendQuoted appends s as a JSON string.
func appendQuoted(dst, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			b, _ := json.Marshal(string(s))
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func quote(s string) []byte { return appendQuoted(nil, []byte(s)) }

// legacyResult maps a complete result of the core to the shape of the
// session's revision (see the table in shape.go): without resultType, the
// cache hints and serverInfo in _meta, members revision 2026-07-28 added,
// and without what rev lacks. res is the core's, made for this request,
// and its header is changed in place; what it shares is copied.
func legacyResult(res protocol.Result, rev revision) protocol.Result {
	h := res.Header()
	h.ResultType = ""
	h.Meta = h.Meta.WithoutServerInfo()
	switch r := res.(type) {
	case *protocol.CallToolResult:
		return rev.callTool(r)
	case *protocol.ListToolsResult:
		return &toolList{ResultHeader: *h, Tools: rev.tools(r.Tools), NextCursor: r.NextCursor}
	case *protocol.ListResourcesResult:
		return &resourceList{ResultHeader: *h, Resources: rev.resources(r.Resources), NextCursor: r.NextCursor}
	case *protocol.ListResourceTemplatesResult:
		return &templateList{ResultHeader: *h, ResourceTemplates: rev.templates(r.ResourceTemplates), NextCursor: r.NextCursor}
	case *protocol.ListPromptsResult:
		return &promptList{ResultHeader: *h, Prompts: rev.prompts(r.Prompts), NextCursor: r.NextCursor}
	case *protocol.ReadResourceResult:
		return &readResult{ResultHeader: *h, Contents: rev.contents(r.Contents)}
	case *protocol.GetPromptResult:
		return rev.getPrompt(r)
	}
	return res
}

// The legacy shapes of the cacheable results: the same members without
// ttlMs and cacheScope.
type (
	toolList struct {
		protocol.ResultHeader
		Tools      []*protocol.Tool `json:"tools"`
		NextCursor string           `json:"nextCursor,omitempty"`
	}
	resourceList struct {
		protocol.ResultHeader
		Resources  []*protocol.Resource `json:"resources"`
		NextCursor string               `json:"nextCursor,omitempty"`
	}
	templateList struct {
		protocol.ResultHeader
		ResourceTemplates []*protocol.ResourceTemplate `json:"resourceTemplates"`
		NextCursor        string                       `json:"nextCursor,omitempty"`
	}
	promptList struct {
		protocol.ResultHeader
		Prompts    []*protocol.Prompt `json:"prompts"`
		NextCursor string             `json:"nextCursor,omitempty"`
	}
	readResult struct {
		protocol.ResultHeader
		Contents []*protocol.ResourceContents `json:"contents"`
	}
)

// legacyError maps the core's errors to the codes the legacy revisions
// define, by their type.
func legacyError(err error) error {
	var nf *protocol.ResourceNotFoundError
	if errors.As(err, &nf) {
		w := nf.Wire()
		return &jsonrpc.Error{Code: protocol.CodeResourceNotFoundLegacy, Message: w.Message, Data: w.Data}
	}
	var e *jsonrpc.Error
	if errors.As(err, &e) && e.Code == protocol.CodeMissingRequiredClientCapability {
		// Not a legacy code: the request is invalid for this client.
		return &jsonrpc.Error{Code: protocol.CodeInvalidRequest, Message: e.Message, Data: e.Data}
	}
	return err
}

// metaMembers returns the encoded per-request _meta members the session
// stands for (version, capabilities, client info), computed once.
func (s *Session) metaMembers() []byte {
	s.metaOnce.Do(func() {
		versions := s.a.core.Versions()
		m := []byte{'{'}
		m = appendMember(m, []byte(protocol.MetaProtocolVersion), quote(versions[0]))
		caps, _ := json.Marshal(s.rev.clientCapabilities(s.caps))
		m = appendMember(m, []byte(protocol.MetaClientCapabilities), caps)
		if s.info != nil {
			info, _ := json.Marshal(s.info)
			m = appendMember(m, []byte(protocol.MetaClientInfo), info)
		}
		s.metaCache = m[1:]
	})
	return s.metaCache
}
