// Package auth authorizes the HTTP requests of an MCP client, following the
// authorization part of the MCP specification (OAuth 2.1 for HTTP
// transports).
//
// A Transport is an http.RoundTripper that wraps the one the client already
// uses: give it to the streamable HTTP client through
// streamable.ClientOptions.HTTPClient and every request of both protocol
// eras carries the access token as "Authorization: Bearer". When the server
// answers 401, or 403 with error="insufficient_scope", the Transport runs
// the flow and retries the request, a bounded number of times:
//
//   - it reads the Bearer challenge of WWW-Authenticate (resource_metadata,
//     scope, error);
//   - it fetches the protected resource metadata (RFC 9728) from the
//     challenge's URL, or else from the well-known URIs (path-based first,
//     then the root), and checks that its resource is the server;
//   - it fetches the authorization server metadata (RFC 8414, then OpenID
//     Connect Discovery, in the order the specification gives) of the first
//     listed authorization server that has it (up to four tried) and checks
//     the issuer; the issuer and its endpoints must be HTTPS (plain HTTP
//     on loopback only); servers without protected resource metadata are handled
//     as the 2025-03-26 revision says (the server's origin is the
//     authorization server, with default endpoints when it publishes no
//     metadata);
//   - it picks a client identity: pre-registered credentials, then a Client
//     ID Metadata Document, then dynamic client registration (RFC 7591),
//     whose result is kept per issuer with the exact redirect URI it
//     registered (a loopback one with its port, reused by later
//     authorizations, since servers may compare redirect URIs exactly);
//   - it runs the authorization code flow with PKCE (S256) and the resource
//     indicator (RFC 8707), validates state and iss (RFC 9207) before the
//     code is redeemed, and authenticates at the token endpoint as the
//     metadata allows (client_secret_basic, client_secret_post, none);
//   - it refreshes tokens when they expire, and asks for offline_access only
//     when the authorization server advertises it.
//
// Non-interactive flows are chosen with Options.Grant: client credentials
// (with a client secret, or private_key_jwt when Options.ClientKey is set)
// and the JWT bearer grant (RFC 7523) with an assertion from
// Options.Assertion: a workload identity token (StaticAssertion, or an
// AssertionFunc that reads a rotating one) or an enterprise-managed ID-JAG
// (IDJAGAssertion, token exchange at the identity provider). Options.DPoP
// binds tokens to a key (RFC 9449): a proof on every token and resource
// request, server nonces honoured, "Authorization: DPoP".
//
// The interactive step (sending the user agent to the authorization URL and
// getting the redirect back) is behind the Authorizer interface.
// LoopbackAuthorizer is the one for people: it prints the URL, opens
// $BROWSER (or the platform's opener when a display is there) and receives
// the redirect on a loopback port. HeadlessAuthorizer is for tests and for
// authorization servers that redirect at once. Tokens and client
// registrations are kept in a TokenStore, keyed by issuer (and resource for
// tokens): MemoryStore is the default; FileStore keeps them in a file only
// its owner may read (os.UserConfigDir()/mcpkit/auth.json for the mcpkit
// command).
//
// The access token and its DPoP proof go only to the origin (scheme, host
// and port) of the resource they were obtained for. Because the Transport
// adds them inside RoundTrip, net/http's rule that drops Authorization on
// a redirect to another host cannot protect them; the Transport applies
// its own: a request an http.Client makes to follow a redirect to another
// origin than the one it was sent to carries no credentials, and its 401
// starts no authorization there. Registration and token requests (client
// secrets, codes, PKCE verifiers, refresh tokens) and the ID-JAG token
// exchange never follow redirects; metadata requests follow them only to
// URLs that pass the HTTPS rule above. A caller's Options.HTTPClient is
// used through copies with these policies and is not changed.
//
// Secrets (client secrets, private keys, assertions, DPoP proofs, access
// and refresh tokens, authorization codes, PKCE verifiers) never appear in the errors this package returns nor in
// what it logs; Token and ClientInfo print redacted.
package auth
