package sqlserver

import (
	"context"
	"fmt"
	"strings"
)

// PrivilegeError is Open's refusal of a PostgreSQL role that can do more
// than a window to the database may: run programs or read files on the
// database server, stop other sessions, bypass row-level security, or
// change the tables it serves. Options.AllowPrivilegedRole serves it
// anyway.
type PrivilegeError struct {
	// Role is the role the DSN logs in as.
	Role string
	// Privileges describes each privilege found, one sentence each.
	Privileges []string
}

func (e *PrivilegeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sqlserver: refusing to serve PostgreSQL as role %q, which has privileges a read-only window must not have:\n", e.Role)
	for _, p := range e.Privileges {
		b.WriteString("  - " + p + "\n")
	}
	b.WriteString("Connect as a role made for mcpkit instead (the README's Security section has the SQL: " +
		"CREATE ROLE mcpkit_reader LOGIN ...; GRANT SELECT ON ALL TABLES IN SCHEMA ... TO mcpkit_reader), " +
		"or pass --allow-privileged-role (Options.AllowPrivilegedRole) to serve with this role anyway.")
	return b.String()
}

// rolePrivileges is one query reading everything checkRole looks at.
const rolePrivileges = `SELECT r.rolname, r.rolsuper, r.rolbypassrls,
	COALESCE(pg_has_role(current_user, to_regrole('pg_execute_server_program'), 'MEMBER'), false),
	COALESCE(pg_has_role(current_user, to_regrole('pg_read_server_files'), 'MEMBER'), false),
	COALESCE(pg_has_role(current_user, to_regrole('pg_write_server_files'), 'MEMBER'), false),
	COALESCE(pg_has_role(current_user, to_regrole('pg_signal_backend'), 'MEMBER'), false),
	COALESCE((SELECT string_agg(c.relname, ', ' ORDER BY c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
		AND pg_has_role(current_user, c.relowner, 'MEMBER')), '')
	FROM pg_roles r WHERE r.rolname = current_user`

// checkRole inspects the PostgreSQL role and refuses one with privileges
// a window to the database must not have, unless AllowPrivilegedRole.
func (d *DB) checkRole(ctx context.Context) error {
	var role, owned string
	var super, bypass, program, read, write, signal bool
	err := d.read(ctx, func(ctx context.Context, q querier) error {
		return scanOne(ctx, q, rolePrivileges, nil, &role, &super, &bypass, &program, &read, &write, &signal, &owned)
	})
	if err != nil {
		return fmt.Errorf("sqlserver: reading the role's privileges: %w", err)
	}
	var found []string
	if super {
		found = append(found, "it is a superuser: it can run shell commands on the database server (COPY ... TO PROGRAM), "+
			"read and write its files, stop other sessions and change any setting")
	} else {
		if program {
			found = append(found, "it is a member of pg_execute_server_program: it can run programs on the database server (COPY ... TO PROGRAM)")
		}
		if read {
			found = append(found, "it is a member of pg_read_server_files: it can read files on the database server (pg_read_file, COPY ... FROM a file)")
		}
		if write {
			found = append(found, "it is a member of pg_write_server_files: it can write files on the database server (COPY ... TO a file)")
		}
		if signal {
			found = append(found, "it is a member of pg_signal_backend: it can cancel or terminate other sessions (pg_terminate_backend)")
		}
		if bypass {
			found = append(found, "it has BYPASSRLS: row-level security policies do not apply to it")
		}
	}
	if owned != "" && !super {
		found = append(found, "it owns (or is a member of the owner of) the served tables "+owned+
			": their row-level security does not apply to it, and it can grant access to them or change them")
	}
	if len(found) == 0 {
		return nil
	}
	if !d.opts.AllowPrivilegedRole {
		return &PrivilegeError{Role: role, Privileges: found}
	}
	for _, f := range found {
		d.opts.Logger.Warn("sqlserver: serving with a privileged PostgreSQL role (--allow-privileged-role)", "role", role, "privilege", f)
	}
	return nil
}
