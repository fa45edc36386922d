// Package resource is the resource-server side of MCP authorization: it
// protects a Streamable HTTP endpoint with OAuth 2.1 bearer tokens, as the
// authorization part of the MCP specification asks of a server.
//
// Protect wraps the endpoint's handler (all methods: POST, GET, DELETE):
//
//   - it serves the protected resource metadata (RFC 9728) at the
//     well-known URI of the endpoint, "/.well-known/oauth-protected-resource"
//     followed by the endpoint's path; Handler.MetadataHandler serves the
//     same document where the endpoint is mounted under a mux and the
//     well-known path must be routed separately;
//   - it accepts access tokens in the Authorization header only (RFC 6750
//     section 2.1, "Bearer", or "DPoP" for sender-constrained tokens); a
//     token in the query string or a form body is answered 400
//     invalid_request;
//   - it answers a missing token with 401 and a challenge
//     `Bearer resource_metadata="...", scope="..."` and an invalid one with
//     the same challenge plus error="invalid_token"; a token that lacks
//     Options.RequiredScopes is answered 403 error="insufficient_scope"
//     naming the scopes needed;
//   - with Options.AllowedOrigins, the CORS of the protected handler: a
//     listed origin's preflight is answered without a token (preflights
//     carry none), and its page can read the challenges; the metadata,
//     public, is readable by any page (Access-Control-Allow-Origin: *);
//   - on success the inner handler sees the caller: server.WithPrincipal
//     (Principal.ID: the issuer and the sub, or for a token without sub
//     the client_id, each in its own namespace) and server.WithScopes are
//     set on the request context, and PrincipalFrom returns the full
//     Principal. Legacy sessions, HTTP+SSE streams and sealed state are
//     bound to that ID, so neither a client named like a user nor another
//     issuer's user of the same name can use them; a token that names
//     neither sub nor client_id is refused (401 invalid_token).
//
// Tokens are checked by a Verifier:
//
//   - JWTVerifier validates JWT access tokens (RFC 9068) against the
//     issuer's keys, found through the issuer's metadata (RFC 8414, then
//     OpenID Connect Discovery), cached, and fetched again when the set is
//     older than KeySetTTL or a token names an unknown key; algorithms are
//     pinned, iss must match exactly, aud must contain the resource
//     (RFC 8707), exp and nbf are checked with a leeway. One fetch runs at
//     a time, bounded by FetchTimeout, and the next starts no sooner than
//     MinRefreshInterval after it ended; a token signed with a known key
//     never waits for a fetch (a stale set is refreshed in the
//     background), and one naming an unknown key waits at most
//     FetchTimeout;
//   - IntrospectionVerifier asks the authorization server (RFC 7662),
//     authenticating with client_secret_basic; the answer's aud must
//     contain the resource (an answer without aud is refused unless
//     AllowMissingAudience), refusals are kept for NegativeCacheTTL, and
//     calls for tokens not seen active are held to UnknownTokenRate
//     (beyond it, 503: ErrBusy);
//   - both enforce sender-constrained tokens (RFC 9449): a token with a
//     cnf.jkt confirmation must come as "Authorization: DPoP" with a valid
//     DPoP proof for the request, bound to that key and to the token, and
//     not replayed (DPoPChecker: a proof is remembered until it is too old
//     to be accepted; a replay cache that is full, or holds a key's share,
//     refuses new proofs with 503 rather than forget live ones).
//
// Error values returned by the verifiers never contain the token.
//
// The audience check is against Options.Resource / the verifiers'
// Resource, the canonical URL of the MCP endpoint, which the
// configuration gives rather than the request, so that a server behind a
// reverse proxy checks the URL its clients use.
package resource
