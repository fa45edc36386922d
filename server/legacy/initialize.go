package legacy

import (
	"context"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

func (a *Adapter) refuseInitialize() error {
	vs := a.core.Versions()
	return jsonrpc.NewError(protocol.CodeInvalidRequest,
		"this server does not serve the initialize handshake; it serves protocol versions "+strings.Join(vs, ", ")+" with per-request _meta",
		map[string][]string{"supported": vs})
}

type initializeParams struct {
	ProtocolVersion string                       `json:"protocolVersion"`
	Capabilities    *protocol.ClientCapabilities `json:"capabilities"`
	ClientInfo      *protocol.Implementation     `json:"clientInfo"`
}

type initializeResult struct {
	protocol.ResultHeader
	ProtocolVersion string                      `json:"protocolVersion"`
	Capabilities    protocol.ServerCapabilities `json:"capabilities"`
	ServerInfo      protocol.Implementation     `json:"serverInfo"`
	Instructions    string                      `json:"instructions,omitempty"`
}

// initialize answers initialize with version negotiation and opens a
// session, which it returns with the result.
func (a *Adapter) initialize(ctx context.Context, req *transport.Request) (protocol.Result, error) {
	if a.Legacy() == nil {
		return nil, a.refuseInitialize()
	}
	msg := req.Message
	var p initializeParams
	if len(msg.Params) > 0 {
		if err := jsonrpc.Unmarshal(msg.Params, &p); err != nil {
			return nil, protocol.InvalidParams("invalid initialize params: " + err.Error())
		}
	}
	if p.ProtocolVersion == "" {
		return nil, protocol.InvalidParams("initialize needs a protocolVersion")
	}
	version := a.opts.Versions[0]
	for _, v := range a.opts.Versions {
		if v == p.ProtocolVersion {
			version = v
		}
	}
	caps := p.Capabilities
	if caps == nil {
		caps = &protocol.ClientCapabilities{}
	}
	s := a.newSession(version, caps, p.ClientInfo)
	s.principal = a.principal(ctx)
	// The record first: another replica may get the client's next request.
	if err := a.store.Create(ctx, s.record(), a.opts.IdleTimeout); err != nil {
		a.logger.Warn("legacy: storing a new session", "err", err)
		return nil, storeError(err)
	}
	if _, err := a.add(s); err != nil {
		a.forget(s.id)
		return nil, err
	}
	a.startBG.Do(a.background)
	res := &initializeResult{ProtocolVersion: version, Capabilities: s.rev.serverCapabilities(a.core.Capabilities()), ServerInfo: s.rev.implementation(a.core.Info()), Instructions: a.core.Instructions()}
	return &transport.Opened{Result: res, Session: s}, nil
}
