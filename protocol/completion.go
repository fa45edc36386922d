package protocol

// Reference types for completion/complete.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompleteReference names what is being completed: a prompt (Type
// "ref/prompt", Name) or a resource template (Type "ref/resource", URI).
type CompleteReference struct {
	Type  string `json:"type"`
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"`
	URI   string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and its current value.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries arguments already resolved.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Ref      CompleteReference `json:"ref"`
	Argument CompleteArgument  `json:"argument"`
	Context  *CompleteContext  `json:"context,omitempty"`
	Meta     *RequestMeta      `json:"_meta,omitempty"`
}

// Completion is a list of suggestions.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int64   `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	ResultHeader
	Completion Completion `json:"completion"`
}
