package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/auth/resource"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/server"
)

// serveSecurity is what the security flags of `mcpkit serve sql` ask for:
// OAuth protection of the endpoint (resource server) and TLS.
type serveSecurity struct {
	// replay, set with --store, is the DPoP replay cache replicas share.
	replay resource.ReplayCache

	issuer, introspectURL, clientID, clientSecret string
	introspectCache                               time.Duration
	introspectNoAud                               bool
	scopes                                        listFlag
	writeScope                                    string
	publicURL                                     string
	insecureNoAuth                                bool
	tlsCert, tlsKey                               string
}

const defaultWriteScope = "mcp:write"

// introspectSecretEnv may hold the introspection client secret instead of
// --auth-client-secret, which other users can see in the process list.
const introspectSecretEnv = "MCPKIT_AUTH_CLIENT_SECRET"

func (s *serveSecurity) register(fs *flag.FlagSet) {
	fs.StringVar(&s.issuer, "auth-issuer", "", "require OAuth access tokens from the authorization server `URL` (its issuer identifier; metadata and keys are discovered from it)")
	fs.StringVar(&s.introspectURL, "auth-introspection-url", "", "check tokens at the introspection endpoint `URL` (RFC 7662) instead of as JWTs against the issuer's keys")
	fs.StringVar(&s.clientID, "auth-client-id", "", "client `ID` of this server at the introspection endpoint")
	fs.StringVar(&s.clientSecret, "auth-client-secret", "", "client `SECRET` at the introspection endpoint (or set "+introspectSecretEnv+")")
	fs.DurationVar(&s.introspectCache, "auth-introspection-cache", 0, "keep an active token's introspection answer for `DURATION` (never past its expiry; a token revoked meanwhile is taken until then); 0 asks on every request")
	fs.BoolVar(&s.introspectNoAud, "auth-introspection-allow-no-audience", false, "accept an active introspection answer without aud; only for an authorization server that never sends it and issues tokens for this server alone: such an answer cannot tell a token for this server from one for another API")
	fs.Var(&s.scopes, "auth-scope", "require the scope `S` of every request (repeatable)")
	fs.StringVar(&s.writeScope, "auth-write-scope", defaultWriteScope, "with --auth-issuer and --allow-writes, the scope `S` the execute tool also needs")
	fs.StringVar(&s.publicURL, "public-url", "", "the endpoint's canonical `URL` as clients reach it, e.g. https://db.example.com/mcp behind a TLS-terminating proxy (the tokens' audience)")
	fs.BoolVar(&s.insecureNoAuth, "insecure-no-auth", false, "listen on a non-loopback address without --auth-issuer: anyone who reaches it can read the database")
	fs.StringVar(&s.tlsCert, "tls-cert", "", "serve HTTPS (HTTP/2 on) with the certificate chain in `FILE` (PEM)")
	fs.StringVar(&s.tlsKey, "tls-key", "", "the private key of --tls-cert, in `FILE` (PEM)")
}

func (s *serveSecurity) authOn() bool { return s.issuer != "" }

// check validates the flags against each other and the listen address,
// before anything is opened or listened on; the error is a usage error.
func (s *serveSecurity) check(addr string, useStdio bool, set map[string]bool) error {
	if s.clientSecret == "" {
		s.clientSecret = os.Getenv(introspectSecretEnv)
	}
	if useStdio {
		for _, name := range []string{"auth-issuer", "auth-introspection-url", "auth-introspection-cache", "auth-introspection-allow-no-audience", "auth-client-id", "auth-client-secret", "auth-scope", "auth-write-scope", "public-url", "insecure-no-auth", "tls-cert", "tls-key"} {
			if set[name] {
				return fmt.Errorf("--%s is for HTTP; --stdio serves the process that started it", name)
			}
		}
		return nil
	}
	if !s.authOn() {
		for _, name := range []string{"auth-introspection-url", "auth-introspection-cache", "auth-introspection-allow-no-audience", "auth-client-id", "auth-client-secret", "auth-scope", "auth-write-scope"} {
			if set[name] {
				return fmt.Errorf("--%s needs --auth-issuer", name)
			}
		}
	} else {
		if err := checkHTTPURL("--auth-issuer", s.issuer); err != nil {
			return err
		}
		if s.introspectURL != "" {
			if err := checkHTTPURL("--auth-introspection-url", s.introspectURL); err != nil {
				return err
			}
			if s.clientID == "" || s.clientSecret == "" {
				return fmt.Errorf("--auth-introspection-url needs --auth-client-id and --auth-client-secret (or %s)", introspectSecretEnv)
			}
		} else if set["auth-client-id"] || set["auth-client-secret"] || set["auth-introspection-cache"] || set["auth-introspection-allow-no-audience"] {
			return errors.New("--auth-client-id, --auth-client-secret, --auth-introspection-cache and --auth-introspection-allow-no-audience are for --auth-introspection-url")
		}
		if s.introspectCache < 0 {
			return errors.New("--auth-introspection-cache must not be negative")
		}
		for _, sc := range append(append([]string{}, s.scopes...), s.writeScope) {
			if !server.ValidScope(sc) {
				return fmt.Errorf("%q is not an OAuth scope (printable ASCII without spaces, quotes or backslashes)", sc)
			}
		}
	}
	if (s.tlsCert == "") != (s.tlsKey == "") {
		return errors.New("give both --tls-cert and --tls-key")
	}
	if s.publicURL != "" {
		if err := checkHTTPURL("--public-url", s.publicURL); err != nil {
			return err
		}
	}
	if s.insecureNoAuth && s.authOn() {
		return errors.New("give --auth-issuer or --insecure-no-auth, not both")
	}
	loopback := isLoopbackAddr(addr)
	if !loopback && !s.authOn() && !s.insecureNoAuth {
		return fmt.Errorf("refusing to serve %s without authorization: it is not a loopback address, and anyone who reaches it could read the database; protect it with --auth-issuer, or pass --insecure-no-auth if something in front of it (a VPN, a proxy) does", addr)
	}
	if !loopback && s.authOn() {
		if s.publicURL == "" {
			return errors.New("--auth-issuer on a non-loopback address needs --public-url, the URL clients use (the audience of their tokens)")
		}
		if s.tlsCert == "" && !strings.HasPrefix(strings.ToLower(s.publicURL), "https://") {
			return errors.New("access tokens would cross the network in clear text: serve HTTPS with --tls-cert and --tls-key, or behind a TLS-terminating proxy with an https --public-url")
		}
	}
	return nil
}

func checkHTTPURL(flagName, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%s %q is not an absolute http(s) URL", flagName, raw)
	}
	return nil
}

// isLoopbackAddr reports whether the listen address HOST:PORT is on a
// loopback interface only. An empty host (all interfaces), an unspecified
// or other address, and names other than localhost are not.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopbackHost(host)
}

// isLoopbackHost reports whether host (a name or an address, brackets
// allowed) is localhost or a loopback address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// tlsConfig loads the certificate, or returns nil without TLS.
func (s *serveSecurity) tlsConfig() (*tls.Config, error) {
	if s.tlsCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(s.tlsCert, s.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("loading --tls-cert/--tls-key: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// resourceURL is the canonical URL of the endpoint: --public-url, or the
// listening address.
func (s *serveSecurity) resourceURL(ln net.Listener) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	scheme := "http"
	if s.tlsCert != "" {
		scheme = "https"
	}
	return scheme + "://" + ln.Addr().String() + "/mcp"
}

// maxIssuerMetadata bounds the authorization server metadata read.
const maxIssuerMetadata = 1 << 20

// discoverIssuer fetches the issuer's metadata (RFC 8414, then OpenID
// Connect Discovery) to fail at start rather than at the first request
// when the issuer is wrong or unreachable.
func discoverIssuer(ctx context.Context, issuer string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var last error
	for _, u := range resource.MetadataURLs(issuer) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err
			continue
		}
		// The metadata is peer input, read as all of it is
		// (jsonrpc.Unmarshal): a second "issuer", or an "Issuer", does not
		// stand in for the one checked here.
		var md struct {
			Issuer string `json:"issuer"`
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxIssuerMetadata+1))
		resp.Body.Close()
		if err == nil && len(body) > maxIssuerMetadata {
			err = fmt.Errorf("the metadata exceeds %d bytes", maxIssuerMetadata)
		}
		if err == nil {
			err = jsonrpc.Unmarshal(body, &md)
		}
		switch {
		case resp.StatusCode != http.StatusOK:
			last = fmt.Errorf("GET %s: %s", u, resp.Status)
		case err != nil:
			last = fmt.Errorf("GET %s: %v", u, err)
		case md.Issuer != issuer:
			return fmt.Errorf("the metadata at %s names the issuer %q, not %q", u, md.Issuer, issuer)
		default:
			return nil
		}
	}
	return fmt.Errorf("discovering the authorization server %s: %v", issuer, last)
}

// protect wraps each endpoint handler (by local path) as the flags say, a
// protected resource of its own, and mounts it and its metadata on mux.
// The resource of /mcp is resourceURL, another endpoint's is endpointURL's;
// origins are the endpoints' AllowedOrigins.
func (s *serveSecurity) protect(mux *http.ServeMux, endpoints map[string]http.Handler, resourceURL string, writes bool, origins []string, logger *slog.Logger) error {
	supported := append([]string{}, s.scopes...)
	if writes && !contains(supported, s.writeScope) {
		supported = append(supported, s.writeScope)
	}
	mounted := map[string]bool{}
	mount := func(path string, h http.Handler) {
		if !mounted[path] {
			mounted[path] = true
			mux.Handle(path, h)
		}
	}
	for path, endpoint := range endpoints {
		res, err := endpointURL(resourceURL, path)
		if err != nil {
			return err
		}
		var v resource.Verifier
		var dpop *resource.DPoPChecker
		if s.replay != nil {
			dpop = &resource.DPoPChecker{Replay: s.replay}
		}
		if s.introspectURL != "" {
			v = &resource.IntrospectionVerifier{Endpoint: s.introspectURL, ClientID: s.clientID, ClientSecret: s.clientSecret, Resource: res, Issuer: s.issuer, CacheTTL: s.introspectCache, AllowMissingAudience: s.introspectNoAud, DPoP: dpop}
		} else {
			v = &resource.JWTVerifier{Issuer: s.issuer, Resource: res, DPoP: dpop}
		}
		h, err := resource.New(endpoint, &resource.Options{
			Resource: res, AuthorizationServers: []string{s.issuer}, Verifier: v,
			RequiredScopes: s.scopes, ScopesSupported: supported, ResourceName: "mcpkit database server",
			AllowedOrigins: origins, Logger: logger,
		})
		if err != nil {
			return err
		}
		mount(path, h)
		mount(h.MetadataPath(), h.MetadataHandler())
		// Behind a proxy that maps --public-url's path onto /mcp, the
		// metadata may also be asked for at the local endpoint's path.
		mount("/.well-known/oauth-protected-resource"+path, h.MetadataHandler())
	}
	return nil
}

// endpointURL is the canonical URL of the endpoint at the local path: the
// resource URL for /mcp; for another (the HTTP+SSE endpoint), its path
// resolved against the resource URL's directory, where a proxy in front
// is taken to map it as it maps /mcp.
func endpointURL(resourceURL, path string) (string, error) {
	if path == "/mcp" {
		return resourceURL, nil
	}
	u, err := url.Parse(resourceURL)
	if err != nil {
		return "", err
	}
	return u.ResolveReference(&url.URL{Path: strings.TrimPrefix(path, "/")}).String(), nil
}
