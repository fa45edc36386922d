package protocol

import (
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Content is one block of a tool result or prompt message: *TextContent,
// *ImageContent, *AudioContent, *ResourceLink or *EmbeddedResource (and, in
// sampling messages, *ToolUseContent and *ToolResultContent).
type Content interface {
	// ContentType returns the block's "type" member.
	ContentType() string
}

// Annotations are hints about how a client may use or show an object.
type Annotations struct {
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Role is the sender or recipient of a message: "user" or "assistant".
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// TextContent is text for or from a model.
type TextContent struct {
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ImageContent is a base64-encoded image.
type ImageContent struct {
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// AudioContent is base64-encoded audio.
type AudioContent struct {
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceLink points at a resource the client may read.
type ResourceLink struct {
	Resource
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	Resource    *ResourceContents `json:"resource"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// ToolUseContent is a model's request to call a tool (sampling only).
type ToolUseContent struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Meta  Meta            `json:"_meta,omitempty"`
}

// ToolResultContent is the result of a tool use (sampling only).
type ToolResultContent struct {
	ToolUseID         string          `json:"toolUseId"`
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              Meta            `json:"_meta,omitempty"`
}

// ContentType returns "text".
func (*TextContent) ContentType() string { return "text" }

// ContentType returns "image".
func (*ImageContent) ContentType() string { return "image" }

// ContentType returns "audio".
func (*AudioContent) ContentType() string { return "audio" }

// ContentType returns "resource_link".
func (*ResourceLink) ContentType() string { return "resource_link" }

// ContentType returns "resource".
func (*EmbeddedResource) ContentType() string { return "resource" }

// ContentType returns "tool_use".
func (*ToolUseContent) ContentType() string { return "tool_use" }

// ContentType returns "tool_result".
func (*ToolResultContent) ContentType() string { return "tool_result" }

// MarshalJSON encodes the block with its "type".
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	type fields ImageContent
	return json.Marshal(struct {
		Type string `json:"type"`
		*fields
	}{"image", (*fields)(c)})
}

// MarshalJSON encodes the block with its "type".
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	type fields AudioContent
	return json.Marshal(struct {
		Type string `json:"type"`
		*fields
	}{"audio", (*fields)(c)})
}

// MarshalJSON encodes the block with its "type".
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type string `json:"type"`
		*Resource
	}{"resource_link", &c.Resource})
}

// MarshalJSON encodes the block with its "type".
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	type fields EmbeddedResource
	return json.Marshal(struct {
		Type string `json:"type"`
		*fields
	}{"resource", (*fields)(c)})
}

// MarshalJSON encodes the block with its "type".
func (c *ToolUseContent) MarshalJSON() ([]byte, error) {
	type fields ToolUseContent
	return json.Marshal(struct {
		Type string `json:"type"`
		*fields
	}{"tool_use", (*fields)(c)})
}

// MarshalJSON encodes the block with its "type".
func (c *ToolResultContent) MarshalJSON() ([]byte, error) {
	type fields ToolResultContent
	if c.Content == nil {
		c2 := *c
		c2.Content = []Content{}
		c = &c2
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		*fields
	}{"tool_result", (*fields)(c)})
}

// UnmarshalJSON decodes the block's fields, including nested content.
func (c *ToolResultContent) UnmarshalJSON(b []byte) error {
	type fields ToolResultContent
	var w struct {
		*fields
		Content json.RawMessage `json:"content"`
	}
	w.fields = (*fields)(c)
	if err := jsonrpc.Unmarshal(b, &w); err != nil {
		return err
	}
	list, err := UnmarshalContentList(w.Content)
	c.Content = list
	return err
}

// UnmarshalContent decodes one content block, choosing its Go type by the
// "type" member.
func UnmarshalContent(b []byte) (Content, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := jsonrpc.Unmarshal(b, &head); err != nil {
		return nil, err
	}
	var c Content
	switch head.Type {
	case "text":
		c = &TextContent{}
	case "image":
		c = &ImageContent{}
	case "audio":
		c = &AudioContent{}
	case "resource_link":
		c = &ResourceLink{}
	case "resource":
		c = &EmbeddedResource{}
	case "tool_use":
		c = &ToolUseContent{}
	case "tool_result":
		c = &ToolResultContent{}
	default:
		return nil, fmt.Errorf("unknown content type %q", head.Type)
	}
	var err error
	if rl, ok := c.(*ResourceLink); ok {
		err = jsonrpc.Unmarshal(b, &rl.Resource)
	} else {
		err = jsonrpc.Unmarshal(b, c)
	}
	return c, err
}

// UnmarshalContentList decodes a JSON array of content blocks; null or
// absent gives nil.
func UnmarshalContentList(b []byte) ([]Content, error) {
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := jsonrpc.Unmarshal(b, &raws); err != nil {
		return nil, err
	}
	out := make([]Content, 0, len(raws))
	for _, r := range raws {
		c, err := UnmarshalContent(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
