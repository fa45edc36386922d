package everything

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// A 1×1 PNG and a short silent WAV, base64-encoded.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
	wavBase64 = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA"
)

// Info is the everything-server's implementation info.
var Info = protocol.Implementation{Name: "mcpkit-everything-server", Version: "0.1.0"}

// New returns a server with every fixture registered.
func New(opts *server.Options) *server.Server {
	s := server.New(Info, opts)
	addContentTools(s)
	addDiagnosticTools(s)
	addInputTools(s)
	addSchemaTools(s)
	addLegacyTools(s)
	addResources(s)
	addPrompts(s)
	return s
}

// NoArgs is the input of tools without parameters.
type NoArgs struct{}

func text(t string) *protocol.TextContent { return &protocol.TextContent{Text: t} }

func addContentTools(s *server.Server) {
	simple := func(name, desc string, content ...protocol.Content) {
		server.AddTool(s, &protocol.Tool{Name: name, Description: desc},
			func(ctx context.Context, req *server.CallRequest, _ NoArgs) (*protocol.CallToolResult, error) {
				return &protocol.CallToolResult{Content: content}, nil
			})
	}
	simple("test_simple_text", "Returns a simple text response",
		text("This is a simple text response for testing."))
	simple("test_image_content", "Returns an image",
		&protocol.ImageContent{Data: pngBase64, MIMEType: "image/png"})
	simple("test_audio_content", "Returns audio",
		&protocol.AudioContent{Data: wavBase64, MIMEType: "audio/wav"})
	simple("test_embedded_resource", "Returns an embedded resource",
		&protocol.EmbeddedResource{Resource: &protocol.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}})
	simple("test_multiple_content_types", "Returns text, an image and a resource",
		text("Multiple content types test:"),
		&protocol.ImageContent{Data: pngBase64, MIMEType: "image/png"},
		&protocol.EmbeddedResource{Resource: &protocol.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}})

	server.AddTool(s, &protocol.Tool{Name: "test_error_handling", Description: "Always fails with a tool error"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (*protocol.CallToolResult, error) {
			return nil, errors.New("This tool intentionally returns an error for testing")
		})

	server.AddTool(s, &protocol.Tool{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100 before answering"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (*protocol.CallToolResult, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(50 * time.Millisecond):
					}
				}
				if err := req.Progress(p, 100, ""); err != nil {
					return nil, err
				}
			}
			return server.TextResult("Tool with progress completed"), nil
		})

	type echoArgs struct {
		Text string `json:"text" description:"The text to echo back"`
	}
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes the text it is given"},
		func(ctx context.Context, req *server.CallRequest, in echoArgs) (string, error) {
			return in.Text, nil
		})

	type sleepArgs struct {
		Milliseconds int `json:"ms" description:"How long to sleep" jsonschema:"minimum=0,maximum=600000"`
	}
	server.AddTool(s, &protocol.Tool{Name: "test_sleep", Description: "Sleeps for the given time unless cancelled"},
		func(ctx context.Context, req *server.CallRequest, in sleepArgs) (string, error) {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(time.Duration(in.Milliseconds) * time.Millisecond):
				return "slept", nil
			}
		})
}

func addDiagnosticTools(s *server.Server) {
	server.AddTool(s, &protocol.Tool{Name: "test_missing_capability", Description: "Needs the client's sampling capability"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			res, err := req.CreateMessage("sample", &protocol.CreateMessageParams{
				Messages:  []*protocol.SamplingMessage{{Role: protocol.RoleUser, Content: []protocol.Content{text("Say hello")}}},
				MaxTokens: 20,
			})
			if err != nil {
				return "", err
			}
			return "Sampled: " + contentText(res.Content), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_streaming_elicitation", Description: "Asks for input through MRTR, never with a request on the stream"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			res, err := req.Elicit("user_input", &protocol.ElicitParams{
				Message:         "Please provide input",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`),
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Received: %v", res.Content["value"]), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_logging_tool", Description: "Sends log messages when the request sets a log level"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			_ = req.Log(protocol.LevelInfo, "everything", "Logging tool started")
			_ = req.Log(protocol.LevelDebug, "everything", "Logging tool debug detail")
			return "Logging tool executed", nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_trigger_tool_change", Description: "Announces a tool list change to listeners"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			s.NotifyToolsChanged()
			return "Tool list change triggered", nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_trigger_prompt_change", Description: "Announces a prompt list change to listeners"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			s.NotifyPromptsChanged()
			return "Prompt list change triggered", nil
		})
	type updateArgs struct {
		URI string `json:"uri" description:"The resource URI to announce as updated"`
	}
	server.AddTool(s, &protocol.Tool{Name: "test_trigger_resource_update", Description: "Announces an update of a resource to its subscribers"},
		func(ctx context.Context, req *server.CallRequest, in updateArgs) (string, error) {
			s.NotifyResourceUpdated(in.URI)
			return "Resource update triggered for " + in.URI, nil
		})
}

func contentText(cs []protocol.Content) string {
	var parts []string
	for _, c := range cs {
		if t, ok := c.(*protocol.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

var nameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)

func askName(req *server.CallRequest) (string, error) {
	res, err := req.Elicit("user_name", &protocol.ElicitParams{Message: "What is your name?", RequestedSchema: nameSchema})
	if err != nil {
		return "", err
	}
	if res.Action != protocol.ElicitAccept {
		return "", fmt.Errorf("the user chose to %s", res.Action)
	}
	name, _ := res.Content["name"].(string)
	return name, nil
}

func addInputTools(s *server.Server) {
	server.AddTool(s, &protocol.Tool{Name: "test_input_required_result_elicitation", Description: "Asks the user's name by elicitation, then greets"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			// A greeting has no consequence: the scenario that sends its
			// answer before being asked (input-required-result-ignore-
			// extra-params) gets it taken.
			req.AcceptUnasked()
			name, err := askName(req)
			if err != nil {
				return "", err
			}
			return "Hello, " + name + "!", nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_input_required_result_sampling", Description: "Asks the client's model a question"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			res, err := req.CreateMessage("capital_question", &protocol.CreateMessageParams{
				Messages:  []*protocol.SamplingMessage{{Role: protocol.RoleUser, Content: []protocol.Content{text("What is the capital of France?")}}},
				MaxTokens: 100,
			})
			if err != nil {
				return "", err
			}
			return "LLM response: " + contentText(res.Content), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_input_required_result_list_roots", Description: "Asks the client for its roots"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			res, err := req.ListRoots("client_roots")
			if err != nil {
				return "", err
			}
			return "Received roots: " + rootList(res), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_input_required_result_request_state", Description: "Asks for confirmation, carrying sealed request state"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			if req.State() == nil {
				req.SetState([]byte("awaiting-confirmation"))
			}
			res, err := req.Elicit("confirm", &protocol.ElicitParams{Message: "Please confirm", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
			if err != nil {
				return "", err
			}
			if string(req.State()) != "awaiting-confirmation" {
				return "", protocol.InvalidParams("requestState lost its contents")
			}
			return "state-ok: " + map[bool]string{true: "confirmed", false: "not confirmed"}[res.Content["ok"] == true], nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_input_required_result_multiple_inputs", Description: "Asks for elicitation, sampling and roots in one round"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			name, err1 := askName(req)
			greeting, err2 := req.CreateMessage("greeting", &protocol.CreateMessageParams{
				Messages:  []*protocol.SamplingMessage{{Role: protocol.RoleUser, Content: []protocol.Content{text("Generate a greeting")}}},
				MaxTokens: 50,
			})
			roots, err3 := req.ListRoots("client_roots")
			if err := errors.Join(err1, err2, err3); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s, %s (roots: %s)", contentText(greeting.Content), name, rootList(roots)), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_input_required_result_multi_round", Description: "Asks two questions in two rounds"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			first, err := req.Elicit("step1", &protocol.ElicitParams{Message: "Step 1: What is your name?", RequestedSchema: nameSchema})
			if err != nil {
				return "", err
			}
			second, err := req.Elicit("step2", &protocol.ElicitParams{Message: "Step 2: What is your favorite color?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%v's favorite color is %v", first.Content["name"], second.Content["color"]), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_input_required_result_tampered_state", Description: "Asks for confirmation; rejects altered request state"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			res, err := req.Elicit("confirm", &protocol.ElicitParams{Message: "Please confirm the operation", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
			if err != nil {
				return "", err
			}
			return "Operation " + res.Action + "ed", nil
		})
	server.AddTool(s, &protocol.Tool{Name: "test_input_required_result_capabilities", Description: "Asks only for the inputs the client declared it supports"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			caps := req.ClientCapabilities()
			var errs []error
			var got []string
			if caps.Sampling != nil {
				res, err := req.CreateMessage("summary", &protocol.CreateMessageParams{
					Messages:  []*protocol.SamplingMessage{{Role: protocol.RoleUser, Content: []protocol.Content{text("Summarize the request")}}},
					MaxTokens: 100,
				})
				errs = append(errs, err)
				if err == nil {
					got = append(got, "summary: "+contentText(res.Content))
				}
			}
			if caps.Elicitation != nil {
				res, err := req.Elicit("user_name", &protocol.ElicitParams{Message: "What is your name?", RequestedSchema: nameSchema})
				errs = append(errs, err)
				if err == nil {
					got = append(got, fmt.Sprintf("name: %v", res.Content["name"]))
				}
			}
			if caps.Roots != nil {
				res, err := req.ListRoots("client_roots")
				errs = append(errs, err)
				if err == nil {
					got = append(got, "roots: "+rootList(res))
				}
			}
			if err := errors.Join(errs...); err != nil {
				return "", err
			}
			if len(got) == 0 {
				return "The client declared no capability to ask with", nil
			}
			return strings.Join(got, "; "), nil
		})
}

func rootList(r *protocol.ListRootsResult) string {
	var uris []string
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return strings.Join(uris, ", ")
}

// JSONSchema202012 is the input schema of json_schema_2020_12_tool, kept
// byte for byte as the conformance suite expects it.
const JSONSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

func addSchemaTools(s *server.Server) {
	s.AddToolHandler(&protocol.Tool{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features", InputSchema: json.RawMessage(JSONSchema202012)},
		func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
			return server.TextResult("Received: " + string(req.Arguments)), nil
		})
	type regionArgs struct {
		Region string `json:"region" description:"Region, mirrored into the Mcp-Param-Region header"`
	}
	server.AddTool(s, &protocol.Tool{
		Name:        "test_custom_header",
		Description: "Echoes a region that clients mirror into the Mcp-Param-Region header",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"Region, mirrored into the Mcp-Param-Region header","x-mcp-header":"Region"}},"required":["region"]}`),
	}, func(ctx context.Context, req *server.CallRequest, in regionArgs) (string, error) {
		return "Region: " + in.Region, nil
	})
}

func addResources(s *server.Server) {
	s.AddResource(&protocol.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource for testing", MIMEType: "text/plain"},
		server.TextResource("text/plain", "This is the content of the static text resource."))
	png, _ := base64.StdEncoding.DecodeString(pngBase64)
	s.AddResource(&protocol.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (PNG) for testing", MIMEType: "image/png"},
		server.BlobResource("image/png", png))
	s.AddResource(&protocol.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource whose updates test_trigger_resource_update announces", MIMEType: "text/plain"},
		server.TextResource("text/plain", "Watched resource content."))
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template-data", Description: "A resource template with parameter substitution", MIMEType: "application/json"},
		func(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
			id := req.Vars["id"]
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &protocol.ReadResourceResult{Contents: []*protocol.ResourceContents{{URI: req.URI, MIMEType: "application/json", Text: string(body)}}}, nil
		})
	s.AddCompletion(protocol.RefResource, "test://template/{id}/data", server.CompleteFrom("1", "2", "3", "123"))
}

func userText(t string) *protocol.PromptMessage {
	return &protocol.PromptMessage{Role: protocol.RoleUser, Content: text(t)}
}

func addPrompts(s *server.Server) {
	s.AddPrompt(&protocol.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
		func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{userText("This is a simple prompt for testing.")}}, nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with required arguments", Arguments: []*protocol.PromptArgument{
		{Name: "arg1", Description: "First test argument", Required: true},
		{Name: "arg2", Description: "Second test argument", Required: true},
	}}, func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
		return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{
			userText(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])),
		}}, nil
	})
	s.AddCompletion(protocol.RefPrompt, "test_prompt_with_arguments", server.CompleteFrom("test", "testValue1", "testValue2", "testing"))
	s.AddPrompt(&protocol.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that includes an embedded resource", Arguments: []*protocol.PromptArgument{
		{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
	}}, func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
		return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{
			{Role: protocol.RoleUser, Content: &protocol.EmbeddedResource{Resource: &protocol.ResourceContents{URI: req.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
			userText("Please process the embedded resource above."),
		}}, nil
	})
	s.AddPrompt(&protocol.Prompt{Name: "test_prompt_with_image", Description: "A prompt that includes image content"},
		func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{
				{Role: protocol.RoleUser, Content: &protocol.ImageContent{Data: pngBase64, MIMEType: "image/png"}},
				userText("Please analyze the image above."),
			}}, nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for context by elicitation"},
		func(ctx context.Context, req *server.PromptRequest) (*protocol.GetPromptResult, error) {
			res, err := req.Elicit("user_context", &protocol.ElicitParams{Message: "What context should the prompt use?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)})
			if err != nil {
				return nil, err
			}
			return &protocol.GetPromptResult{Messages: []*protocol.PromptMessage{userText(fmt.Sprintf("Prompt with context: %v", res.Content["context"]))}}, nil
		})
}
