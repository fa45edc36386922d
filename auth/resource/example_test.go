package resource_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/auth/resource"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// tokens is a Verifier for the example: two opaque tokens it knows. A
// program uses JWTVerifier or IntrospectionVerifier.
type tokens map[string][]string

func (t tokens) Verify(ctx context.Context, token string, req *http.Request) (*resource.Principal, error) {
	scopes, ok := t[token]
	if !ok {
		return nil, resource.ErrInvalidToken
	}
	return &resource.Principal{Subject: "alice", Issuer: "https://auth.example.com", Scopes: scopes}, nil
}

// An endpoint protected by OAuth access tokens: without a token the
// client is challenged (401, with the metadata that names the
// authorization server); a tool registered with RequireScopes is hidden
// from, and refused to, tokens without its scope.
func ExampleProtect() {
	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "forecast"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "Sunny for " + resource.PrincipalFrom(ctx).Subject, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "set_alert"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "set", nil
	}, server.RequireScopes("weather:write"))

	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	h := resource.Protect(streamable.NewHandler(s, nil), &resource.Options{
		Resource:             ts.URL + "/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
		Verifier:             tokens{"read-token": {"weather:read"}, "write-token": {"weather:read", "weather:write"}},
		RequiredScopes:       []string{"weather:read"},
	})
	mux.Handle("/mcp", h)
	mux.Handle(h.MetadataPath(), h.MetadataHandler())

	resp, err := http.Post(ts.URL+"/mcp", "application/json", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate") != "")

	ctx := context.Background()
	for _, token := range []string{"read-token", "write-token"} {
		sess, err := client.New(protocol.Implementation{Name: "example", Version: "1.0.0"}, nil).ConnectURL(ctx, ts.URL+"/mcp",
			&streamable.ClientOptions{Header: http.Header{"Authorization": {"Bearer " + token}}})
		if err != nil {
			fmt.Println(err)
			return
		}
		list, err := sess.ListTools(ctx, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(token, ":")
		for _, t := range list.Tools {
			fmt.Print(" ", t.Name)
		}
		fmt.Println()
		sess.Close()
	}
	// Output:
	// 401 true
	// read-token: forecast
	// write-token: forecast set_alert
}
