package sqlserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpkit/mcpkit/auth/resource"
)

// The caller's identity in the database (PostgreSQL, under OAuth):
// Options.CallerClaims puts the verified claims of the caller's access
// token in the transaction-local setting request.jwt.claims, and
// Options.RoleClaim runs the call as the role Options.Roles maps the
// claim's value to (SET LOCAL ROLE), so that row-level security policies
// apply per caller. Both are set in each call's read-only transaction,
// before its statement, and end with it.
//
// Neither may be undone by the statement they guard: a setting can be
// changed by any role with set_config() (a function PUBLIC may execute by
// default) and, with SET ROLE, to any role the login role belongs to, and
// a DO block (any procedural language with an inline handler) could run
// SET itself and report what it read. Open therefore refuses these options
// unless the login role can execute neither set_config(text, text,
// boolean) nor a language's inline handler: the README's recipe revokes
// them. A single statement that is itself SET or RESET reads nothing, and
// its change ends with the transaction.

// identityKey marks a context with the identity a read runs under.
type identityKey struct{}

// internalKey marks the contexts of the server's own reads (change
// detection, the ask prompt's profile), which run as the login role.
type internalKey struct{}

// identity is what a read sets before its statement.
type identity struct {
	claims string // JSON for request.jwt.claims; "" for none
	role   string // the role to run as; "" for the login role
}

// maxClaimsBytes bounds the claims a call carries into the database.
const maxClaimsBytes = 16 << 10

func internalContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, internalKey{}, true)
}

// withIdentity returns ctx carrying the identity a call of the caller on
// ctx runs under, or an error refusing the call.
func (d *DB) withIdentity(ctx context.Context) (context.Context, error) {
	if !d.opts.CallerClaims && d.opts.RoleClaim == "" {
		return ctx, nil
	}
	if ctx.Value(internalKey{}) != nil {
		return ctx, nil
	}
	var id identity
	p := resource.PrincipalFrom(ctx)
	if d.opts.CallerClaims {
		id.claims = "{}"
		if p != nil {
			b, err := json.Marshal(p.Claims)
			if err != nil {
				return nil, fmt.Errorf("the caller's claims: %w", err)
			}
			if len(b) > maxClaimsBytes {
				return nil, &limitError{fmt.Sprintf("the caller's token carries %d bytes of claims, more than the %d the server passes to the database", len(b), maxClaimsBytes)}
			}
			id.claims = string(b)
		}
	}
	if d.opts.RoleClaim != "" {
		if p == nil {
			return nil, &limitError{"this server runs each call as a database role chosen from the caller's access token (--role-claim), and this call has none"}
		}
		v, _ := p.Claims[d.opts.RoleClaim].(string)
		role, ok := d.opts.Roles[v]
		if !ok {
			role, ok = d.opts.Roles["*"]
		}
		if !ok {
			return nil, &limitError{fmt.Sprintf("no database role for this caller: its token's %s claim maps to none (--role)", d.opts.RoleClaim)}
		}
		id.role = role
	}
	return context.WithValue(ctx, identityKey{}, id), nil
}

// identityFrom returns the identity on ctx.
func identityFrom(ctx context.Context) (identity, bool) {
	id, ok := ctx.Value(identityKey{}).(identity)
	return id, ok && (id.claims != "" || id.role != "")
}

// statements are the SQL statements that set id in a transaction.
func (id identity) statements() []string {
	var out []string
	if id.claims != "" {
		out = append(out, "SET LOCAL request.jwt.claims = "+quoteLiteral(id.claims))
	}
	if id.role != "" {
		out = append(out, "SET LOCAL ROLE "+quoteIdent(id.role))
	}
	return out
}

// checkIdentity refuses the identity options where the statement they
// guard could undo them (see above), or where a mapped role cannot be
// taken.
func (d *DB) checkIdentity(ctx context.Context) error {
	if !d.opts.CallerClaims && d.opts.RoleClaim == "" {
		return nil
	}
	if d.dialect.name() != "PostgreSQL" {
		return errors.New("sqlserver: CallerClaims and RoleClaim need PostgreSQL")
	}
	if d.opts.RoleClaim != "" && len(d.opts.Roles) == 0 {
		return errors.New("sqlserver: RoleClaim needs Roles, the roles its values map to")
	}
	var problems []string
	err := d.read(internalContext(ctx), func(ctx context.Context, q querier) error {
		var setConfig bool
		if err := scanOne(ctx, q, `SELECT has_function_privilege('pg_catalog.set_config(text, text, boolean)', 'EXECUTE')`, nil, &setConfig); err != nil {
			return err
		}
		if setConfig {
			problems = append(problems, "it may execute set_config(), with which a statement could change the claims or the role it runs under "+
				"(REVOKE EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) FROM PUBLIC)")
		}
		rows, err := q.QueryContext(ctx, `SELECT lanname FROM pg_language WHERE laninline <> 0 AND has_language_privilege(oid, 'USAGE') ORDER BY lanname`)
		if err != nil {
			return err
		}
		var langs []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				rows.Close()
				return err
			}
			langs = append(langs, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, l := range langs {
			problems = append(problems, fmt.Sprintf("it may run DO blocks in %s, which could change the claims or the role and report what they read "+
				"(REVOKE USAGE ON LANGUAGE %s FROM PUBLIC)", l, l))
		}
		roles := make([]string, 0, len(d.opts.Roles))
		for _, r := range d.opts.Roles {
			roles = append(roles, r)
		}
		sort.Strings(roles)
		for _, r := range slicesCompact(roles) {
			var ok bool
			err := scanOne(ctx, q, `SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = $1) AND pg_has_role($1, 'MEMBER')`, []any{r}, &ok)
			if err != nil {
				return err
			}
			if !ok {
				problems = append(problems, fmt.Sprintf("it cannot SET ROLE %s (GRANT %s TO the login role)", quoteIdent(r), quoteIdent(r)))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlserver: checking the role for the caller's identity: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("sqlserver: the caller's identity (CallerClaims, RoleClaim) cannot be enforced with this role:\n  - %s", strings.Join(problems, "\n  - "))
	}
	return nil
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
