package server

import (
	"context"
	"slices"
)

type scopesKey struct{}

// WithScopes returns a context carrying the scopes the authenticated
// caller was granted, for authorization middleware in front of the
// transport (package auth/resource sets them with the principal). A
// context without them means no authorization is in force.
func WithScopes(ctx context.Context, scopes []string) context.Context {
	return context.WithValue(ctx, scopesKey{}, slices.Clone(scopes))
}

// ScopesFrom returns the scopes set with WithScopes; ok is false when none
// were set (no authorization in force).
func ScopesFrom(ctx context.Context) (scopes []string, ok bool) {
	s, ok := ctx.Value(scopesKey{}).([]string)
	return slices.Clone(s), ok
}
