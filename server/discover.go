package server

import (
	"context"

	"github.com/mcpkit/mcpkit/protocol"
)

func (s *Server) serveDiscover(ctx context.Context, r *Request) (protocol.Result, error) {
	caps := s.Capabilities()
	caps.Tasks = nil // the 2025-11-25 member: legacy initialize results only
	return &protocol.DiscoverResult{
		SupportedVersions: s.versions,
		Capabilities:      caps,
		Instructions:      s.opts.Instructions,
		CacheHints:        s.discoverCache(),
	}, nil
}
