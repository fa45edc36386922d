package protocol

import "encoding/json"

// Resource describes a readable resource.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceContents is the content of a resource: text, or (when Blob is not
// nil) binary data, sent base64-encoded.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text"`
	Blob     []byte `json:"blob,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// MarshalJSON encodes text contents with "text" and binary ones with "blob".
func (c *ResourceContents) MarshalJSON() ([]byte, error) {
	if c.Blob != nil {
		return json.Marshal(struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType,omitempty"`
			Blob     []byte `json:"blob"`
			Meta     Meta   `json:"_meta,omitempty"`
		}{c.URI, c.MIMEType, c.Blob, c.Meta})
	}
	return json.Marshal(struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text"`
		Meta     Meta   `json:"_meta,omitempty"`
	}{c.URI, c.MIMEType, c.Text, c.Meta})
}

// ListResourcesParams are the params of resources/list.
type ListResourcesParams struct {
	Cursor string       `json:"cursor,omitempty"`
	Meta   *RequestMeta `json:"_meta,omitempty"`
}

// ListResourcesResult is the result of resources/list.
type ListResourcesResult struct {
	ResultHeader
	Resources  []*Resource `json:"resources"`
	NextCursor string      `json:"nextCursor,omitempty"`
	CacheHints
}

// ListResourceTemplatesParams are the params of resources/templates/list.
type ListResourceTemplatesParams = ListResourcesParams

// ListResourceTemplatesResult is the result of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResultHeader
	ResourceTemplates []*ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string              `json:"nextCursor,omitempty"`
	CacheHints
}

// ReadResourceParams are the params of resources/read.
type ReadResourceParams struct {
	URI string `json:"uri"`
	InputParams
	Meta *RequestMeta `json:"_meta,omitempty"`
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	ResultHeader
	Contents []*ResourceContents `json:"contents"`
	CacheHints
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	URI  string            `json:"uri"`
	Meta *NotificationMeta `json:"_meta,omitempty"`
}
