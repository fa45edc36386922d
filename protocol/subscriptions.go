package protocol

// SubscriptionFilter is the set of change notifications a listen stream
// opts in to.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// ListenParams are the params of subscriptions/listen.
type ListenParams struct {
	Notifications *SubscriptionFilter `json:"notifications"`
	Meta          *RequestMeta        `json:"_meta,omitempty"`
}

// AcknowledgedParams are the params of
// notifications/subscriptions/acknowledged.
type AcknowledgedParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          *NotificationMeta  `json:"_meta,omitempty"`
}

// ListChangedParams are the params of the list-changed notifications on a
// listen stream.
type ListChangedParams struct {
	Meta *NotificationMeta `json:"_meta,omitempty"`
}
