package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// serveCore turns a legacy request into a modern one, runs it on the core
// (answering input_required rounds with real requests to the client) and
// maps the typed result or error to the legacy shapes.
func (s *Session) serveCore(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	msg := req.Message
	var answers map[string]json.RawMessage
	state := ""
	for round := 0; ; round++ {
		p, err := s.modernParams(msg.Params, answers, state)
		if err != nil {
			return nil, err
		}
		res, err := s.a.core.ServeModern(ctx, &transport.Request{
			Message:     &jsonrpc.Message{ID: msg.ID, Method: msg.Method, Params: p},
			Notifier:    req.Notifier,
			Cancel:      req.Cancel,
			CloseStream: req.CloseStream,
		})
		if err != nil {
			return nil, legacyError(err)
		}
		ir, inputRequired := res.(*protocol.InputRequiredResult)
		if !inputRequired {
			return legacyResult(res), nil
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
			var params json.RawMessage
			if in.Params != nil {
				if params, err = json.Marshal(in.Params); err != nil {
					return nil, protocol.InternalError("encoding " + in.Method + ": " + err.Error())
				}
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

// ask sends a request to the client on the request's stream and waits for
// its answer.
func (s *Session) ask(ctx context.Context, n transport.Notifier, method string, params json.RawMessage) (json.RawMessage, error) {
	id := jsonrpc.StringID("mcpkit-" + strconv.FormatInt(s.nextID.Add(1), 10))
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
func (s *Session) modernParams(params []byte, answers map[string]json.RawMessage, state string) ([]byte, error) {
	members := s.metaMembers()
	out := make([]byte, 0, len(params)+len(members)+64)
	out = append(out, '{')
	var own []byte
	if len(params) > 0 {
		if params[0] != '{' {
			return nil, protocol.InvalidParams("params must be an object")
		}
		err := jsonrpc.RawMembers(params, func(key, value []byte) bool {
			switch string(key) {
			case "_meta":
				own = value
				return true
			case "inputResponses", "requestState":
				return true
			}
			out = appendMember(out, key, value)
			return true
		})
		if err != nil {
			return nil, protocol.InvalidParams("malformed params")
		}
	}
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"_meta":{`...)
	if own != nil && own[0] == '{' {
		_ = jsonrpc.RawMembers(own, func(key, value []byte) bool {
			switch string(key) {
			case protocol.MetaProtocolVersion, protocol.MetaClientCapabilities, protocol.MetaClientInfo, protocol.MetaLogLevel:
				return true
			}
			out = appendQuoted(out, key)
			out = append(out, ':')
			out = append(out, value...)
			out = append(out, ',')
			return true
		})
	}
	out = append(out, members...)
	s.mu.Lock()
	level := s.logLevel
	s.mu.Unlock()
	if level != "" {
		out = append(out, `,"`+protocol.MetaLogLevel+`":`...)
		out = appendQuoted(out, []byte(level))
	}
	out = append(out, '}')
	if answers != nil {
		b, err := json.Marshal(answers)
		if err != nil {
			return nil, protocol.InternalError("encoding the client's answers: " + err.Error())
		}
		out = appendMember(out, []byte("inputResponses"), b)
	}
	if state != "" {
		out = appendMember(out, []byte("requestState"), quote(state))
	}
	return append(out, '}'), nil
}

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
// legacy revisions: without resultType, the cache hints and serverInfo in
// _meta, members revision 2026-07-28 added. res is the core's, made for
// this request, and is changed in place.
func legacyResult(res protocol.Result) protocol.Result {
	h := res.Header()
	h.ResultType = ""
	h.Meta = h.Meta.WithoutServerInfo()
	switch r := res.(type) {
	case *protocol.ListToolsResult:
		return &toolList{ResultHeader: *h, Tools: r.Tools, NextCursor: r.NextCursor}
	case *protocol.ListResourcesResult:
		return &resourceList{ResultHeader: *h, Resources: r.Resources, NextCursor: r.NextCursor}
	case *protocol.ListResourceTemplatesResult:
		return &templateList{ResultHeader: *h, ResourceTemplates: r.ResourceTemplates, NextCursor: r.NextCursor}
	case *protocol.ListPromptsResult:
		return &promptList{ResultHeader: *h, Prompts: r.Prompts, NextCursor: r.NextCursor}
	case *protocol.ReadResourceResult:
		return &readResult{ResultHeader: *h, Contents: r.Contents}
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
		caps, _ := json.Marshal(s.caps)
		m = appendMember(m, []byte(protocol.MetaClientCapabilities), caps)
		if s.info != nil {
			info, _ := json.Marshal(s.info)
			m = appendMember(m, []byte(protocol.MetaClientInfo), info)
		}
		s.metaCache = m[1:]
	})
	return s.metaCache
}
