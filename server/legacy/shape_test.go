package legacy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/legacy"
)

// richInfo identifies the core of the shape tests with every member
// Implementation has.
var richInfo = protocol.Implementation{Name: "rich", Title: "Rich", Version: "1", Description: "Every member",
	WebsiteURL: "https://example.com", Icons: []protocol.Icon{{Src: "https://example.com/s.png"}}}

// Blocks the tools return, shared by every call as a handler may share
// them: shaping must copy them, not change them.
var (
	metaText  = &protocol.TextContent{Text: "hi", Meta: protocol.Meta{"io.example/k": "v"}, Annotations: &protocol.Annotations{Priority: ptr(0.5), LastModified: "2025-01-01T00:00:00Z"}}
	metaImage = &protocol.ImageContent{Data: "aW1n", MIMEType: "image/png", Meta: protocol.Meta{"io.example/k": "v"}}
	audio     = &protocol.AudioContent{Data: "YXU=", MIMEType: "audio/wav", Meta: protocol.Meta{"io.example/k": "v"}}
	link      = &protocol.ResourceLink{Resource: protocol.Resource{URI: "rich://doc", Name: "doc", Title: "Doc", Icons: []protocol.Icon{{Src: "https://example.com/d.png"}}}}
	embedded  = &protocol.EmbeddedResource{Resource: &protocol.ResourceContents{URI: "rich://doc", Text: "D", Meta: protocol.Meta{"io.example/k": "v"}}, Meta: protocol.Meta{"io.example/k": "v"}}
)

func ptr[T any](v T) *T { return &v }

// newRich returns a core whose features carry a member of every revision:
//
//	structured  title, outputSchema, annotations, icons, _meta; returns
//	            structuredContent and its text
//	blocks      returns a block of each type, with _meta, and
//	            structuredContent without text
//	scalar      returns a structuredContent that is no object
func newRich(t *testing.T) *server.Server {
	t.Helper()
	core := server.New(richInfo, nil)
	t.Cleanup(func() { core.Close() })
	server.AddTool(core, &protocol.Tool{Name: "structured", Title: "Structured", Description: "d",
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: ptr(true)},
		Icons:       []protocol.Icon{{Src: "https://example.com/t.png"}},
		Meta:        protocol.Meta{"io.example/k": "v"},
	}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (struct {
		N int `json:"n"`
	}, error) {
		return struct {
			N int `json:"n"`
		}{1}, nil
	})
	core.AddToolHandler(&protocol.Tool{Name: "blocks", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{
				Content:           []protocol.Content{metaImage, audio, link, embedded},
				StructuredContent: json.RawMessage(`{"n":2}`),
			}, nil
		})
	core.AddToolHandler(&protocol.Tool{Name: "scalar", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{}, StructuredContent: json.RawMessage(`[1,2]`)}, nil
		})
	core.AddResource(&protocol.Resource{URI: "rich://doc", Name: "doc", Title: "Doc", MIMEType: "text/plain",
		Annotations: &protocol.Annotations{Audience: []protocol.Role{protocol.RoleUser}, LastModified: "2025-01-01T00:00:00Z"},
		Icons:       []protocol.Icon{{Src: "https://example.com/d.png"}}, Meta: protocol.Meta{"io.example/k": "v"}},
		func(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{{URI: req.URI, Text: "D", Meta: protocol.Meta{"io.example/k": "v"}}}}, nil
		})
	core.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "rich://items/{id}", Name: "item", Title: "Item",
		Icons: []protocol.Icon{{Src: "https://example.com/i.png"}}, Meta: protocol.Meta{"io.example/k": "v"}},
		server.TextResource("text/plain", "item"))
	core.AddPrompt(&protocol.Prompt{Name: "ask", Title: "Ask", Arguments: []*protocol.PromptArgument{{Name: "q", Title: "Question"}},
		Icons: []protocol.Icon{{Src: "https://example.com/p.png"}}, Meta: protocol.Meta{"io.example/k": "v"}},
		func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{
				{Role: protocol.RoleUser, Content: metaText},
				{Role: protocol.RoleUser, Content: audio},
				{Role: protocol.RoleAssistant, Content: link},
			}}, nil
		})
	core.AddCompletion(protocol.RefPrompt, "ask", server.CompleteFrom("why", "what"))
	return core
}

// richRequests are the requests of TestRevisionShapes, by name.
var richRequests = []struct{ name, method, params string }{
	{"tools/list", "tools/list", ""},
	{"structured", "tools/call", `{"name":"structured"}`},
	{"blocks", "tools/call", `{"name":"blocks"}`},
	{"scalar", "tools/call", `{"name":"scalar"}`},
	{"resources/list", "resources/list", ""},
	{"resources/templates/list", "resources/templates/list", ""},
	{"resources/read", "resources/read", `{"uri":"rich://doc"}`},
	{"prompts/list", "prompts/list", ""},
	{"prompts/get", "prompts/get", `{"name":"ask","arguments":{"q":"?"}}`},
	{"completion/complete", "completion/complete", `{"ref":{"type":"ref/prompt","name":"ask"},"argument":{"name":"q","value":"w"}}`},
}

// revisionShapes are the results of initialize and richRequests in each
// legacy revision: every member its schema defines, and no other.
var revisionShapes = map[string][]string{
	"2024-11-05": {
		// initialize
		`{"protocolVersion":"2024-11-05","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"rich","version":"1"}}`,
		// tools/list
		`{"tools":[{"name":"blocks","inputSchema":{"type":"object"}},{"name":"scalar","inputSchema":{"type":"object"}},{"name":"structured","description":"d","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}]}`,
		// structured
		`{"content":[{"type":"text","text":"{\"n\":1}"}]}`,
		// blocks
		`{"content":[{"type":"image","data":"aW1n","mimeType":"image/png"},{"type":"text","text":"[audio content omitted: not supported by protocol revision 2024-11-05]"},{"type":"text","text":"[resource link: doc (rich://doc)]"},{"type":"resource","resource":{"uri":"rich://doc","text":"D"}},{"type":"text","text":"{\"n\":2}"}]}`,
		// scalar
		`{"content":[{"type":"text","text":"[1,2]"}]}`,
		// resources/list
		`{"resources":[{"uri":"rich://doc","name":"doc","mimeType":"text/plain","annotations":{"audience":["user"]}}]}`,
		// resources/templates/list
		`{"resourceTemplates":[{"uriTemplate":"rich://items/{id}","name":"item"}]}`,
		// resources/read
		`{"contents":[{"uri":"rich://doc","text":"D"}]}`,
		// prompts/list
		`{"prompts":[{"name":"ask","arguments":[{"name":"q"}]}]}`,
		// prompts/get
		`{"messages":[{"role":"user","content":{"type":"text","text":"hi","annotations":{"priority":0.5}}},{"role":"user","content":{"type":"text","text":"[audio content omitted: not supported by protocol revision 2024-11-05]"}},{"role":"assistant","content":{"type":"text","text":"[resource link: doc (rich://doc)]"}}]}`,
		// completion/complete
		`{"completion":{"values":["why","what"]}}`,
	},
	"2025-03-26": {
		// initialize
		`{"protocolVersion":"2025-03-26","capabilities":{"logging":{},"completions":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"rich","version":"1"}}`,
		// tools/list
		`{"tools":[{"name":"blocks","inputSchema":{"type":"object"}},{"name":"scalar","inputSchema":{"type":"object"}},{"name":"structured","description":"d","inputSchema":{"type":"object","properties":{},"additionalProperties":false},"annotations":{"readOnlyHint":true}}]}`,
		// structured
		`{"content":[{"type":"text","text":"{\"n\":1}"}]}`,
		// blocks
		`{"content":[{"type":"image","data":"aW1n","mimeType":"image/png"},{"type":"audio","data":"YXU=","mimeType":"audio/wav"},{"type":"text","text":"[resource link: doc (rich://doc)]"},{"type":"resource","resource":{"uri":"rich://doc","text":"D"}},{"type":"text","text":"{\"n\":2}"}]}`,
		// scalar
		`{"content":[{"type":"text","text":"[1,2]"}]}`,
		// resources/list
		`{"resources":[{"uri":"rich://doc","name":"doc","mimeType":"text/plain","annotations":{"audience":["user"]}}]}`,
		// resources/templates/list
		`{"resourceTemplates":[{"uriTemplate":"rich://items/{id}","name":"item"}]}`,
		// resources/read
		`{"contents":[{"uri":"rich://doc","text":"D"}]}`,
		// prompts/list
		`{"prompts":[{"name":"ask","arguments":[{"name":"q"}]}]}`,
		// prompts/get
		`{"messages":[{"role":"user","content":{"type":"text","text":"hi","annotations":{"priority":0.5}}},{"role":"user","content":{"type":"audio","data":"YXU=","mimeType":"audio/wav"}},{"role":"assistant","content":{"type":"text","text":"[resource link: doc (rich://doc)]"}}]}`,
		// completion/complete
		`{"completion":{"values":["why","what"]}}`,
	},
	"2025-06-18": {
		// initialize
		`{"protocolVersion":"2025-06-18","capabilities":{"logging":{},"completions":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"rich","title":"Rich","version":"1"}}`,
		// tools/list
		`{"tools":[{"name":"blocks","inputSchema":{"type":"object"}},{"name":"scalar","inputSchema":{"type":"object"}},{"name":"structured","title":"Structured","description":"d","inputSchema":{"type":"object","properties":{},"additionalProperties":false},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false},"annotations":{"readOnlyHint":true},"_meta":{"io.example/k":"v"}}]}`,
		// structured
		`{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`,
		// blocks
		`{"content":[{"type":"image","data":"aW1n","mimeType":"image/png","_meta":{"io.example/k":"v"}},{"type":"audio","data":"YXU=","mimeType":"audio/wav","_meta":{"io.example/k":"v"}},{"type":"resource_link","uri":"rich://doc","name":"doc","title":"Doc"},{"type":"resource","resource":{"uri":"rich://doc","text":"D","_meta":{"io.example/k":"v"}},"_meta":{"io.example/k":"v"}}],"structuredContent":{"n":2}}`,
		// scalar
		`{"content":[{"type":"text","text":"[1,2]"}]}`,
		// resources/list
		`{"resources":[{"uri":"rich://doc","name":"doc","title":"Doc","mimeType":"text/plain","annotations":{"audience":["user"],"lastModified":"2025-01-01T00:00:00Z"},"_meta":{"io.example/k":"v"}}]}`,
		// resources/templates/list
		`{"resourceTemplates":[{"uriTemplate":"rich://items/{id}","name":"item","title":"Item","_meta":{"io.example/k":"v"}}]}`,
		// resources/read
		`{"contents":[{"uri":"rich://doc","text":"D","_meta":{"io.example/k":"v"}}]}`,
		// prompts/list
		`{"prompts":[{"name":"ask","title":"Ask","arguments":[{"name":"q","title":"Question"}],"_meta":{"io.example/k":"v"}}]}`,
		// prompts/get
		`{"messages":[{"role":"user","content":{"type":"text","text":"hi","annotations":{"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"},"_meta":{"io.example/k":"v"}}},{"role":"user","content":{"type":"audio","data":"YXU=","mimeType":"audio/wav","_meta":{"io.example/k":"v"}}},{"role":"assistant","content":{"type":"resource_link","uri":"rich://doc","name":"doc","title":"Doc"}}]}`,
		// completion/complete
		`{"completion":{"values":["why","what"]}}`,
	},
	"2025-11-25": {
		// initialize
		`{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"completions":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"rich","title":"Rich","version":"1","description":"Every member","websiteUrl":"https://example.com","icons":[{"src":"https://example.com/s.png"}]}}`,
		// tools/list
		`{"tools":[{"name":"blocks","inputSchema":{"type":"object"}},{"name":"scalar","inputSchema":{"type":"object"}},{"name":"structured","title":"Structured","description":"d","inputSchema":{"type":"object","properties":{},"additionalProperties":false},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false},"annotations":{"readOnlyHint":true},"icons":[{"src":"https://example.com/t.png"}],"_meta":{"io.example/k":"v"}}]}`,
		// structured
		`{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`,
		// blocks
		`{"content":[{"type":"image","data":"aW1n","mimeType":"image/png","_meta":{"io.example/k":"v"}},{"type":"audio","data":"YXU=","mimeType":"audio/wav","_meta":{"io.example/k":"v"}},{"type":"resource_link","uri":"rich://doc","name":"doc","title":"Doc","icons":[{"src":"https://example.com/d.png"}]},{"type":"resource","resource":{"uri":"rich://doc","text":"D","_meta":{"io.example/k":"v"}},"_meta":{"io.example/k":"v"}}],"structuredContent":{"n":2}}`,
		// scalar
		`{"content":[{"type":"text","text":"[1,2]"}]}`,
		// resources/list
		`{"resources":[{"uri":"rich://doc","name":"doc","title":"Doc","mimeType":"text/plain","annotations":{"audience":["user"],"lastModified":"2025-01-01T00:00:00Z"},"icons":[{"src":"https://example.com/d.png"}],"_meta":{"io.example/k":"v"}}]}`,
		// resources/templates/list
		`{"resourceTemplates":[{"uriTemplate":"rich://items/{id}","name":"item","title":"Item","icons":[{"src":"https://example.com/i.png"}],"_meta":{"io.example/k":"v"}}]}`,
		// resources/read
		`{"contents":[{"uri":"rich://doc","text":"D","_meta":{"io.example/k":"v"}}]}`,
		// prompts/list
		`{"prompts":[{"name":"ask","title":"Ask","arguments":[{"name":"q","title":"Question"}],"icons":[{"src":"https://example.com/p.png"}],"_meta":{"io.example/k":"v"}}]}`,
		// prompts/get
		`{"messages":[{"role":"user","content":{"type":"text","text":"hi","annotations":{"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"},"_meta":{"io.example/k":"v"}}},{"role":"user","content":{"type":"audio","data":"YXU=","mimeType":"audio/wav","_meta":{"io.example/k":"v"}}},{"role":"assistant","content":{"type":"resource_link","uri":"rich://doc","name":"doc","title":"Doc","icons":[{"src":"https://example.com/d.png"}]}}]}`,
		// completion/complete
		`{"completion":{"values":["why","what"]}}`,
	},
}

// laterMembers are members of later revisions that no result of the
// revision may carry, anywhere.
var laterMembers = map[string][]string{
	"2024-11-05": {`"title"`, `"outputSchema"`, `"structuredContent"`, `"icons"`, `"_meta"`, `"completions"`, `"lastModified"`, `"audio"`, `"resource_link"`, `"websiteUrl"`},
	"2025-03-26": {`"title"`, `"outputSchema"`, `"structuredContent"`, `"icons"`, `"_meta"`, `"lastModified"`, `"resource_link"`, `"websiteUrl"`},
	"2025-06-18": {`"icons"`, `"websiteUrl"`, `"description":"Every member"`},
	"2025-11-25": {},
}

// TestRevisionShapes serves the same features to a session of each legacy
// revision, oldest first, so that a shape that changed what the registry
// or a handler shares would show in the later ones.
func TestRevisionShapes(t *testing.T) {
	leakcheck.Check(t)
	a := legacy.New(newRich(t), nil)
	defer a.Close()
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2024-11-05"} {
		t.Run(v, func(t *testing.T) {
			want := revisionShapes[v]
			ts, resp := a.Initialize(context.Background(), req(t, "0", "initialize", initParams(v, `{}`)))
			got := []string{string(resp.Result)}
			for _, r := range richRequests {
				resp := ts.Handle(context.Background(), req(t, "1", r.method, r.params), nil)
				if resp == nil || resp.Error != nil {
					t.Fatalf("%s: %s", r.name, wire(resp))
				}
				got = append(got, string(resp.Result))
			}
			for i := range got {
				name := "initialize"
				if i > 0 {
					name = richRequests[i-1].name
				}
				if got[i] != want[i] {
					t.Errorf("%s\n got %s\nwant %s", name, got[i], want[i])
				}
				for _, m := range modernMembers {
					if strings.Contains(got[i], m) {
						t.Errorf("%s has %s: %s", name, m, got[i])
					}
				}
				for _, m := range laterMembers[v] {
					if strings.Contains(got[i], m) {
						t.Errorf("%s has %s: %s", name, m, got[i])
					}
				}
			}
			if v < "2025-03-26" && strings.Contains(got[1], `"annotations"`) {
				t.Errorf("tools/list has tool annotations: %s", got[1])
			}
		})
	}
}

// modernMembers are the members revision 2026-07-28 added to results.
var modernMembers = []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `"io.modelcontextprotocol/serverInfo"`}
