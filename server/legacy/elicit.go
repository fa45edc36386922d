package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// ErrUnknownElicitation is returned by ElicitationComplete for an
// elicitationId no open session was sent, or was sent and told of its
// completion already.
var ErrUnknownElicitation = errors.New("legacy: no session awaits the completion of this elicitation")

// rememberElicitation records in the store that s was sent a URL
// elicitation with id.
func (a *Adapter) rememberElicitation(ctx context.Context, s *Session, id string) error {
	if err := a.store.AddElicitation(ctx, s.id, id); err != nil {
		return storeError(err)
	}
	return nil
}

func elicitationComplete(id string) []byte {
	b, _ := json.Marshal(protocol.ElicitationCompleteParams{ElicitationID: id})
	return jsonrpc.AppendNotification(nil, protocol.NotificationElicitationComplete, b)
}

// ElicitationComplete tells the clients that were sent a URL elicitation
// with the elicitationId id (revision 2025-11-25) that its out-of-band
// interaction has completed: each session that was sent it, on whichever
// replica, gets notifications/elicitation/complete on its standalone
// stream and forgets id. Only the elicitationIds handlers set
// (protocol.ElicitParams) are remembered, in the session store, up to 64
// per session. It returns ErrUnknownElicitation when no session awaits
// id: as for every elicitation of the modern era, which has no completion
// notification.
func (a *Adapter) ElicitationComplete(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	sessions, err := a.store.TakeElicitation(ctx, id)
	if err != nil {
		return storeError(err)
	}
	if len(sessions) == 0 {
		return ErrUnknownElicitation
	}
	msg := elicitationComplete(id)
	for _, sid := range sessions {
		if err := a.push(ctx, sid, msg); err != nil {
			a.logger.Warn("legacy: queueing notifications/elicitation/complete", "session", sid, "err", err)
		}
	}
	return nil
}

// ElicitationComplete sends notifications/elicitation/complete for id to
// the session's client through n, a stream of one of its requests, and
// forgets id; with n nil, it queues the notification for the standalone
// stream. It returns ErrUnknownElicitation when the session was not sent
// a URL elicitation with id (or was told of its completion already), and
// n's error when sending fails, in which case id is not forgotten.
func (s *Session) ElicitationComplete(id string, n transport.Notifier) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	sent, err := s.a.store.HasElicitation(ctx, s.id, id)
	if err != nil {
		return storeError(err)
	}
	if !sent {
		return ErrUnknownElicitation
	}
	msg := elicitationComplete(id)
	if n == nil {
		if err := s.a.push(ctx, s.id, msg); err != nil {
			return storeError(err)
		}
	} else if err := n.Notify(msg); err != nil {
		return err
	}
	if _, err := s.a.store.ForgetElicitation(ctx, s.id, id); err != nil {
		s.a.logger.Warn("legacy: forgetting an elicitationId", "session", s.id, "err", err)
	}
	return nil
}

// sessionNotifier is the notifier the core gets for a request of a
// session: it shapes what the core sends for the session's revision, and
// checks the completions of URL elicitations the core sends on the
// request's stream (Request.ElicitationComplete) against the ids the
// session was sent, forgetting each id once it is completed.
type sessionNotifier struct {
	s *Session
	n transport.Notifier
}

// completionPrefix starts every notifications/elicitation/complete that
// jsonrpc.AppendNotification encodes, as the core's do.
var completionPrefix = []byte(`{"jsonrpc":"2.0","method":"` + protocol.NotificationElicitationComplete + `"`)

// orNil returns sn as a transport.Notifier, or nil when the request has
// none to wrap.
func (sn *sessionNotifier) orNil() transport.Notifier {
	if sn.n == nil {
		return nil
	}
	return sn
}

func (sn sessionNotifier) Notify(msg []byte) error {
	if !bytes.HasPrefix(msg, completionPrefix) {
		return sn.n.Notify(msg)
	}
	var p struct {
		Params protocol.ElicitationCompleteParams `json:"params"`
	}
	if err := jsonrpc.Unmarshal(msg, &p); err != nil {
		return err
	}
	return sn.s.ElicitationComplete(p.Params.ElicitationID, sn.n)
}

// Queue queues msg, an encoded JSON-RPC notification, for the standalone
// stream of the session id, on whichever replica its client follows it
// (the oldest queued messages are dropped beyond the outbox bound). It
// fails when the session is gone or the legacy era is off.
func (a *Adapter) Queue(ctx context.Context, id string, msg []byte) error {
	if a.Legacy() == nil {
		return errors.New("legacy: the legacy era is off")
	}
	if err := a.push(ctx, id, msg); err != nil {
		return storeError(err)
	}
	return nil
}
