package everything

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Fixtures of the 2025-11-25 scenarios: server-to-client requests (which
// legacy clients receive as real requests, modern ones as MRTR input
// requests), logging and SSE polling.
func addLegacyTools(s *server.Server) {
	server.AddTool(s, &protocol.Tool{Name: "test_tool_with_logging", Description: "Sends three info log messages while it runs"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := sleep(ctx, 50*time.Millisecond); err != nil {
						return "", err
					}
				}
				_ = req.Log(protocol.LevelInfo, "everything", m)
			}
			return "Tool with logging executed successfully", nil
		})

	type samplingArgs struct {
		Prompt string `json:"prompt" description:"The prompt to send to the LLM"`
	}
	server.AddTool(s, &protocol.Tool{Name: "test_sampling", Description: "Asks the client's model to answer a prompt"},
		func(ctx context.Context, req *server.CallRequest, in samplingArgs) (string, error) {
			res, err := req.CreateMessage("sampling", &protocol.CreateMessageParams{
				Messages:  []*protocol.SamplingMessage{{Role: protocol.RoleUser, Content: []protocol.Content{text(in.Prompt)}}},
				MaxTokens: 100,
			})
			if err != nil {
				return "", err
			}
			return "LLM response: " + contentText(res.Content), nil
		})

	type elicitArgs struct {
		Message string `json:"message" description:"The message to show the user"`
	}
	server.AddTool(s, &protocol.Tool{Name: "test_elicitation", Description: "Asks the user for a username and an email address"},
		func(ctx context.Context, req *server.CallRequest, in elicitArgs) (string, error) {
			res, err := req.Elicit("elicitation", &protocol.ElicitParams{
				Message:         in.Message,
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`),
			})
			if err != nil {
				return "", err
			}
			return elicitSummary("User response: ", res), nil
		})

	server.AddTool(s, &protocol.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Elicits a form whose fields all have default values"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			res, err := req.Elicit("defaults", &protocol.ElicitParams{
				Message: "Please review your details",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{` +
					`"name":{"type":"string","description":"Your name","default":"John Doe"},` +
					`"age":{"type":"integer","description":"Your age","default":30},` +
					`"score":{"type":"number","description":"Your score","default":95.5},` +
					`"status":{"type":"string","description":"Account status","enum":["active","inactive","pending"],"default":"active"},` +
					`"verified":{"type":"boolean","description":"Verified account","default":true}}}`),
			})
			if err != nil {
				return "", err
			}
			return elicitSummary("Elicitation completed: ", res), nil
		})

	server.AddTool(s, &protocol.Tool{Name: "test_elicitation_sep1330_enums", Description: "Elicits a form with every kind of enum field"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			res, err := req.Elicit("enums", &protocol.ElicitParams{
				Message: "Please choose your options",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{` +
					`"untitledSingle":{"type":"string","description":"Pick one","enum":["option1","option2","option3"]},` +
					`"titledSingle":{"type":"string","description":"Pick one","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
					`"legacyEnum":{"type":"string","description":"Pick one","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
					`"untitledMulti":{"type":"array","description":"Pick any","items":{"type":"string","enum":["option1","option2","option3"]}},` +
					`"titledMulti":{"type":"array","description":"Pick any","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`),
			})
			if err != nil {
				return "", err
			}
			return elicitSummary("Elicitation completed: ", res), nil
		})

	server.AddTool(s, &protocol.Tool{Name: "test_reconnection", Description: "Closes its response's connection mid-call; legacy clients resume with Last-Event-ID"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			// Over Streamable HTTP only; elsewhere the stream stays.
			_ = streamable.NewResponseController(ctx).CloseStream()
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
			return "Reconnection test completed", nil
		})
}

func elicitSummary(prefix string, res *protocol.ElicitResult) string {
	content, _ := json.Marshal(res.Content)
	return fmt.Sprintf("%saction=%s, content=%s", prefix, res.Action, content)
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
