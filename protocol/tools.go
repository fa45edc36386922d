package protocol

import (
	"encoding/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Tool is a tool definition as tools/list reports it.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	// Execution is the tool's execution member of revision 2025-11-25
	// (taskSupport). Sessions of earlier revisions never get it; the Tasks
	// extension sets it on legacy tools/list results from its policies.
	Execution *ToolExecution `json:"execution,omitempty"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// ToolExecution is how a tool runs, in revision 2025-11-25.
type ToolExecution struct {
	// TaskSupport is "forbidden" (the default), "optional" or "required":
	// whether a client may, or must, call the tool as a task.
	TaskSupport string `json:"taskSupport,omitempty"`
}

// ToolAnnotations are untrusted hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams = ListResourcesParams

// ListToolsResult is the result of tools/list.
type ListToolsResult struct {
	ResultHeader
	Tools      []*Tool `json:"tools"`
	NextCursor string  `json:"nextCursor,omitempty"`
	CacheHints
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	InputParams
	Meta *RequestMeta `json:"_meta,omitempty"`
}

// CallToolResult is the result of tools/call.
type CallToolResult struct {
	ResultHeader
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// UnmarshalJSON decodes the result, including its content blocks.
func (r *CallToolResult) UnmarshalJSON(b []byte) error {
	type fields CallToolResult
	var w struct {
		*fields
		Content json.RawMessage `json:"content"`
	}
	w.fields = (*fields)(r)
	if err := jsonrpc.Unmarshal(b, &w); err != nil {
		return err
	}
	list, err := UnmarshalContentList(w.Content)
	r.Content = list
	return err
}
