package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Authorizer is the interactive step of the authorization code flow: it
// sends the user agent to authURL and returns the URL the authorization
// server redirected it to (the redirect URL with code, state and iss in its
// query), once the user is done.
type Authorizer interface {
	Authorize(ctx context.Context, authURL string) (redirectedTo string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, authURL string) (string, error)

// Authorize implements Authorizer.
func (f AuthorizerFunc) Authorize(ctx context.Context, authURL string) (string, error) {
	return f(ctx, authURL)
}

// HeadlessAuthorizer fetches the authorization URL without a user and
// returns where the authorization server redirects, without following the
// redirect. It fits tests and authorization servers that approve at once.
type HeadlessAuthorizer struct {
	// HTTPClient sends the request; nil means http.DefaultClient's
	// transport. Its CheckRedirect is not used.
	HTTPClient *http.Client
}

// Authorize implements Authorizer.
func (h *HeadlessAuthorizer) Authorize(ctx context.Context, authURL string) (string, error) {
	var c http.Client
	if h != nil && h.HTTPClient != nil {
		c = *h.HTTPClient
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", errors.New("auth: invalid authorization URL")
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("auth: authorization request: %w", stripURL(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 3 {
		return "", fmt.Errorf("%w: the authorization endpoint answered %d, not a redirect", ErrAuthorizationResponse, resp.StatusCode)
	}
	loc, err := resp.Location()
	if err != nil {
		return "", fmt.Errorf("%w: redirect without a usable Location", ErrAuthorizationResponse)
	}
	return loc.String(), nil
}

// stripURL drops the URL of a *url.Error: the URL of an authorization
// request carries state and PKCE parameters.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
