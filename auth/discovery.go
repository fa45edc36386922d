package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Errors the flow returns, wrapped with context; test them with errors.Is.
var (
	// ErrResourceMismatch: the protected resource metadata names another
	// resource than the server being accessed.
	ErrResourceMismatch = errors.New("auth: protected resource metadata is for another resource")
	// ErrIssuerMismatch: authorization server metadata, or an authorization
	// response, from another issuer than the one selected.
	ErrIssuerMismatch = errors.New("auth: issuer mismatch")
	// ErrNoMetadata: no protected resource or authorization server metadata
	// could be used.
	ErrNoMetadata = errors.New("auth: no usable metadata")
	// ErrNoPKCE: the authorization server does not advertise PKCE with S256.
	ErrNoPKCE = errors.New("auth: authorization server does not support PKCE S256")
	// ErrInsecureEndpoint: an authorization server, or one of its
	// endpoints, is not served over HTTPS (plain HTTP is taken on loopback
	// addresses only, for development).
	ErrInsecureEndpoint = errors.New("auth: authorization server endpoint is not HTTPS")
	// ErrNoRegistration: no way to obtain a client identity at the
	// authorization server.
	ErrNoRegistration = errors.New("auth: no client registration method available")
	// ErrAuthorizationResponse: the authorization response was refused.
	ErrAuthorizationResponse = errors.New("auth: invalid authorization response")
	// ErrTokenEndpoint: the token endpoint refused a request.
	ErrTokenEndpoint = errors.New("auth: token request failed")
)

// resourceMetadata is an OAuth 2.0 Protected Resource Metadata document
// (RFC 9728), the fields used here.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is an authorization server metadata document (RFC 8414 or
// OpenID Connect Discovery), the fields used here.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`

	// defaults: no metadata was found; the endpoints are the 2025-03-26
	// defaults.
	defaults bool
}

// discovery is what discovery found for one MCP server.
type discovery struct {
	resource string            // the resource indicator to send
	prm      *resourceMetadata // nil when the server publishes none
	as       *serverMetadata
	issuer   string // the recorded issuer
}

const maxMetadata = 1 << 20

// readJSON decodes the JSON body r carries into v with mcpkit's one policy
// for peer-sent JSON (jsonrpc.Unmarshal: exact member names, no repeated
// member, valid UTF-8), refusing a body over maxMetadata bytes: metadata,
// registrations and token responses come from servers the client was sent
// to, which it does not trust.
func readJSON(r io.Reader, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, maxMetadata+1))
	if err != nil {
		return err
	}
	if len(b) > maxMetadata {
		return fmt.Errorf("the response exceeds %d bytes", maxMetadata)
	}
	return jsonrpc.Unmarshal(b, v)
}

// getJSON fetches url into v. A non-2xx answer is found == false without
// an error; transport failures and undecodable documents are errors.
func (t *Transport) getJSON(ctx context.Context, u, version string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetadata))
		return false, nil
	}
	if err := readJSON(resp.Body, v); err != nil {
		return false, fmt.Errorf("auth: decoding %s: %w", u, err)
	}
	return true, nil
}

// origin returns scheme://host of u.
func origin(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// canonicalResource is the canonical URI of an MCP server (RFC 8707):
// lower-case scheme and host, no fragment, no trailing slash on an empty
// path.
func canonicalResource(u *url.URL) string {
	c := &url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	if c.Path == "/" {
		c.Path, c.RawPath = "", ""
	}
	return c.String()
}

// prmURLs lists where to look for the protected resource metadata of the
// server at u: the challenge's URL when given, else the path-based
// well-known URI, then the root one.
func prmURLs(u *url.URL, fromChallenge string) []string {
	if fromChallenge != "" {
		return []string{fromChallenge}
	}
	root := origin(u) + "/.well-known/oauth-protected-resource"
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{root}
	}
	return []string{root + p, root}
}

// asMetadataURLs lists the well-known URLs of an issuer's metadata in the
// order the specification gives.
func asMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("%w: authorization server %q is not an absolute URL", ErrNoMetadata, issuer)
	}
	o := origin(u)
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{o + "/.well-known/oauth-authorization-server", o + "/.well-known/openid-configuration"}, nil
	}
	return []string{
		o + "/.well-known/oauth-authorization-server" + p,
		o + "/.well-known/openid-configuration" + p,
		o + p + "/.well-known/openid-configuration",
	}, nil
}

// hostPort returns the lower-case host and the port, the scheme's default
// when absent.
func hostPort(u *url.URL) (string, string) {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return host, port
}

// resourceMatches reports whether the resource identifier of protected
// resource metadata designates the server at u: same scheme, host and port,
// and a path that is the server's or one of its parents.
func resourceMatches(resource string, u *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" || !strings.EqualFold(r.Scheme, u.Scheme) {
		return false
	}
	rh, rp := hostPort(r)
	uh, up := hostPort(u)
	if rh != uh || rp != up {
		return false
	}
	rpath := strings.TrimSuffix(r.EscapedPath(), "/")
	upath := strings.TrimSuffix(u.EscapedPath(), "/")
	return rpath == upath || strings.HasPrefix(upath, rpath+"/")
}

// discover finds the protected resource metadata and the authorization
// server for the server at server.
func (t *Transport) discover(ctx context.Context, server *url.URL, fromChallenge, version string) (*discovery, error) {
	d := &discovery{resource: canonicalResource(server)}
	for _, u := range prmURLs(server, fromChallenge) {
		var prm resourceMetadata
		found, err := t.getJSON(ctx, u, version, &prm)
		if err != nil {
			return nil, err
		}
		if found {
			d.prm = &prm
			break
		}
	}
	if d.prm == nil && fromChallenge != "" {
		return nil, fmt.Errorf("%w: protected resource metadata not found at %s", ErrNoMetadata, fromChallenge)
	}
	if d.prm != nil {
		if !resourceMatches(d.prm.Resource, server) {
			return nil, fmt.Errorf("%w: %q is not %s", ErrResourceMismatch, d.prm.Resource, d.resource)
		}
		d.resource = d.prm.Resource
		if len(d.prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("%w: protected resource metadata names no authorization server", ErrNoMetadata)
		}
		// The first authorization server listed that is served over HTTPS
		// and publishes usable metadata; a few at most.
		var lastErr error
		for _, issuer := range d.prm.AuthorizationServers[:min(len(d.prm.AuthorizationServers), maxAuthorizationServers)] {
			if !secureURL(issuer) {
				lastErr = fmt.Errorf("%w: %s", ErrInsecureEndpoint, issuer)
				continue
			}
			as, err := t.serverMetadata(ctx, issuer, version)
			switch {
			case err != nil && ctx.Err() != nil:
				return nil, err
			case err != nil:
				lastErr = err
			case as == nil:
				lastErr = fmt.Errorf("%w: no metadata for authorization server %s", ErrNoMetadata, issuer)
			default:
				d.as, d.issuer = as, as.Issuer
			}
			if d.as != nil {
				break
			}
		}
		if d.as == nil {
			return nil, lastErr
		}
	} else {
		// 2025-03-26: without protected resource metadata, the server's
		// origin is the authorization server, with default endpoints when
		// it publishes no metadata either.
		o := origin(server)
		as, err := t.serverMetadata(ctx, o, version)
		if err != nil {
			return nil, err
		}
		if as == nil {
			as = &serverMetadata{Issuer: o, AuthorizationEndpoint: o + "/authorize", TokenEndpoint: o + "/token", RegistrationEndpoint: o + "/register", defaults: true}
		}
		d.as, d.issuer = as, as.Issuer
	}
	if !d.as.defaults && !slices.Contains(d.as.CodeChallengeMethodsSupported, "S256") {
		return nil, ErrNoPKCE
	}
	if d.as.AuthorizationEndpoint == "" || d.as.TokenEndpoint == "" {
		return nil, fmt.Errorf("%w: authorization server metadata lacks its endpoints", ErrNoMetadata)
	}
	for _, e := range []string{d.issuer, d.as.AuthorizationEndpoint, d.as.TokenEndpoint, d.as.RegistrationEndpoint} {
		if e != "" && !secureURL(e) {
			return nil, fmt.Errorf("%w: %s", ErrInsecureEndpoint, e)
		}
	}
	return d, nil
}

// maxAuthorizationServers bounds the authorization servers of protected
// resource metadata the client tries.
const maxAuthorizationServers = 4

// secureURL reports whether raw is an https URL, or an http one on a
// loopback address: where tokens and codes may travel (2025-11-25,
// Authorization, Communication Security).
func secureURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		return isLoopback(u)
	}
	return false
}

// serverMetadata fetches and validates the metadata of issuer; nil, nil
// when none is published.
func (t *Transport) serverMetadata(ctx context.Context, issuer, version string) (*serverMetadata, error) {
	urls, err := asMetadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	for _, u := range urls {
		var m serverMetadata
		found, err := t.getJSON(ctx, u, version, &m)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		// RFC 8414 Section 3.3: the issuer must be identical to the one
		// the well-known URL was built from; otherwise it is not used.
		if m.Issuer != issuer {
			return nil, fmt.Errorf("%w: metadata at %s is for issuer %q, not %q", ErrIssuerMismatch, u, m.Issuer, issuer)
		}
		return &m, nil
	}
	return nil, nil
}

// isLoopback reports whether u's host is a loopback address or localhost.
func isLoopback(u *url.URL) bool {
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
