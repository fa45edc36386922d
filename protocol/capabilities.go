package protocol

import "encoding/json"

// Implementation names and versions a client or server.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Icon is an image a user interface may show for an implementation, tool,
// prompt or resource.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Object is a JSON object whose members a capability does not define.
type Object = map[string]json.RawMessage

// ClientCapabilities are what a client declares, per request, that it
// supports. A nil member is a capability not declared.
type ClientCapabilities struct {
	Experimental map[string]Object      `json:"experimental,omitempty"`
	Roots        *RootsCapability       `json:"roots,omitempty"`
	Sampling     *SamplingCapability    `json:"sampling,omitempty"`
	Elicitation  *ElicitationCapability `json:"elicitation,omitempty"`
	Extensions   map[string]Object      `json:"extensions,omitempty"`
	// Tasks is the tasks capability of revision 2025-11-25 (list, cancel,
	// requests): a legacy session's client declares it in initialize.
	// Revision 2026-07-28 has tasks as an extension (Extensions) instead.
	Tasks Object `json:"tasks,omitzero"`
}

// RootsCapability is the client's roots capability.
type RootsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability is the client's sampling capability.
type SamplingCapability struct {
	Context Object `json:"context,omitzero"`
	Tools   Object `json:"tools,omitzero"`
}

// ElicitationCapability is the client's elicitation capability; declaring it
// with neither mode means form mode only.
type ElicitationCapability struct {
	Form Object `json:"form,omitzero"`
	URL  Object `json:"url,omitzero"`
}

// ServerCapabilities are what a server supports, as server/discover reports.
type ServerCapabilities struct {
	Experimental map[string]Object      `json:"experimental,omitempty"`
	Logging      Object                 `json:"logging,omitzero"`
	Completions  Object                 `json:"completions,omitzero"`
	Prompts      *ListChangedCapability `json:"prompts,omitempty"`
	Resources    *ResourcesCapability   `json:"resources,omitempty"`
	Tools        *ListChangedCapability `json:"tools,omitempty"`
	Extensions   map[string]Object      `json:"extensions,omitempty"`
	// Tasks is the tasks capability of revision 2025-11-25, which only a
	// legacy initialize result carries (Server.SetLegacyTasks);
	// server/discover leaves it out.
	Tasks Object `json:"tasks,omitzero"`
}

// ListChangedCapability is the tools or prompts capability.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability is the resources capability.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}
