package protocol

import (
	"encoding/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Prompt is a prompt or prompt template as prompts/list reports it.
type Prompt struct {
	Name        string            `json:"name"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Arguments   []*PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon            `json:"icons,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// PromptArgument is an argument a prompt accepts.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// ListPromptsParams are the params of prompts/list.
type ListPromptsParams = ListResourcesParams

// ListPromptsResult is the result of prompts/list.
type ListPromptsResult struct {
	ResultHeader
	Prompts    []*Prompt `json:"prompts"`
	NextCursor string    `json:"nextCursor,omitempty"`
	CacheHints
}

// GetPromptParams are the params of prompts/get.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	InputParams
	Meta *RequestMeta `json:"_meta,omitempty"`
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	ResultHeader
	Description string           `json:"description,omitempty"`
	Messages    []*PromptMessage `json:"messages"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// UnmarshalJSON decodes the message and its content block.
func (m *PromptMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := jsonrpc.Unmarshal(b, &w); err != nil {
		return err
	}
	c, err := UnmarshalContent(w.Content)
	m.Role, m.Content = w.Role, c
	return err
}
