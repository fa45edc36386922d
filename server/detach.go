package server

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// Detach returns a copy of the call that may outlive its request, for a
// ToolCallMiddleware that runs the tool after the response is sent (the
// Tasks extension runs a call in the background this way, and again when
// the input it asked for arrives). The copy holds its own params: the
// request's belong to the transport again once it is answered. Its
// progress and log notifications reach the request's stream while the
// request is open and are dropped (ErrRequestFinished) after. Its input
// methods (Elicit, CreateMessage, ListRoots, Input) answer from the
// answers the call already had and from answers, as a retry carrying them
// all would, and ask for anything else (ErrInputRequired, which makes the
// innermost ToolCallFunc return a *protocol.InputRequiredResult whose
// inputRequests are what was asked). No requestState is read or needed:
// the caller decides which answers belong to the call.
func (c *CallRequest) Detach(answers map[string]json.RawMessage) (*CallRequest, error) {
	r := c.Request
	d := &Request{ID: r.ID, Method: r.Method, Principal: r.Principal, server: r.server,
		params: bytes.Clone(r.params), out: r.out, session: r.session, granted: r.granted, authz: r.authz}
	if len(d.params) > 0 {
		raw, err := scanParams(&jsonrpc.Message{ID: r.ID, Method: r.Method, Params: d.params})
		if err != nil {
			return nil, err
		}
		d.raw = raw
	}
	if r.Meta != nil {
		r.Meta.CopyTo(&d.metaMem) // what the request's _meta was read as, or its session's
	} else if err := d.metaMem.UnmarshalJSON(d.raw.meta); err != nil {
		return nil, protocol.InvalidParams("malformed _meta: " + err.Error())
	}
	d.Meta = &d.metaMem
	var merged map[string]json.RawMessage
	if r.input != nil && len(r.input.answers) > 0 || len(answers) > 0 {
		merged = make(map[string]json.RawMessage, len(answers)+4)
		if r.input != nil {
			maps.Copy(merged, r.input.answers)
		}
		maps.Copy(merged, answers)
	}
	d.inputMem = inputState{answers: merged}
	if r.input != nil {
		d.inputMem.state = bytes.Clone(r.input.state)
	}
	d.input = &d.inputMem
	args := json.RawMessage(d.raw.arguments)
	if len(args) == 0 || string(args) == "null" {
		args = emptyObject
	}
	return &CallRequest{Request: d, Name: c.Name, Arguments: args, Tool: c.Tool, entry: c.entry}, nil
}

// Answers returns a copy of the answers the call's input methods take:
// those the client's retry carried under keys this server asked for, and
// those Detach was given.
func (c *CallRequest) Answers() map[string]json.RawMessage {
	if c.input == nil || len(c.input.answers) == 0 {
		return nil
	}
	return maps.Clone(c.input.answers)
}
