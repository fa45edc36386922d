package streamable

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcpkit/mcpkit/internal/httpguard"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// The legacy era (revisions 2025-03-26 to 2025-11-25) of Streamable HTTP:
// sessions named by Mcp-Session-Id, a standalone GET stream, SSE event ids
// and resumption with Last-Event-ID, and server-initiated polling (closing a
// response's connection while its stream goes on).

// HeaderSessionID names the legacy session of a request.
const HeaderSessionID = "Mcp-Session-Id"

// serveInitialize answers initialize, which opens a session when the
// handler serves the legacy era.
func (x *Handler) serveInitialize(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	res, err := x.serveRecovered(ctx, &transport.Request{Message: msg, Kind: transport.KindInitialize, Cancel: cancel})
	if o, ok := res.(*transport.Opened); ok && o.Session != nil {
		w.Header().Set(HeaderSessionID, o.Session.ID())
	}
	code := http.StatusOK
	if err != nil {
		code = Status(err)
	}
	resp := transport.Respond(ctx, msg.ID, res, err)
	if resp == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	if c := challenge(ctx, err); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(resp.Append(nil))
}

// retryAfter is the Retry-After, in seconds, of a 503: a refusal for lack
// of room, which a moment may make.
const retryAfter = "5"

// lookupSession finds the session a request's Mcp-Session-Id names; when
// there is none (or another principal's), it answers and ok is false.
func (x *Handler) lookupSession(w http.ResponseWriter, r *http.Request, sid string) (sess transport.Session, ok bool) {
	sess, err := x.legacy.Session(r.Context(), sid)
	if err != nil && errors.Is(err, protocol.ErrForbidden) {
		// Another principal's session: it exists and goes on for its
		// owner (a 404 would send the client to initialize again).
		httpguard.WriteError(w, http.StatusForbidden, nil, protocol.WireError(err))
		return nil, false
	}
	if err != nil && errors.Is(err, protocol.ErrUnavailable) {
		// The session store failed: the session may well exist, and a 404
		// would end it for the client.
		w.Header().Set("Retry-After", retryAfter)
		httpguard.WriteError(w, http.StatusServiceUnavailable, nil, protocol.WireError(err))
		return nil, false
	}
	if err != nil {
		httpguard.WriteError(w, http.StatusNotFound, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Found: no such session (it ended or expired); initialize a new one", nil))
		return nil, false
	}
	return sess, true
}

// checkSessionVersion checks the MCP-Protocol-Version header of a request
// of sess against the session's revision; on a mismatch it answers 400
// and reports false.
func (x *Handler) checkSessionVersion(w http.ResponseWriter, r *http.Request, sess transport.Session) bool {
	v, ok := headerValue(r.Header, HeaderProtocolVersion)
	if !ok {
		// Only clients of revisions before 2025-06-18 omit the header.
		// Where one is served, the session's negotiated version tells the
		// revision (2025-11-25, Protocol Version Header); where none is, a
		// request without the header is rejected (2026-07-28, Protocol
		// Version Header).
		if !headerless(sess.Version()) && !x.servesLegacy(protocol.Version2025_03_26) {
			httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Bad Request: missing "+HeaderProtocolVersion+" header", nil))
			return false
		}
		v = sess.Version()
	}
	if v != sess.Version() {
		httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Bad Request: "+HeaderProtocolVersion+" "+v+" does not match the session's "+sess.Version(), nil))
		return false
	}
	return true
}

// serveSessionStream serves a session's GET (its standalone stream, or a
// stream resumed with Last-Event-ID) and DELETE (its end).
func (x *Handler) serveSessionStream(w http.ResponseWriter, r *http.Request, sess transport.Session) {
	if !x.checkSessionVersion(w, r, sess) {
		return
	}
	if r.Method == http.MethodDelete {
		sess.Close()
		w.WriteHeader(http.StatusOK)
		return
	}
	if !httpguard.Negotiate(r.Header.Values("Accept")).SSE {
		httpguard.WriteError(w, http.StatusNotAcceptable, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "Not Acceptable: the GET stream is text/event-stream", nil))
		return
	}
	x.serveGet(w, r, sess)
}

// serveBatch answers a 2025-03-26 batch with an array of responses.
func (x *Handler) serveBatch(w http.ResponseWriter, r *http.Request, sess transport.Session, body []byte) {
	var parts []json.RawMessage
	if err := jsonrpc.Unmarshal(body, &parts); err != nil || len(parts) == 0 {
		httpguard.WriteError(w, http.StatusBadRequest, nil, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: malformed batch", nil))
		return
	}
	out := []byte{'['}
	n := 0
	for _, p := range parts {
		msg, err := jsonrpc.Decode(p)
		var resp []byte
		switch {
		case err != nil:
			var id jsonrpc.ID
			if msg != nil {
				id = msg.ID
			}
			resp = jsonrpc.AppendError(nil, id, decodeError(err))
		case msg.IsNotification(), msg.IsResponse():
			x.h.Receive(r.Context(), msg, sess)
		case transport.Classify(msg, sess) != transport.KindSession:
			resp = jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(protocol.CodeInvalidRequest, "invalid request: a batch holds requests of its session only", nil))
		case msg.Method == protocol.MethodInitialize:
			resp = jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(protocol.CodeInvalidRequest, "initialize must not be part of a batch", nil))
		default:
			ctx, cancel := context.WithCancel(r.Context())
			res, err := x.serveRecovered(ctx, &transport.Request{Message: msg, Kind: transport.KindSession, Session: sess, Cancel: cancel})
			if r := transport.Respond(ctx, msg.ID, res, err); r != nil {
				resp = r.Append(nil)
			}
			cancel()
		}
		if resp != nil {
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, resp...)
			n++
		}
	}
	if n == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(out, ']'))
}

// headerless reports whether a revision predates the MCP-Protocol-Version
// header (2024-11-05, 2025-03-26).
func headerless(version string) bool {
	return version == protocol.Version2024_11_05 || version == protocol.Version2025_03_26
}

// servesLegacy reports whether the handler serves the legacy revision.
func (x *Handler) servesLegacy(version string) bool {
	for _, v := range x.legacy.Versions() {
		if v == version {
			return true
		}
	}
	return false
}
