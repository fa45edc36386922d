package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// CallOptions adjust one request.
type CallOptions struct {
	// OnProgress receives the request's progress notifications; setting it
	// asks the server for them.
	OnProgress func(*protocol.ProgressParams)
	// NoCache bypasses the cache for this request.
	NoCache bool
	// Meta adds members to the request's _meta, in both eras and in every
	// round of it (the retries answering input_required as well): trace
	// context (SEP-414's unprefixed "traceparent", "tracestate" and
	// "baggage"), an extension's members. Each value is JSON text, sent
	// compacted (json.RawMessage(`"00-…-01"`) for a string). A key must be
	// a valid _meta key name and not one the client sets itself
	// (progressToken, and the io.modelcontextprotocol/ protocolVersion,
	// clientInfo, clientCapabilities and logLevel): the client's own
	// members are never duplicated or replaced; such a key fails the call
	// with ErrReservedMeta, in either era, before anything is sent.
	Meta map[string]json.RawMessage
}

// noOptions stands for nil CallOptions; it is never written.
var noOptions CallOptions

// ErrTooManyRounds is returned when a request needs more input rounds than
// Options.MaxRounds.
var ErrTooManyRounds = errors.New("client: too many input rounds")

// ErrUnknownResultType is returned for a result whose resultType the
// client does not know (the spec makes it invalid) and no middleware
// turned into a complete one.
var ErrUnknownResultType = errors.New("client: unknown resultType")

// Call sends a request for method and decodes its complete result into
// result with jsonrpc.Unmarshal (nil discards it). params is any value
// that encodes to a JSON object (a struct, a map, a json.RawMessage), or
// nil for none; _meta, inputResponses and requestState are the client's
// to set and refused in it (CallOptions.Meta adds to _meta).
//
// Every built-in method goes through Call, and so gets what Call does: the
// era's _meta; progress (CallOptions.OnProgress); the cache, for the
// methods whose results carry caching hints; input_required rounds,
// answered with the handlers of Options, for tools/call, prompts/get,
// resources/read and methods the core specification does not define (an
// extension's), and refused for the other core methods; a tools/call
// retried once after relisting the tools when the server reports changed
// header parameters; a request sent again once when its stream broke; a
// legacy session renewed once when the server forgot it; cancellation with
// ctx. It runs through the Call middleware of Options.
func (s *Session) Call(ctx context.Context, method string, params, result any, o *CallOptions) error {
	var base json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("client: encoding %s params: %w", method, err)
		}
		if string(b) != "null" {
			base = b
		}
	}
	var raw json.RawMessage
	var err error
	if s.callChain == nil {
		if o == nil {
			o = &noOptions
		}
		c := Call{Method: method, Params: base, Meta: o.Meta, Options: o}
		raw, err = s.do(ctx, &c)
	} else {
		c := &Call{Method: method, Params: base, Options: &CallOptions{}, session: s}
		if o != nil {
			*c.Options = *o
		}
		c.Meta = make(map[string]json.RawMessage, len(c.Options.Meta)+4)
		maps.Copy(c.Meta, c.Options.Meta)
		c.Options.Meta = nil // Meta holds its members
		raw, err = s.callChain(ctx, c)
	}
	if err != nil {
		return err
	}
	switch rt := resultTypeOf(raw); rt {
	case "", protocol.ResultComplete:
	default:
		return fmt.Errorf("%w %q", ErrUnknownResultType, rt)
	}
	if result == nil {
		return nil
	}
	return jsonrpc.Unmarshal(raw, result)
}

// resultTypeOf returns a result's resultType, "" when it has none or the
// result is not an object (a complete result).
func resultTypeOf(raw json.RawMessage) protocol.ResultType {
	var head struct {
		ResultType protocol.ResultType `json:"resultType"`
	}
	_ = jsonrpc.Unmarshal(raw, &head)
	return head.ResultType
}

// checkParams returns a call's params fit to send: a compact JSON object
// without the members the client sets itself, or nil.
func checkParams(method string, p json.RawMessage) (json.RawMessage, error) {
	if len(p) == 0 {
		return nil, nil
	}
	if !json.Valid(p) {
		return nil, fmt.Errorf("client: %s params are not valid JSON", method)
	}
	if bytes.ContainsAny(p, "\r\n") {
		// Line breaks end a message on stdio: the params go compacted.
		var buf bytes.Buffer
		_ = json.Compact(&buf, p)
		p = buf.Bytes()
	}
	p = bytes.TrimSpace(p)
	if string(p) == "null" {
		return nil, nil
	}
	if p[0] != '{' {
		return nil, fmt.Errorf("client: %s params must be a JSON object", method)
	}
	var own string
	members := 0
	errOwn := errors.New("own member")
	_ = jsonrpc.EachMember(p, func(k []byte, _ jsontext.Value) error {
		members++
		switch string(k) {
		case "_meta":
			own = string(k)
			return errOwn
		case "inputResponses", "requestState":
			// The MRTR members are the client's, but where a method
			// defines them as its own: the Tasks extension's tasks/update
			// carries the answers to a task's inputRequests (and such a
			// call cannot be retried with input: see do).
			if !ownsInputMembers[method] {
				own = string(k)
				return errOwn
			}
		}
		return nil
	})
	if own != "" {
		return nil, fmt.Errorf("client: %s params carry %q, which the client sets itself (CallOptions.Meta adds to _meta)", method, own)
	}
	if members == 0 {
		return nil, nil
	}
	return p, nil
}

// ownsInputMembers are the methods whose params define inputResponses
// themselves.
var ownsInputMembers = map[string]bool{protocol.MethodTasksUpdate: true}

// hasInputMembers reports whether params (checked by checkParams) carry
// inputResponses or requestState.
func hasInputMembers(params json.RawMessage) bool {
	found := errors.New("found")
	return jsonrpc.EachMember(params, func(k []byte, _ jsontext.Value) error {
		if string(k) == "inputResponses" || string(k) == "requestState" {
			return found
		}
		return nil
	}) == found
}

// roundTrip sends one request with a new id.
func (s *Session) roundTrip(ctx context.Context, method string, params json.RawMessage, onMessage func(*jsonrpc.Message)) (*jsonrpc.Message, error) {
	return s.roundTripID(ctx, s.newID(), method, params, onMessage)
}

// roundTripID sends one request with the given id.
func (s *Session) roundTripID(ctx context.Context, id jsonrpc.ID, method string, params json.RawMessage, onMessage func(*jsonrpc.Message)) (*jsonrpc.Message, error) {
	c := &transport.Call{
		Message:         &jsonrpc.Message{ID: id, Method: method, Params: params},
		ProtocolVersion: s.version,
		Modern:          s.era == EraModern,
	}
	if method == protocol.MethodToolsCall && s.era == EraModern {
		c.Headers = s.paramHeaders(params)
	}
	return s.conn.Call(ctx, c, onMessage)
}

// onMessage handles what arrives on a request's stream before its response.
func (s *Session) onMessage(ctx context.Context, o *CallOptions) func(*jsonrpc.Message) {
	return func(m *jsonrpc.Message) {
		switch {
		case m.IsRequest():
			// A legacy server asks on the request's stream; the server waits
			// for the answer before it goes on, so answer in line.
			if err := s.conn.Send(ctx, s.answer(ctx, m), s.version); err != nil {
				s.c.logger.Warn("answering a server request", "method", m.Method, "err", err)
			}
		case m.IsNotification():
			s.receiveNotification(ctx, Incoming{Method: m.Method, Params: m.Params, from: fromCall, onProgress: o.OnProgress})
		}
	}
}

// inputMethods are the core methods a server may answer with
// input_required; methods the core does not define (an extension's) may
// be too.
var inputMethods = map[string]bool{protocol.MethodToolsCall: true, protocol.MethodPromptsGet: true, protocol.MethodResourcesRead: true}

// coreMethods are the requests the core specification defines.
var coreMethods = map[string]bool{
	protocol.MethodDiscover: true, protocol.MethodToolsList: true, protocol.MethodToolsCall: true,
	protocol.MethodResourcesList: true, protocol.MethodResourcesRead: true, protocol.MethodResourceTemplatesList: true,
	protocol.MethodPromptsList: true, protocol.MethodPromptsGet: true, protocol.MethodComplete: true,
	protocol.MethodSubscriptionsListen: true, protocol.MethodInitialize: true, protocol.MethodPing: true,
	protocol.MethodLoggingSetLevel: true, protocol.MethodResourcesSubscribe: true, protocol.MethodResourcesUnsubscribe: true,
	protocol.MethodElicit: true, protocol.MethodCreateMessage: true, protocol.MethodListRoots: true,
}

// inputAllowed reports whether a server may answer method with
// input_required.
func inputAllowed(method string) bool { return inputMethods[method] || !coreMethods[method] }

// do is the innermost CallFunc: it sends the call's request, answering
// input_required rounds, and returns the first result of another
// resultType.
func (s *Session) do(ctx context.Context, c *Call) (json.RawMessage, error) {
	method, o := c.Method, c.Options
	if o == nil {
		o = &noOptions
	}
	base, err := checkParams(method, c.Params)
	if err != nil {
		return nil, err
	}
	if err := checkMeta(c.Meta); err != nil {
		return nil, err
	}
	useCache := s.c.cache != nil && !o.NoCache && cacheable[method]
	key := ""
	if useCache {
		key = s.cacheKey(method, base)
		if raw, ok := s.lookup(method, base); ok {
			return raw, nil
		}
	}
	var progress *jsonrpc.ID
	if o.OnProgress != nil {
		t := jsonrpc.StringID("p-" + strconv.FormatInt(s.nextID.Add(1), 10))
		progress = &t
	}
	params0, err := s.withMetaExtra(base, progress, c.Meta)
	if err != nil {
		return nil, err
	}
	current := params0
	relisted, resent, renewed := false, false, false
	for round := 0; ; round++ {
		id := s.newID()
		resp, err := s.roundTripID(ctx, id, method, current, s.onMessage(ctx, o))
		if err != nil {
			switch {
			case ctx.Err() != nil:
				s.cancelled(id, err)
			case errors.Is(err, errStreamBroken) && !resent:
				resent = true // a broken stream: the request again, once
				continue
			case errors.Is(err, transport.ErrSessionExpired) && s.era == EraLegacy && !renewed:
				renewed = true // the server forgot the session: a new one
				if err := s.startLegacy(ctx, s.version); err != nil {
					return nil, err
				}
				continue
			}
			return nil, err
		}
		if resp.Error != nil {
			if resp.Error.Code == protocol.CodeHeaderMismatch && method == protocol.MethodToolsCall && !relisted {
				relisted = true // the tool's headers may have changed
				if _, err := s.ListTools(ctx, &ListOptions{All: true, NoCache: true}); err == nil {
					continue
				}
			}
			return nil, resp.Error
		}
		switch resultTypeOf(resp.Result) {
		case "", protocol.ResultComplete:
			if useCache && round == 0 {
				s.c.cache.putResult(key, s.privateKey(method, base), resp.Result)
			}
			return resp.Result, nil
		case protocol.ResultInputRequired:
			if !inputAllowed(method) {
				return nil, fmt.Errorf("client: the server answered %s with input_required, which of the core methods only tools/call, prompts/get and resources/read may", method)
			}
			if round+1 >= s.c.opts.MaxRounds {
				return nil, ErrTooManyRounds
			}
			if hasInputMembers(base) {
				return nil, fmt.Errorf("client: the server answered %s with input_required, but its params carry inputResponses or requestState of their own", method)
			}
			next, err := s.provideInput(ctx, params0, resp.Result)
			if err != nil {
				return nil, err
			}
			current = next
		default:
			return resp.Result, nil // an extension's result type: the middleware's
		}
	}
}

// provideInput answers an InputRequiredResult and returns the retry's
// params: the original ones with inputResponses and the exact requestState.
func (s *Session) provideInput(ctx context.Context, params json.RawMessage, result json.RawMessage) (json.RawMessage, error) {
	var ir struct {
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState *string `json:"requestState"`
	}
	if err := jsonrpc.Unmarshal(result, &ir); err != nil {
		return nil, fmt.Errorf("client: reading input_required result: %w", err)
	}
	responses := make(map[string]json.RawMessage, len(ir.InputRequests))
	for k, r := range ir.InputRequests {
		res, err := s.receiveRequest(ctx, r.Method, r.Params)
		if err != nil {
			return nil, fmt.Errorf("client: answering %s for %q: %w", r.Method, k, err)
		}
		if len(res) == 0 {
			return nil, fmt.Errorf("client: answering %s for %q: no result", r.Method, k)
		}
		responses[k] = res
	}
	out := append([]byte(nil), params[:len(params)-1]...)
	if len(out) > 1 {
		out = append(out, ',')
	}
	b, err := json.Marshal(responses)
	if err != nil {
		return nil, fmt.Errorf("client: encoding inputResponses: %w", err)
	}
	out = append(append(out, `"inputResponses":`...), b...)
	if ir.RequestState != nil {
		st, _ := json.Marshal(*ir.RequestState)
		out = append(append(out, `,"requestState":`...), st...)
	}
	return append(out, '}'), nil
}

// errStreamBroken is what transports report for a response stream that
// ended without the response.
var errStreamBroken = transport.ErrStreamBroken

// cancelled tells a legacy server over HTTP that the request was cancelled:
// there a closed connection is not a cancellation. (stdio connections send
// the notification themselves; a modern stream's close is the signal.)
func (s *Session) cancelled(id jsonrpc.ID, err error) {
	if s.era != EraLegacy {
		return
	}
	if !s.conn.CarriesHeaders() {
		return
	}
	b, _ := json.Marshal(protocol.CancelledParams{RequestID: id, Reason: err.Error()})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.conn.Send(ctx, jsonrpc.AppendNotification(nil, protocol.NotificationCancelled, b), s.version)
}
