package legacy

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// maxElicitations bounds the elicitationIds a session remembers; the
// oldest is forgotten beyond it.
const maxElicitations = 64

// ErrUnknownElicitation is returned by ElicitationComplete for an
// elicitationId no open session of this replica was sent, or was sent and
// told of its completion already.
var ErrUnknownElicitation = errors.New("legacy: no session awaits the completion of this elicitation")

// rememberElicitation records that s was sent a URL elicitation with id.
func (a *Adapter) rememberElicitation(s *Session, id string) {
	a.elicitMu.Lock()
	defer a.elicitMu.Unlock()
	select {
	case <-s.done:
		return // ended: remove has forgotten its ids, or is about to
	default:
	}
	for _, known := range s.elicitations {
		if known == id {
			return
		}
	}
	if len(s.elicitations) >= maxElicitations {
		a.dropElicitationLocked(s.elicitations[0], s)
		s.elicitations = s.elicitations[1:]
	}
	s.elicitations = append(s.elicitations, id)
	a.elicitations[id] = append(a.elicitations[id], s)
}

// dropElicitationLocked forgets that s was sent id, in the adapter's map.
func (a *Adapter) dropElicitationLocked(id string, s *Session) {
	list := a.elicitations[id]
	for i, x := range list {
		if x == s {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(a.elicitations, id)
	} else {
		a.elicitations[id] = list
	}
}

// forgetElicitation forgets that s was sent id, reporting whether it was.
func (a *Adapter) forgetElicitation(s *Session, id string) bool {
	a.elicitMu.Lock()
	defer a.elicitMu.Unlock()
	for i, known := range s.elicitations {
		if known == id {
			s.elicitations = append(s.elicitations[:i:i], s.elicitations[i+1:]...)
			a.dropElicitationLocked(id, s)
			return true
		}
	}
	return false
}

func (s *Session) sentElicitation(id string) bool {
	s.a.elicitMu.Lock()
	defer s.a.elicitMu.Unlock()
	for _, known := range s.elicitations {
		if known == id {
			return true
		}
	}
	return false
}

func elicitationComplete(id string) []byte {
	b, _ := json.Marshal(protocol.ElicitationCompleteParams{ElicitationID: id})
	return jsonrpc.AppendNotification(nil, protocol.NotificationElicitationComplete, b)
}

// ElicitationComplete tells the clients that were sent a URL elicitation
// with the elicitationId id (revision 2025-11-25) that its out-of-band
// interaction has completed: each session that was sent it gets
// notifications/elicitation/complete on its standalone stream and forgets
// id. Only the elicitationIds handlers set (protocol.ElicitParams) are
// remembered, up to 64 per session, on the replica that sent them. It
// returns ErrUnknownElicitation when no session awaits id: as for every
// elicitation of the modern era, which has no completion notification.
func (a *Adapter) ElicitationComplete(id string) error {
	a.elicitMu.Lock()
	sessions := a.elicitations[id]
	delete(a.elicitations, id)
	for _, s := range sessions {
		for i, known := range s.elicitations {
			if known == id {
				s.elicitations = append(s.elicitations[:i:i], s.elicitations[i+1:]...)
				break
			}
		}
	}
	a.elicitMu.Unlock()
	if len(sessions) == 0 {
		return ErrUnknownElicitation
	}
	msg := elicitationComplete(id)
	for _, s := range sessions {
		s.enqueue(msg)
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
	if !s.sentElicitation(id) {
		return ErrUnknownElicitation
	}
	msg := elicitationComplete(id)
	if n == nil {
		s.enqueue(msg)
	} else if err := n.Notify(msg); err != nil {
		return err
	}
	s.a.forgetElicitation(s, id)
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
