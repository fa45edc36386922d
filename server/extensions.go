package server

import (
	"maps"

	"github.com/mcpkit/mcpkit/protocol"
)

// AddExtension advertises the extension id, with its settings (nil means
// none, sent as {}), in the capabilities' extensions map beside
// Options.Extensions, replacing an earlier entry for id. Code that
// registers the features of an extension on a server calls it with them.
func (s *Server) AddExtension(id string, settings protocol.Object) {
	if id == "" {
		panic("server: AddExtension needs an extension identifier")
	}
	if settings == nil {
		settings = protocol.Object{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A new map: Capabilities hands out the current one, and Options'
	// belongs to the caller.
	ext := make(map[string]protocol.Object, len(s.opts.Extensions)+1)
	maps.Copy(ext, s.opts.Extensions)
	ext[id] = settings
	s.opts.Extensions = ext
}
