package httpguard

import (
	"errors"
	"net/http"
)

// maxRedirects is how many redirects a client of an MCP endpoint follows,
// as net/http's default policy does.
const maxRedirects = 10

// ErrCrossOriginRedirect is the error of a request to an MCP endpoint that
// was redirected to another origin.
var ErrCrossOriginRedirect = errors.New("refused a redirect to another origin: the MCP endpoint's messages are not sent elsewhere")

// SameOriginClient returns a copy of hc (http.DefaultClient when nil)
// that follows redirects only within the origin (scheme, host and port)
// of the first request: an MCP request carries tool arguments and session
// ids, which a server must not be able to send to another origin. The
// copy still asks hc's own CheckRedirect, if any, about redirects it
// allows.
func SameOriginClient(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return ErrCrossOriginRedirect
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}
