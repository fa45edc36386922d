package auth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Where credentials may go when a server redirects.
//
// The access token (and its DPoP proof) goes only to the origin of the
// resource it was obtained for. The Transport adds it inside RoundTrip, so
// net/http's rule that drops Authorization on a redirect to another host
// never applies to it; the rule is enforced here instead, by origin
// (scheme, host and port), for the requests an http.Client makes to follow
// redirects: a redirected request to another origin than the one the
// client was sent to carries no credentials and starts no authorization.
//
// Requests to the authorization server follow redirects only where the
// same HTTPS rule as for its metadata holds (metadata), or not at all
// (registration and token requests, which carry client secrets, codes,
// verifiers and refresh tokens).

// maxMetadataRedirects bounds the redirects a metadata request follows.
const maxMetadataRedirects = 5

// noRedirects returns a copy of c that returns redirects as responses
// instead of following them.
func noRedirects(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}

// metadataClient returns a copy of c that follows a redirect only to a
// URL where tokens may travel (secureURL), at most maxMetadataRedirects
// times, and then only when c's own CheckRedirect agrees.
func metadataClient(c *http.Client) *http.Client {
	cc := *c
	own := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxMetadataRedirects {
			return fmt.Errorf("%w: more than %d redirects", ErrNoMetadata, maxMetadataRedirects)
		}
		if !secureURL(req.URL.String()) {
			return fmt.Errorf("%w: redirected to %s", ErrInsecureEndpoint, redactedURL(req.URL))
		}
		if own != nil {
			return own(req, via)
		}
		return nil
	}
	return &cc
}

// redactedURL is u without user information, query and fragment, for
// errors.
func redactedURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (the scheme's default port when absent).
func sameOrigin(a, b *url.URL) bool {
	if a == nil || b == nil || !strings.EqualFold(a.Scheme, b.Scheme) {
		return false
	}
	ah, ap := hostPort(a)
	bh, bp := hostPort(b)
	return ah == bh && ap == bp
}

// firstURL returns the URL of the request an http.Client was asked to
// send, following the redirect responses req was made for (Request.Response
// is set only on requests that follow a redirect).
func firstURL(req *http.Request) *url.URL {
	r := req
	for i := 0; i < 100 && r.Response != nil && r.Response.Request != nil; i++ {
		r = r.Response.Request
	}
	return r.URL
}

// foreignRedirect reports whether req follows a redirect to another origin
// than the one of the request the client was sent.
func foreignRedirect(req *http.Request) bool {
	return req.Response != nil && !sameOrigin(req.URL, firstURL(req))
}

// mayCarry reports whether the token obtained for resource may be sent
// with a request to u.
func mayCarry(u *url.URL, resource string) bool {
	r, err := url.Parse(resource)
	return err == nil && sameOrigin(u, r)
}

// isRedirect reports whether resp is a redirect (which registration and
// token requests do not follow).
func isRedirect(resp *http.Response) bool { return resp.StatusCode/100 == 3 }
