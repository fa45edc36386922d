package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

var info = protocol.Implementation{Name: "mcpkit-everything-client", Version: "0.1.0"}

// newClient returns a client with every capability, in the era the run's
// protocol version belongs to.
func newClient(version string, logger *slog.Logger) *client.Client {
	o := &client.Options{
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: client.FormDefaults(p.RequestedSchema)}, nil
		},
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{
				SamplingMessage: protocol.SamplingMessage{Role: protocol.RoleAssistant, Content: []protocol.Content{&protocol.TextContent{Text: "A sampled answer"}}},
				Model:           "everything-client-model", StopReason: "endTurn",
			}, nil
		},
		Roots: func(ctx context.Context) (*protocol.ListRootsResult, error) {
			return &protocol.ListRootsResult{Roots: []*protocol.Root{{URI: "file:///tmp", Name: "tmp"}}}, nil
		},
		ProtocolVersion: version,
		Logger:          logger,
	}
	if version != "" {
		o.Era = client.EraLegacy
		if protocol.IsModern(version) {
			o.Era = client.EraModern
		}
	}
	return client.New(info, o)
}

func run(ctx context.Context, scenario, version, url string, logger *slog.Logger) error {
	var copts *streamable.ClientOptions
	if strings.HasPrefix(scenario, "auth/") {
		t, err := authTransport(scenario, logger)
		if err != nil {
			return err
		}
		copts = &streamable.ClientOptions{HTTPClient: &http.Client{Transport: t}}
	}
	conn := streamable.NewClient(url, copts)
	c := newClient(version, logger)
	s, err := c.Connect(ctx, conn, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer s.Close()
	switch scenario {
	case "initialize", "json-schema-ref-no-deref":
		_, err = s.ListTools(ctx, nil)
	case "tools_call":
		if _, err = s.ListTools(ctx, nil); err == nil {
			_, err = s.CallTool(ctx, "add_numbers", map[string]any{"a": 2, "b": 3}, nil)
		}
	case "elicitation-sep1034-client-defaults":
		if _, err = s.ListTools(ctx, nil); err == nil {
			_, err = s.CallTool(ctx, "test_client_elicitation_defaults", map[string]any{}, nil)
		}
	case "sse-retry":
		if _, err = s.ListTools(ctx, nil); err == nil {
			_, err = s.CallTool(ctx, "test_reconnection", map[string]any{}, nil)
		}
	case "request-metadata":
		_, err = s.ListTools(ctx, nil)
	case "sep-2322-client-request-state":
		err = requestState(ctx, s)
	case "http-standard-headers":
		err = standardHeaders(ctx, s, conn, version)
	case "http-custom-headers":
		err = customHeaders(ctx, s)
	case "http-invalid-tool-headers":
		err = invalidToolHeaders(ctx, s)
	case "json-schema-2020-12-preservation":
		err = schemaPreservation(ctx, s)
	default:
		_, err = s.ListTools(ctx, nil)
		if err == nil && strings.HasPrefix(scenario, "auth/") {
			// A second authorized request: step-up and migration
			// scenarios judge what happens after the first one.
			_, err = s.CallTool(ctx, "test-tool", map[string]any{}, nil)
		}
	}
	return err
}

// cimdURL is the Client ID Metadata Document URL the auth scenarios accept.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// authTransport returns the authorizing transport of an auth scenario:
// headless, with the pre-registered credentials the scenario's context
// gives, if any.
func authTransport(scenario string, logger *slog.Logger) (*auth.Transport, error) {
	o := &auth.Options{
		ClientName:  "mcpkit-everything-client",
		RedirectURL: "http://localhost:3000/callback",
		Authorizer:  &auth.HeadlessAuthorizer{},
		Logger:      logger,
	}
	if scenario == "auth/basic-cimd" {
		// The metadata document URL does not resolve; the scenario's
		// authorization server takes it as it is. Other scenarios register
		// dynamically, which they judge.
		o.ClientMetadataURL = cimdURL
	}
	var c struct {
		ClientID         string `json:"client_id"`
		ClientSecret     string `json:"client_secret"`
		PrivateKeyPEM    string `json:"private_key_pem"`
		ValidJWT         string `json:"valid_jwt"`
		IdPClientID      string `json:"idp_client_id"`
		IdPIDToken       string `json:"idp_id_token"`
		IdPTokenEndpoint string `json:"idp_token_endpoint"`
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return nil, errors.New("MCP_CONFORMANCE_CONTEXT is not valid JSON")
		}
		o.ClientID, o.ClientSecret = c.ClientID, c.ClientSecret
	}
	switch scenario {
	case "auth/client-credentials-basic", "auth/client-credentials-jwt":
		o.Grant = auth.GrantClientCredentials
		if c.PrivateKeyPEM != "" {
			key, err := auth.ParsePrivateKeyPEM([]byte(c.PrivateKeyPEM))
			if err != nil {
				return nil, err
			}
			o.ClientKey = key
		}
	case "auth/wif-jwt-bearer":
		// The workload identity token the platform would provide.
		o.Grant, o.Assertion = auth.GrantJWTBearer, auth.StaticAssertion(c.ValidJWT)
	case "auth/enterprise-managed-authorization":
		// The user signed in at the enterprise IdP, which gave the ID
		// token; the client exchanges it there for an ID-JAG.
		o.Grant = auth.GrantJWTBearer
		o.Assertion = auth.IDJAGAssertion(auth.IDJAGConfig{
			TokenEndpoint: c.IdPTokenEndpoint,
			ClientID:      c.IdPClientID,
			IDToken:       func(context.Context) (string, error) { return c.IdPIDToken, nil },
		})
	case "auth/dpop", "auth/dpop-nonce":
		o.DPoP = true
	}
	return auth.NewTransport(o), nil
}

func requestState(ctx context.Context, s *client.Session) error {
	if _, err := s.ListTools(ctx, nil); err != nil {
		return err
	}
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
		if _, err := s.CallTool(ctx, name, map[string]any{}, nil); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// standardHeaders sends every method the header scenario judges, the
// handshake ones included, each with Mcp-Method (and Mcp-Name).
func standardHeaders(ctx context.Context, s *client.Session, conn transport.ClientConn, version string) error {
	init, _ := json.Marshal(map[string]any{"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": info})
	if _, err := conn.Call(ctx, &transport.Call{Message: &jsonrpc.Message{ID: jsonrpc.StringID("init-1"), Method: protocol.MethodInitialize, Params: init}, ProtocolVersion: version, Modern: true}, nil); err != nil {
		return err
	}
	if err := conn.Send(ctx, jsonrpc.AppendNotification(nil, protocol.MethodNotificationInitialized, nil), version); err != nil {
		return err
	}
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	if len(tools.Tools) > 0 {
		if _, err := s.CallTool(ctx, tools.Tools[0].Name, map[string]any{}, nil); err != nil {
			return err
		}
	}
	res, err := s.ListResources(ctx, nil)
	if err != nil {
		return err
	}
	if len(res.Resources) > 0 {
		if _, err := s.ReadResource(ctx, res.Resources[0].URI, nil); err != nil {
			return err
		}
	}
	prompts, err := s.ListPrompts(ctx, nil)
	if err != nil {
		return err
	}
	if len(prompts.Prompts) > 0 {
		if _, err := s.GetPrompt(ctx, prompts.Prompts[0].Name, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// customHeaders makes the tool calls the scenario's context lists.
func customHeaders(ctx context.Context, s *client.Session) error {
	var sc struct {
		ToolCalls []struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"toolCalls"`
	}
	raw := os.Getenv("MCP_CONFORMANCE_CONTEXT")
	if raw == "" {
		return errors.New("MCP_CONFORMANCE_CONTEXT is not set")
	}
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	if _, err := s.ListTools(ctx, nil); err != nil {
		return err
	}
	for _, tc := range sc.ToolCalls {
		if _, err := s.CallTool(ctx, tc.Name, tc.Arguments, nil); err != nil {
			return fmt.Errorf("%s: %w", tc.Name, err)
		}
	}
	return nil
}

// invalidToolHeaders calls every tool the client kept: invalid x-mcp-header
// definitions are left out by ListTools.
func invalidToolHeaders(ctx context.Context, s *client.Session) error {
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	for _, t := range tools.Tools {
		if _, err := s.CallTool(ctx, t.Name, map[string]any{"region": "us-west1"}, nil); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}

// schemaPreservation echoes a 2020-12 input schema back as received.
func schemaPreservation(ctx context.Context, s *client.Session) error {
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	for _, t := range tools.Tools {
		if t.Name == "json_schema_2020_12_tool" {
			_, err := s.CallTool(ctx, "json_schema_echo", map[string]any{"schema": t.InputSchema}, nil)
			return err
		}
	}
	return errors.New("json_schema_2020_12_tool not listed")
}
