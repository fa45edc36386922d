package legacy

import (
	"bytes"
	"context"
	"encoding/json"
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
// maps the result back to the legacy shape.
func (s *Session) serveCore(ctx context.Context, msg *jsonrpc.Message, n transport.Notifier) (*jsonrpc.Response, error) {
	params, err := s.modernParams(msg.Params)
	if err != nil {
		return nil, err
	}
	var answers map[string]json.RawMessage
	state := ""
	for round := 0; ; round++ {
		p := params
		if answers != nil || state != "" {
			p = withInput(params, answers, state)
		}
		resp := s.a.core.Handle(ctx, &jsonrpc.Message{ID: msg.ID, Method: msg.Method, Params: p}, n)
		if resp == nil {
			return nil, ctx.Err()
		}
		if resp.Error != nil {
			return &jsonrpc.Response{ID: msg.ID, Error: legacyError(msg.Method, resp.Error)}, nil
		}
		if res, inputRequired := s.a.legacyResult(resp.Result); !inputRequired {
			return &jsonrpc.Response{ID: msg.ID, Result: res}, nil
		}
		if round >= s.a.opts.MaxRounds {
			return nil, protocol.InternalError(fmt.Sprintf("%s needed more than %d rounds of client input", msg.Method, s.a.opts.MaxRounds))
		}
		var raw struct {
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		}
		if err := json.Unmarshal(resp.Result, &raw); err != nil {
			return nil, protocol.InternalError("reading input_required result: " + err.Error())
		}
		keys := make([]string, 0, len(raw.InputRequests))
		for k := range raw.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		got := make(map[string]json.RawMessage, len(keys))
		for _, k := range keys {
			req := raw.InputRequests[k]
			res, err := s.ask(ctx, n, req.Method, req.Params)
			if err != nil {
				return nil, err
			}
			got[k] = res
		}
		answers, state = got, raw.RequestState
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

// modernParams rebuilds the params of a legacy request with the session's
// per-request _meta, keeping the request's own _meta members (such as a
// progressToken) and dropping MRTR members, which only the session sets.
func (s *Session) modernParams(params []byte) ([]byte, error) {
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
	return append(out, '}', '}'), nil
}

// withInput returns params with the MRTR members of a retry added.
func withInput(params []byte, answers map[string]json.RawMessage, state string) []byte {
	out := append([]byte(nil), params[:len(params)-1]...)
	if answers != nil {
		b, _ := json.Marshal(answers)
		out = append(out, `,"inputResponses":`...)
		out = append(out, b...)
	}
	if state != "" {
		out = append(out, `,"requestState":`...)
		out = append(out, quote(state)...)
	}
	return append(out, '}')
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

// legacyResult removes the members revision 2026-07-28 added to results
// (resultType, the cache hints, serverInfo in _meta), in the same pass
// telling whether the result is input_required (an MRTR round, which is
// not answered as it is). res is the core's and may be reused.
func (a *Adapter) legacyResult(res []byte) (out []byte, inputRequired bool) {
	// The usual case: the core's encoders put the header first, and a
	// complete result whose _meta is the server's info alone (or that has
	// no _meta) begins with one of completeHeads. When the rest names none
	// of the other members to remove, it is the legacy result as it is.
	for _, head := range a.completeHeads {
		if !bytes.HasPrefix(res, head) {
			continue
		}
		rest := res[len(head)-1:]
		if bytes.Contains(rest, []byte(`"ttlMs"`)) || bytes.Contains(rest, []byte(`"cacheScope"`)) ||
			bytes.Contains(rest, []byte(protocol.MetaServerInfo)) {
			continue
		}
		rest[0] = '{'
		return rest, false
	}
	return legacyResultSlow(res)
}

// legacyResultSlow is legacyResult for any result: member by member.
func legacyResultSlow(res []byte) (out []byte, inputRequired bool) {
	out = make([]byte, 0, len(res))
	out = append(out, '{')
	_ = jsonrpc.RawMembers(res, func(key, value []byte) bool {
		switch string(key) {
		case "resultType":
			inputRequired = string(value) == `"`+string(protocol.ResultInputRequired)+`"`
			return true
		case "ttlMs", "cacheScope":
			return true
		case "_meta":
			if m := stripServerInfo(value); m != nil {
				out = appendMember(out, key, m)
			}
			return true
		}
		out = appendMember(out, key, value)
		return true
	})
	return append(out, '}'), inputRequired
}

func stripServerInfo(meta []byte) []byte {
	out := []byte{'{'}
	_ = jsonrpc.RawMembers(meta, func(key, value []byte) bool {
		if string(key) != protocol.MetaServerInfo {
			out = appendMember(out, key, value)
		}
		return true
	})
	if len(out) == 1 {
		return nil
	}
	return append(out, '}')
}

// legacyError maps the core's errors to the codes the legacy revisions
// define.
func legacyError(method string, e *jsonrpc.Error) *jsonrpc.Error {
	switch {
	case method == protocol.MethodResourcesRead && e.Code == protocol.CodeInvalidParams && e.Message == protocol.MessageResourceNotFound:
		return &jsonrpc.Error{Code: protocol.CodeResourceNotFoundLegacy, Message: e.Message, Data: e.Data}
	case e.Code == protocol.CodeMissingRequiredClientCapability:
		// Not a legacy code: the request is invalid for this client.
		return &jsonrpc.Error{Code: protocol.CodeInvalidRequest, Message: e.Message, Data: e.Data}
	}
	return e
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
