package server

import (
	"context"
	"fmt"
	"slices"

	"github.com/mcpkit/mcpkit/protocol"
)

// FeatureOption configures a tool, prompt, resource or resource template
// as it is registered (AddTool, AddToolHandler, AddPrompt, AddResource,
// AddResourceTemplate). It is server-side only: nothing of it goes into
// the feature's definition on the wire.
type FeatureOption func(*featureOptions)

type featureOptions struct {
	scopes []string
}

// RequireScopes makes a feature need every one of scopes. Where
// authorization is in force (middleware set the caller's granted scopes
// with WithScopes), a caller not granted them all does not see the feature
// in tools/list, prompts/list, resources/list or resources/templates/list,
// whose results are then cacheScope "private", and calling it (tools/call,
// prompts/get, resources/read, completion/complete) is refused with
// protocol.InsufficientScope(scopes...): over Streamable HTTP a 403 with
// WWW-Authenticate: Bearer error="insufficient_scope", scope="...". Where
// no scopes are on the context, every feature is served to everyone.
// Several RequireScopes add up. It panics on a scope that is not an
// OAuth scope-token (RFC 6749, section 3.3: printable ASCII but space,
// '"' and '\').
func RequireScopes(scopes ...string) FeatureOption {
	scopes = slices.Clone(scopes)
	for _, sc := range scopes {
		if !ValidScope(sc) {
			panic(fmt.Sprintf("server: RequireScopes: %q is not a scope token", sc))
		}
	}
	return func(o *featureOptions) {
		for _, sc := range scopes {
			if !slices.Contains(o.scopes, sc) {
				o.scopes = append(o.scopes, sc)
			}
		}
	}
}

// ValidScope reports whether sc is an OAuth scope token (RFC 6749, section
// 3.3: one or more of %x21 / %x23-5B / %x5D-7E), as RequireScopes accepts.
func ValidScope(sc string) bool {
	if sc == "" {
		return false
	}
	for i := 0; i < len(sc); i++ {
		if c := sc[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func applyFeatureOptions(opts []FeatureOption) featureOptions {
	var o featureOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// scoped is a registry entry that may need scopes.
type scoped interface{ needs() []string }

func (e *toolEntry) needs() []string     { return e.scopes }
func (e *promptEntry) needs() []string   { return e.scopes }
func (e *resourceEntry) needs() []string { return e.scopes }
func (e *templateEntry) needs() []string { return e.scopes }

// grantedScopes returns the scopes on ctx without copying them (WithScopes
// copied them already; they are only read); authz is false when none were
// set: no authorization in force.
func grantedScopes(ctx context.Context) (scopes []string, authz bool) {
	scopes, authz = ctx.Value(scopesKey{}).([]string)
	return scopes, authz
}

// permits reports whether the request's caller may use a feature that
// needs the scopes.
func (r *Request) permits(need []string) bool {
	if !r.authz || len(need) == 0 {
		return true
	}
	for _, n := range need {
		if !slices.Contains(r.granted, n) {
			return false
		}
	}
	return true
}

// ResourceAccess refuses, with the insufficient-scope error, a caller (the
// scopes on ctx) who may not read uri: the resource, or the template it
// matches, needs scopes the caller lacks. A URI the server does not know
// is not refused (it may appear later). It implements legacy.Core, which
// checks resources/subscribe with it; subscriptions/listen leaves such
// URIs out of its acknowledgment.
func (s *Server) ResourceAccess(ctx context.Context, uri string) error {
	_, _, need, found := s.findResource(uri)
	if !found {
		return nil
	}
	granted, authz := grantedScopes(ctx)
	r := &Request{granted: granted, authz: authz}
	return r.authorize(need)
}

// authorize returns the refusal of a feature that needs scopes the caller
// lacks, or nil.
func (r *Request) authorize(need []string) error {
	if r.permits(need) {
		return nil
	}
	return protocol.InsufficientScope(need...)
}
