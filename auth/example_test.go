package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/oauthtest"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// A client that logs in on its own: the server answers 401, the transport
// discovers the authorization server from the protected resource
// metadata, registers, runs the authorization code flow with PKCE (here
// approved at once, as HeadlessAuthorizer allows) and retries with the
// token. A program uses the default LoopbackAuthorizer, which opens the
// user's browser.
func ExampleNewTransport() {
	as := oauthtest.NewServer(oauthtest.Config{}) // an authorization server on loopback
	defer as.Close()
	s := server.New(protocol.Implementation{Name: "private", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "whoami"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "authorized", nil
	})
	mux := http.NewServeMux()
	mux.Handle("/", as.Protect(streamable.NewHandler(s, nil), "/mcp"))
	rs := httptest.NewServer(mux)
	defer rs.Close()

	tr := auth.NewTransport(&auth.Options{ClientName: "example", Authorizer: &auth.HeadlessAuthorizer{}})
	ctx := context.Background()
	sess, err := client.New(protocol.Implementation{Name: "example", Version: "1.0.0"}, nil).
		ConnectURL(ctx, rs.URL+"/mcp", &streamable.ClientOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, "whoami", nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*protocol.TextContent).Text, "after", as.Counts().CodeExchanges, "code exchange")
	// Output:
	// authorized after 1 code exchange
}
