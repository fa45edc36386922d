package server

import (
	"context"

	"github.com/mcpkit/mcpkit/feed"
)

// The change feed lives in package feed; these names keep it at hand for
// servers.
type (
	// EventKind is feed.EventKind.
	EventKind = feed.EventKind
	// Event is feed.Event.
	Event = feed.Event
	// Feed is feed.Feed.
	Feed = feed.Feed
	// MemoryFeed is feed.MemoryFeed.
	MemoryFeed = feed.MemoryFeed
)

// Change event kinds (see package feed).
const (
	ToolsListChanged     = feed.ToolsListChanged
	PromptsListChanged   = feed.PromptsListChanged
	ResourcesListChanged = feed.ResourcesListChanged
	ResourceUpdated      = feed.ResourceUpdated
	SubscriptionLost     = feed.SubscriptionLost
	feedNotification     = feed.Notification
)

// NewMemoryFeed returns an in-process feed (feed.NewMemoryFeed).
func NewMemoryFeed() *MemoryFeed { return feed.NewMemoryFeed() }

// FeedEvents is feed.Events.
func FeedEvents(ctx context.Context, f Feed, buffer int) (<-chan Event, error) {
	return feed.Events(ctx, f, buffer)
}

// publish sends e to the server's feed, logging a failure.
func (s *Server) publish(e Event) {
	if err := s.feed.Publish(context.Background(), e); err != nil {
		s.logger.Warn("publishing change event", "err", err)
	}
}

// Publish sends a change event to the server's feed: to the listeners of
// every replica when the feed is shared. An event with a Key is announced
// once per Key within the feed's de-duplication window, so that replicas
// that each detect the same change (the same fingerprint of the same
// table) announce it once; give a Key only to changes no later change
// can repeat. A failure is logged.
func (s *Server) Publish(e Event) { s.publish(e) }

// NotifyToolsChanged tells listeners that the tool list changed (the
// Add/Remove methods do this themselves).
func (s *Server) NotifyToolsChanged() { s.publish(Event{Kind: ToolsListChanged}) }

// NotifyPromptsChanged tells listeners that the prompt list changed.
func (s *Server) NotifyPromptsChanged() { s.publish(Event{Kind: PromptsListChanged}) }

// NotifyResourcesChanged tells listeners that the resource list changed.
func (s *Server) NotifyResourcesChanged() { s.publish(Event{Kind: ResourcesListChanged}) }

// NotifyResourceUpdated tells listeners subscribed to uri that the
// resource changed.
func (s *Server) NotifyResourceUpdated(uri string) {
	s.publish(Event{Kind: ResourceUpdated, URI: uri})
}
