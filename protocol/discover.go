package protocol

// RequestParams are the params of a request with no members of its own,
// such as server/discover.
type RequestParams struct {
	Meta *RequestMeta `json:"_meta,omitempty"`
}

// DiscoverResult is the result of server/discover.
type DiscoverResult struct {
	ResultHeader
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	CacheHints
}
