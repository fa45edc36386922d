package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

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
}

// ErrTooManyRounds is returned when a request needs more input rounds than
// Options.MaxRounds.
var ErrTooManyRounds = errors.New("client: too many input rounds")

// ErrUnknownResultType is returned for a result whose resultType the
// client does not know (the spec makes it invalid).
var ErrUnknownResultType = errors.New("client: unknown resultType")

// withMeta returns params (an object or nil) with the request's _meta: in
// the modern era the per-request protocol fields, in both the progress
// token when one is wanted.
func (s *Session) withMeta(params json.RawMessage, progress *jsonrpc.ID) json.RawMessage {
	meta := []byte{'{'}
	add := func(k string, v []byte) {
		if len(meta) > 1 {
			meta = append(meta, ',')
		}
		kb, _ := json.Marshal(k)
		meta = append(append(append(meta, kb...), ':'), v...)
	}
	if progress != nil {
		add(protocol.MetaProgressToken, progress.Raw())
	}
	if s.era == EraModern {
		v, _ := json.Marshal(s.version)
		add(protocol.MetaProtocolVersion, v)
		caps, _ := json.Marshal(s.c.Capabilities())
		add(protocol.MetaClientCapabilities, caps)
		info, _ := json.Marshal(s.c.info)
		add(protocol.MetaClientInfo, info)
		if s.c.opts.LogLevel != "" {
			l, _ := json.Marshal(s.c.opts.LogLevel)
			add(protocol.MetaLogLevel, l)
		}
	}
	if len(meta) == 1 {
		if len(params) == 0 {
			return json.RawMessage("{}")
		}
		return params
	}
	meta = append(meta, '}')
	out := []byte{'{'}
	if len(params) > 2 {
		out = append(out, params[1:len(params)-1]...)
		out = append(out, ',')
	}
	out = append(out, `"_meta":`...)
	out = append(out, meta...)
	return append(out, '}')
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
		case m.Method == protocol.NotificationProgress:
			if o != nil && o.OnProgress != nil {
				var p protocol.ProgressParams
				if jsonrpc.Unmarshal(m.Params, &p) == nil {
					o.OnProgress(&p)
				}
			}
		case m.Method == protocol.NotificationMessage:
			s.log(m.Params)
		case m.IsNotification():
			s.notification(m)
		}
	}
}

var mrtrMethods = map[string]bool{protocol.MethodToolsCall: true, protocol.MethodPromptsGet: true, protocol.MethodResourcesRead: true}

// call sends a request, answering input_required rounds, and decodes the
// complete result into out.
func (s *Session) call(ctx context.Context, method string, params any, out any, o *CallOptions) error {
	var base json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("client: encoding %s params: %w", method, err)
		}
		base = b
	}
	if o == nil {
		o = &CallOptions{}
	}
	useCache := s.c.cache != nil && !o.NoCache && cacheable[method]
	key := ""
	if useCache {
		key = s.cacheKey(method, base)
		if raw, ok := s.lookup(method, base); ok {
			return jsonrpc.Unmarshal(raw, out)
		}
	}
	var progress *jsonrpc.ID
	if o.OnProgress != nil {
		t := jsonrpc.StringID("p-" + strconv.FormatInt(s.nextID.Add(1), 10))
		progress = &t
	}
	params0 := s.withMeta(base, progress)
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
					return err
				}
				continue
			}
			return err
		}
		if resp.Error != nil {
			if resp.Error.Code == protocol.CodeHeaderMismatch && method == protocol.MethodToolsCall && !relisted {
				relisted = true // the tool's headers may have changed
				if _, err := s.ListTools(ctx, &ListOptions{All: true, NoCache: true}); err == nil {
					continue
				}
			}
			return resp.Error
		}
		var head struct {
			ResultType protocol.ResultType `json:"resultType"`
		}
		_ = jsonrpc.Unmarshal(resp.Result, &head) // a result that is not an object is complete
		switch head.ResultType {
		case "", protocol.ResultComplete:
			if useCache && round == 0 {
				s.c.cache.putResult(key, s.privateKey(method, base), resp.Result)
			}
			if out == nil {
				return nil
			}
			return jsonrpc.Unmarshal(resp.Result, out)
		case protocol.ResultInputRequired:
			if !mrtrMethods[method] {
				return fmt.Errorf("client: the server answered %s with input_required, which only tools/call, prompts/get and resources/read may", method)
			}
			if round+1 >= s.c.opts.MaxRounds {
				return ErrTooManyRounds
			}
			next, err := s.provideInput(ctx, params0, resp.Result)
			if err != nil {
				return err
			}
			current = next
		default:
			return fmt.Errorf("%w %q", ErrUnknownResultType, head.ResultType)
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
		res, err := s.handleInput(ctx, r.Method, r.Params)
		if err != nil {
			return nil, fmt.Errorf("client: answering %s for %q: %w", r.Method, k, err)
		}
		responses[k] = res
	}
	out := append([]byte(nil), params[:len(params)-1]...)
	if len(out) > 1 {
		out = append(out, ',')
	}
	b, _ := json.Marshal(responses)
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
