package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// ErrInputRequired is returned by the Request input methods (Elicit,
// CreateMessage, ListRoots) when the client has not answered yet. A handler
// returns it (or an error wrapping it) as it is; the server then answers
// with an InputRequiredResult carrying every input asked for so far, and the
// client retries the request with the answers. Handlers are written in
// straight-line Go and run again from the top on each retry.
var ErrInputRequired = errors.New("server: input required")

// inputState is the MRTR side of a request: the answers known so far (from
// requestState and the retry's inputResponses), what the handler asked for
// in this round, and the handler's own state.
type inputState struct {
	answers map[string]json.RawMessage
	asked   map[string]*protocol.InputRequest
	state   []byte
	// once marks the state this round seals as single-use.
	once bool
	// unasked are answers under keys no requestState asked for, used only
	// when the handler allows it (acceptUnasked).
	unasked       map[string]json.RawMessage
	acceptUnasked bool
	// digest identifies the request's salient params (name or uri, and
	// arguments); computed only when state is opened or sealed, off the
	// common path.
	digest string
}

// digestValue returns the digest of the request's salient params.
func (r *Request) digestValue() string {
	in := r.input
	if in.digest == "" {
		target := r.raw.name
		if r.Method == protocol.MethodResourcesRead {
			target = r.raw.uri
		}
		t, _ := stringParam(target, "")
		args := r.raw.arguments
		if len(args) == 0 || string(args) == "null" {
			args = emptyObject
		}
		in.digest = digestOf([]byte(t), canonical(args))
	}
	return in.digest
}

// startInput opens the request's MRTR state from a retry's requestState,
// which is bound to the request's salient params, and takes from its
// inputResponses only the answers to the input requests that state says
// were issued: anything else — answers on a first request, or under keys
// that state did not ask for — is unexpected input and ignored, so the
// handler asks again. A single-use state is consumed here.
func (r *Request) startInput(ctx context.Context) error {
	p, err := r.inputParams()
	if err != nil {
		return err
	}
	r.inputMem = inputState{}
	in := &r.inputMem
	r.input = in
	if p.RequestState == "" {
		in.unasked = p.InputResponses
		return nil
	}
	st, expires, err := r.server.sealer.open(p.RequestState, r.Method, r.digestValue(), r.Principal)
	if err != nil {
		r.server.logger.Warn("rejected requestState", "method", r.Method, "err", err)
		return protocol.InvalidParams("invalid requestState: " + err.Error())
	}
	if st.Once {
		fresh, err := r.server.once.Use(ctx, st.ID, expires)
		if err != nil {
			r.server.logger.Error("recording a single-use requestState", "method", r.Method, "err", err)
			return protocol.InternalError("cannot record a single-use requestState: " + err.Error())
		}
		if !fresh {
			r.server.logger.Warn("rejected requestState", "method", r.Method, "err", errStateUsed)
			return protocol.InvalidParams("invalid requestState: " + errStateUsed.Error())
		}
	}
	in.answers, in.state = st.Answers, st.State
	for k, v := range p.InputResponses {
		if _, ok := st.Expect[k]; !ok {
			if in.unasked == nil {
				in.unasked = make(map[string]json.RawMessage)
			}
			in.unasked[k] = v
			continue
		}
		if firstByte(v) != '{' {
			return protocol.InvalidParams(fmt.Sprintf("inputResponses[%q] must be an object", k))
		}
		if in.answers == nil {
			in.answers = make(map[string]json.RawMessage, len(st.Expect))
		}
		in.answers[k] = v
	}
	return nil
}

var errStateUsed = errors.New("already used: this request's confirmation is accepted once; send the request again without requestState")

// inputRequired turns ErrInputRequired into the InputRequiredResult.
func (r *Request) inputRequired(err error) (*protocol.InputRequiredResult, bool) {
	if !errors.Is(err, ErrInputRequired) || r.input == nil {
		return nil, false
	}
	st := sealedState{Answers: r.input.answers, State: r.input.state, Once: r.input.once}
	if len(r.input.asked) > 0 {
		st.Expect = make(map[string]string, len(r.input.asked))
		for k, ir := range r.input.asked {
			st.Expect[k] = ir.Method
		}
	}
	if st.Once {
		st.ID = rand.Text()
	}
	token, serr := r.server.sealer.seal(r.Method, r.digestValue(), r.Principal, st)
	if serr != nil {
		r.server.logger.Error("sealing requestState", "err", serr)
		return nil, false
	}
	res := &protocol.InputRequiredResult{InputRequests: r.input.asked, RequestState: token}
	res.ResultType = protocol.ResultInputRequired
	return res, true
}

var errNoInput = protocol.InternalError("input requests are only possible on tools/call, prompts/get and resources/read")

// ask looks up the answer under key, or records the input request and
// returns ErrInputRequired.
func (r *Request) ask(key string, method string, params any, into any) error {
	if r.input == nil {
		return errNoInput
	}
	if key == "" {
		return errors.New("server: input request key must not be empty")
	}
	ans, ok := r.input.answers[key]
	if !ok && r.input.acceptUnasked {
		if ans, ok = r.input.unasked[key]; ok {
			if firstByte(ans) != '{' {
				return protocol.InvalidParams(fmt.Sprintf("inputResponses[%q] must be an object", key))
			}
			if r.input.answers == nil {
				r.input.answers = make(map[string]json.RawMessage)
			}
			r.input.answers[key] = ans // carried into later rounds
		}
	}
	if ok {
		if err := decodeAnswer(ans, into); err != nil {
			return protocol.InvalidParams(fmt.Sprintf("inputResponses[%q] is not a valid %s result: %v", key, method, err))
		}
		return nil
	}
	if r.input.asked == nil {
		r.input.asked = make(map[string]*protocol.InputRequest)
	}
	r.input.asked[key] = &protocol.InputRequest{Method: method, Params: params}
	return ErrInputRequired
}

func decodeAnswer(ans json.RawMessage, into any) error {
	return jsonrpc.Unmarshal(ans, into)
}

// Elicit asks the user, through the client, for the input p describes. On
// the retry that carries the answer under key it returns the client's
// result; until then it records the request and returns ErrInputRequired.
// It returns a -32021 error when the client did not declare the elicitation
// capability (or its url mode, for a URL elicitation; legacy clients
// before revision 2025-11-25 have none).
//
// A URL elicitation's p.ElicitationID reaches legacy (2025-11-25) clients
// only, for ElicitationComplete; they get one made up when it is empty.
func (r *Request) Elicit(key string, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	caps := r.Meta.ClientCapabilities
	if p.Mode == "url" {
		if caps.Elicitation == nil || caps.Elicitation.URL == nil {
			return nil, protocol.MissingCapability(protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{URL: protocol.Object{}}})
		}
	} else if caps.Elicitation == nil || (caps.Elicitation.Form == nil && caps.Elicitation.URL != nil) {
		return nil, protocol.MissingCapability(protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{}})
	}
	if p.ElicitationID != "" && r.session == nil {
		// Revision 2026-07-28 has no elicitationId.
		q := *p
		q.ElicitationID = ""
		p = &q
	}
	var res protocol.ElicitResult
	if err := r.ask(key, protocol.MethodElicit, p, &res); err != nil {
		return nil, err
	}
	switch res.Action {
	case protocol.ElicitAccept, protocol.ElicitDecline, protocol.ElicitCancel:
	default:
		return nil, protocol.InvalidParams(fmt.Sprintf("inputResponses[%q]: elicitation action must be accept, decline or cancel", key))
	}
	return &res, nil
}

// CreateMessage asks the client to sample a model. It behaves as Elicit,
// with the sampling capability (and sampling.tools when p offers tools).
func (r *Request) CreateMessage(key string, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	caps := r.Meta.ClientCapabilities
	if caps.Sampling == nil {
		return nil, protocol.MissingCapability(protocol.ClientCapabilities{Sampling: &protocol.SamplingCapability{}})
	}
	if (len(p.Tools) > 0 || p.ToolChoice != nil) && caps.Sampling.Tools == nil {
		return nil, protocol.MissingCapability(protocol.ClientCapabilities{Sampling: &protocol.SamplingCapability{Tools: protocol.Object{}}})
	}
	var res protocol.CreateMessageResult
	if err := r.ask(key, protocol.MethodCreateMessage, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListRoots asks the client for its roots. It behaves as Elicit, with the
// roots capability.
func (r *Request) ListRoots(key string) (*protocol.ListRootsResult, error) {
	if r.Meta.ClientCapabilities.Roots == nil {
		return nil, protocol.MissingCapability(protocol.ClientCapabilities{Roots: &protocol.RootsCapability{}})
	}
	var res protocol.ListRootsResult
	if err := r.ask(key, protocol.MethodListRoots, nil, &res); err != nil {
		return nil, err
	}
	if res.Roots == nil {
		return nil, protocol.InvalidParams(fmt.Sprintf("inputResponses[%q]: roots/list result needs roots", key))
	}
	return &res, nil
}

// State returns the handler's own state carried from the previous round in
// requestState (nil on the first round).
func (r *Request) State() []byte {
	if r.input == nil {
		return nil
	}
	return r.input.state
}

// SetState sets state to carry, sealed in requestState, into the next round
// of this request.
func (r *Request) SetState(state []byte) {
	if r.input != nil {
		r.input.state = state
	}
}

// SingleUse makes the requestState this round issues single-use: the
// server accepts it back once, recording it in Options.OnceStore, and
// answers a replay with an invalid-params error before the handler runs.
// A handler whose retry has a lasting effect — running a confirmed write,
// spending a one-time grant — calls it on every round, before asking. The
// requestState is consumed by the retry that presents it, whatever the
// handler then does, so a client that wants to try again starts over.
func (r *Request) SingleUse() {
	if r.input != nil {
		r.input.once = true
	}
}

// AcceptUnasked lets this request's input methods take an answer the
// client sent without being asked: on a first request, or under a key the
// requestState it came with did not ask for. By default such answers are
// ignored and the question is asked. Call it before asking, and only where
// an answer has no consequence a client could forge by sending it unasked —
// never for a confirmation.
func (r *Request) AcceptUnasked() {
	if r.input != nil {
		r.input.acceptUnasked = true
	}
}

// Input returns the raw answer under key to a question this server asked
// (after AcceptUnasked, any answer under key), if any.
func (r *Request) Input(key string) (json.RawMessage, bool) {
	if r.input == nil {
		return nil, false
	}
	v, ok := r.input.answers[key]
	if !ok && r.input.acceptUnasked {
		v, ok = r.input.unasked[key]
	}
	return v, ok
}

// ElicitationComplete tells the client that the out-of-band interaction of
// the URL elicitation with the elicitationId id has completed, on this
// request's stream. Only the legacy revision 2025-11-25 has that
// notification (notifications/elicitation/complete), for the elicitations
// sent with p.ElicitationID set: for a modern request, whose client learns
// the outcome by retrying, it does nothing and returns nil. For a legacy
// request it fails with legacy.ErrUnknownElicitation when the request's
// session was not sent id, and with ErrRequestFinished once the request
// is answered (Server.ElicitationComplete reaches the session then). It
// is possible on tools/call, prompts/get and resources/read.
func (r *Request) ElicitationComplete(id string) error {
	if r.input == nil {
		return errNoInput
	}
	if r.session == nil {
		return nil
	}
	// The legacy adapter checks id against the elicitations the session
	// was sent, on the way out.
	return r.notify(protocol.NotificationElicitationComplete, protocol.ElicitationCompleteParams{ElicitationID: id})
}

// ElicitationComplete tells the legacy (2025-11-25) clients that were sent
// a URL elicitation with the elicitationId id that its out-of-band
// interaction has completed, with notifications/elicitation/complete on
// their sessions' standalone streams. Sessions remember the ids handlers
// set (protocol.ElicitParams.ElicitationID), up to 64 each, on the replica
// that sent them. It returns legacy.ErrUnknownElicitation when no session
// awaits id — as for every elicitation of the modern era, which has no
// completion notification: servers of both eras may ignore that error.
// It reaches the sessions of the server's own legacy era (Options.Legacy);
// an Adapter made with legacy.New has its own ElicitationComplete.
func (s *Server) ElicitationComplete(id string) error {
	return s.front.ElicitationComplete(id)
}
