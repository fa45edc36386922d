package protocol

import (
	"encoding/json"
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// InputParams are the MRTR members a retried tools/call, prompts/get or
// resources/read carries: the client's answers and the server's state, echoed.
type InputParams struct {
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	RequestState   string         `json:"requestState,omitempty"`
}

// InputResponses maps the keys of an InputRequiredResult's inputRequests to
// the client's results. Decoding rejects anything but a JSON object.
type InputResponses map[string]json.RawMessage

var errInputResponses = errors.New("inputResponses must be an object")

// UnmarshalJSON decodes an object of results; null and other values are
// errors.
func (r *InputResponses) UnmarshalJSON(b []byte) error {
	if firstNonSpace(b) != '{' {
		return errInputResponses
	}
	m := map[string]json.RawMessage{}
	if err := jsonrpc.Unmarshal(b, &m); err != nil {
		return err
	}
	*r = m
	return nil
}

// InputRequest is one server-to-client request carried in an
// InputRequiredResult: elicitation/create, sampling/createMessage or
// roots/list.
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// InputRequiredResult asks the client for input before the request can
// complete; the client retries the request with the answers.
type InputRequiredResult struct {
	ResultHeader
	InputRequests map[string]*InputRequest `json:"inputRequests,omitempty"`
	RequestState  string                   `json:"requestState,omitempty"`
}

// ElicitParams are the params of elicitation/create: form mode (Message and
// RequestedSchema) or URL mode (Mode "url", Message and URL).
type ElicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	// ElicitationID identifies a URL-mode elicitation in revision
	// 2025-11-25, whose notifications/elicitation/complete names it.
	// Revision 2026-07-28 has neither: servers leave it out of modern
	// input requests.
	ElicitationID string `json:"elicitationId,omitempty"`
}

// ElicitationCompleteParams are the params of
// notifications/elicitation/complete (revision 2025-11-25).
type ElicitationCompleteParams struct {
	ElicitationID string `json:"elicitationId"`
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// SamplingMessage is a message to or from a model.
type SamplingMessage struct {
	Role    Role      `json:"role"`
	Content []Content `json:"-"`
	Meta    Meta      `json:"_meta,omitempty"`
}

// MarshalJSON sends a single block as an object and several as an array.
func (m *SamplingMessage) MarshalJSON() ([]byte, error) {
	var content any = m.Content
	if len(m.Content) == 1 {
		content = m.Content[0]
	}
	return json.Marshal(struct {
		Role    Role `json:"role"`
		Content any  `json:"content"`
		Meta    Meta `json:"_meta,omitempty"`
	}{m.Role, content, m.Meta})
}

// UnmarshalJSON accepts content as one block or an array of blocks.
func (m *SamplingMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
		Meta    Meta            `json:"_meta"`
	}
	if err := jsonrpc.Unmarshal(b, &w); err != nil {
		return err
	}
	m.Role, m.Meta = w.Role, w.Meta
	if c := firstNonSpace(w.Content); c == '[' {
		list, err := UnmarshalContentList(w.Content)
		m.Content = list
		return err
	}
	c, err := UnmarshalContent(w.Content)
	if err != nil {
		return err
	}
	m.Content = []Content{c}
	return nil
}

// ModelPreferences are a server's advisory model-selection priorities.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model, or a part of a model's name.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []*SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences  `json:"modelPreferences,omitempty"`
	SystemPrompt     string             `json:"systemPrompt,omitempty"`
	IncludeContext   string             `json:"includeContext,omitempty"`
	Temperature      *float64           `json:"temperature,omitempty"`
	MaxTokens        int64              `json:"maxTokens"`
	StopSequences    []string           `json:"stopSequences,omitempty"`
	Metadata         map[string]any     `json:"metadata,omitempty"`
	Tools            []*Tool            `json:"tools,omitempty"`
	ToolChoice       *ToolChoice        `json:"toolChoice,omitempty"`
}

// ToolChoice controls tool use during sampling.
type ToolChoice struct {
	Mode string `json:"mode,omitempty"`
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	SamplingMessage
	Model      string `json:"model"`
	StopReason string `json:"stopReason,omitempty"`
}

// MarshalJSON encodes the message with the model and stop reason.
func (r *CreateMessageResult) MarshalJSON() ([]byte, error) {
	msg, err := r.SamplingMessage.MarshalJSON()
	if err != nil {
		return nil, err
	}
	extra, err := json.Marshal(struct {
		Model      string `json:"model"`
		StopReason string `json:"stopReason,omitempty"`
	}{r.Model, r.StopReason})
	if err != nil {
		return nil, err
	}
	out := append(msg[:len(msg)-1], ',')
	return append(out, extra[1:]...), nil
}

// UnmarshalJSON decodes the message with the model and stop reason.
func (r *CreateMessageResult) UnmarshalJSON(b []byte) error {
	if err := r.SamplingMessage.UnmarshalJSON(b); err != nil {
		return err
	}
	var w struct {
		Model      string `json:"model"`
		StopReason string `json:"stopReason"`
	}
	if err := jsonrpc.Unmarshal(b, &w); err != nil {
		return err
	}
	r.Model, r.StopReason = w.Model, w.StopReason
	return nil
}

// Root is a directory or file the client lets the server work on.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []*Root `json:"roots"`
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}
