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
//     Connect Discovery, in the order the specification gives) and checks
//     the issuer; servers without protected resource metadata are handled
//     as the 2025-03-26 revision says (the server's origin is the
//     authorization server, with default endpoints when it publishes no
//     metadata);
//   - it picks a client identity: pre-registered credentials, then a Client
//     ID Metadata Document, then dynamic client registration (RFC 7591),
//     whose result is kept per issuer;
//   - it runs the authorization code flow with PKCE (S256) and the resource
//     indicator (RFC 8707), validates state and iss (RFC 9207) before the
//     code is redeemed, and authenticates at the token endpoint as the
//     metadata allows (client_secret_basic, client_secret_post, none);
//   - it refreshes tokens when they expire, and asks for offline_access only
//     when the authorization server advertises it.
//
// The interactive step (sending the user agent to the authorization URL and
// getting the redirect back) is behind the Authorizer interface;
// HeadlessAuthorizer is an implementation for tests and for authorization
// servers that redirect at once. Tokens and client registrations are kept in
// a TokenStore, keyed by issuer (and resource for tokens); MemoryStore is
// the default.
//
// Secrets (client secrets, access and refresh tokens, authorization codes,
// PKCE verifiers) never appear in the errors this package returns nor in
// what it logs; Token and ClientInfo print redacted.
package auth
