package server

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// rawParams holds, as raw JSON, the members of a request's params that the
// core reads, found in one pass with exact key matching. Reading them
// straight from the request avoids decoding the params through reflection
// on every call, and keeps the core's reading of a body identical to the
// HTTP transport's header check.
type rawParams struct {
	meta, name, uri, arguments []byte
	rare                       *rareParams // nil unless one of its members came
}

// rareParams are the members most requests do not carry: a list's cursor,
// an MRTR retry's inputResponses and requestState.
type rareParams struct {
	cursor, inputResponses, requestState []byte
}

func (p *rawParams) slot(key []byte) *[]byte {
	switch string(key) {
	case "_meta":
		return &p.meta
	case "name":
		return &p.name
	case "uri":
		return &p.uri
	case "arguments":
		return &p.arguments
	case "cursor":
		return &p.rareOnes().cursor
	case "inputResponses":
		return &p.rareOnes().inputResponses
	case "requestState":
		return &p.rareOnes().requestState
	}
	return nil
}

func (p *rawParams) rareOnes() *rareParams {
	if p.rare == nil {
		p.rare = &rareParams{}
	}
	return p.rare
}

// rareMembers returns the rare members (none when none came).
func (p *rawParams) rareMembers() rareParams {
	if p.rare == nil {
		return rareParams{}
	}
	return *p.rare
}

// scanParams splits the params object of msg (as jsonrpc.Decode split it,
// or reading it under the policy of jsonrpc.Unmarshal); a repeated member
// is invalid params.
func scanParams(msg *jsonrpc.Message) (rawParams, error) {
	var p rawParams
	err := msg.EachParam(func(key []byte, value jsontext.Value) error {
		if s := p.slot(key); s != nil {
			*s = value
		}
		return nil
	})
	if err == nil {
		return p, nil
	}
	var se *jsonrpc.SyntaxError
	switch {
	case errors.As(err, &se) && se.Duplicate && strings.Count(se.Pointer, "/") == 1:
		return p, protocol.InvalidParams("params has more than one member " + se.Member)
	case se != nil && se.Duplicate:
		return p, protocol.InvalidParams("invalid params: " + se.Msg + " at " + echo(se.Pointer))
	}
	return p, protocol.InvalidParams("malformed params")
}

// stringParam returns the string value of a raw member ("" when absent).
func stringParam(raw []byte, name string) (string, error) {
	if raw == nil || string(raw) == "null" {
		return "", nil
	}
	s, ok := jsonrpc.StringValue(raw)
	if !ok {
		return "", protocol.InvalidParams(name + " must be a string")
	}
	return s, nil
}

// inputParams decodes the MRTR members of the params.
func (r *Request) inputParams() (protocol.InputParams, error) {
	var p protocol.InputParams
	rare := r.raw.rareMembers()
	if rare.inputResponses != nil {
		if err := p.InputResponses.UnmarshalJSON(rare.inputResponses); err != nil {
			return p, protocol.InvalidParams("invalid params: " + err.Error())
		}
	}
	s, err := stringParam(rare.requestState, "requestState")
	if err != nil {
		return p, err
	}
	p.RequestState = s
	return p, nil
}

// cursorParam returns the list cursor of the params.
func (r *Request) cursorParam() (string, error) {
	return stringParam(r.raw.rareMembers().cursor, "cursor")
}

var emptyObject = json.RawMessage("{}")
