// Package interop holds tests of mcpkit's authorization client (package
// auth) against an authorization server that mcpkit did not write: the
// OpenID Provider of github.com/zitadel/oidc, started on loopback inside
// the test with its example login UI. The tests drive the whole flow through
// an mcpkit client and server: discovery, authorization code with PKCE
// behind a login form, refresh, and step-up authorization.
//
// The package has no exported API; everything is in its tests.
package interop
