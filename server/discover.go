package server

import (
	"context"

	"github.com/mcpkit/mcpkit/protocol"
)

func (s *Server) serveDiscover(ctx context.Context, r *Request) (protocol.Result, error) {
	return &protocol.DiscoverResult{
		SupportedVersions: s.versions,
		Capabilities:      s.Capabilities(),
		Instructions:      s.opts.Instructions,
		CacheHints:        s.discoverCache(),
	}, nil
}
