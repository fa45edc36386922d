package sqlserver

import (
	"context"
	"fmt"
	"strings"
)

// PrivilegeError is Open's refusal of a PostgreSQL role that can do more
// than a window to the database may: run programs or read files on the
// database server, stop other sessions, bypass row-level security, or
// change the tables it serves — itself, through a role it may SET ROLE
// to, or through a SECURITY DEFINER function that runs as a privileged
// owner. Options.AllowPrivilegedRole serves it anyway.
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

// rolePrivileges is one query reading what checkRole looks at of the role
// itself: its attributes, its memberships in the roles that reach the
// server, the privileged roles it may SET ROLE to (a member of a superuser
// role is not a superuser, but becomes one with SET ROLE), and the served
// relations it owns.
const rolePrivileges = `SELECT r.rolname, r.rolsuper, r.rolbypassrls,
	COALESCE(pg_has_role(current_user, to_regrole('pg_execute_server_program'), 'MEMBER'), false),
	COALESCE(pg_has_role(current_user, to_regrole('pg_read_server_files'), 'MEMBER'), false),
	COALESCE(pg_has_role(current_user, to_regrole('pg_write_server_files'), 'MEMBER'), false),
	COALESCE(pg_has_role(current_user, to_regrole('pg_signal_backend'), 'MEMBER'), false),
	COALESCE((SELECT string_agg(format('%I', g.rolname) || CASE WHEN g.rolsuper THEN ' (a superuser)' ELSE ' (BYPASSRLS)' END,
			', ' ORDER BY g.rolname)
		FROM pg_roles g WHERE g.rolname <> current_user AND (g.rolsuper OR g.rolbypassrls)
		AND pg_has_role(current_user, g.oid, 'MEMBER')), ''),
	COALESCE((SELECT string_agg(c.relname, ', ' ORDER BY c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
		AND pg_has_role(current_user, c.relowner, 'MEMBER')), '')
	FROM pg_roles r WHERE r.rolname = current_user`

// definerFunctions lists the SECURITY DEFINER functions (and procedures)
// the role can execute that run with privileges it lacks: those owned by a
// superuser, by a member of one of the roles that reach the server's
// programs, files or other sessions, or by a BYPASSRLS role — owners the
// role is not itself a member of (their privileges are then its own, and
// reported as such). EXECUTE is checked for the role and for every role it
// may SET ROLE to, which covers grants to group roles and the grant to
// PUBLIC that every function gets when it is created, unless revoked. It
// reads at most $1 rows; the last column counts them all.
const definerFunctions = `WITH mine AS (
		SELECT oid FROM pg_roles WHERE pg_has_role(current_user, oid, 'MEMBER')),
	owners AS (
		SELECT r.oid, r.rolname, concat_ws(', ',
			CASE WHEN r.rolsuper THEN 'a superuser' END,
			CASE WHEN NOT r.rolsuper AND COALESCE(pg_has_role(r.oid, to_regrole('pg_execute_server_program'), 'MEMBER'), false)
				THEN 'a member of pg_execute_server_program' END,
			CASE WHEN NOT r.rolsuper AND COALESCE(pg_has_role(r.oid, to_regrole('pg_read_server_files'), 'MEMBER'), false)
				THEN 'a member of pg_read_server_files' END,
			CASE WHEN NOT r.rolsuper AND COALESCE(pg_has_role(r.oid, to_regrole('pg_write_server_files'), 'MEMBER'), false)
				THEN 'a member of pg_write_server_files' END,
			CASE WHEN NOT r.rolsuper AND COALESCE(pg_has_role(r.oid, to_regrole('pg_signal_backend'), 'MEMBER'), false)
				THEN 'a member of pg_signal_backend' END,
			CASE WHEN NOT r.rolsuper AND r.rolbypassrls THEN 'BYPASSRLS' END) AS what
		FROM pg_roles r WHERE NOT pg_has_role(current_user, r.oid, 'MEMBER')),
	found AS (
		SELECT format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) AS fn,
			format('%I', o.rolname) AS owner, o.what,
			p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
				WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE') AS public
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN owners o ON o.oid = p.proowner
		WHERE p.prosecdef AND o.what <> ''
		AND EXISTS (SELECT 1 FROM mine WHERE has_function_privilege(mine.oid, p.oid, 'EXECUTE')))
	SELECT fn, owner, what, public, count(*) OVER () FROM found ORDER BY fn LIMIT $1`

// maxDefinerFunctions is how many such functions a refusal names.
const maxDefinerFunctions = 20

// readDefiners describes each SECURITY DEFINER function the role can run
// as a privileged owner (see definerFunctions), naming at most
// maxDefinerFunctions of them.
func readDefiners(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, definerFunctions, maxDefinerFunctions)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	var total int64
	for rows.Next() {
		var fn, owner, what string
		var public bool
		if err := rows.Scan(&fn, &owner, &what, &public, &total); err != nil {
			return nil, err
		}
		grant := "granted EXECUTE on it directly or through a role it belongs to"
		fix := "REVOKE EXECUTE ON FUNCTION " + fn + " FROM the role and the roles it belongs to"
		if public {
			grant = "EXECUTE on it is granted to PUBLIC, as it is on every function unless revoked"
			fix = "REVOKE EXECUTE ON FUNCTION " + fn + " FROM PUBLIC, then GRANT it only to the roles that need it"
		}
		out = append(out, fmt.Sprintf("it can call the SECURITY DEFINER function %s, which runs as its owner %s (%s) "+
			"and so does whatever its code does with that owner's privileges (a superuser's reach the server's programs "+
			"and files); %s (%s, or make it SECURITY INVOKER)", fn, owner, what, grant, fix))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if total > int64(len(out)) {
		out = append(out, fmt.Sprintf("it can call %d more such SECURITY DEFINER functions", total-int64(len(out))))
	}
	return out, nil
}

// checkRole inspects the PostgreSQL role and refuses one with privileges
// a window to the database must not have, unless AllowPrivilegedRole.
func (d *DB) checkRole(ctx context.Context) error {
	var role, setRoles, owned string
	var super, bypass, program, read, write, signal bool
	var definers []string
	err := d.read(ctx, func(ctx context.Context, q querier) error {
		err := scanOne(ctx, q, rolePrivileges, nil, &role, &super, &bypass, &program, &read, &write, &signal, &setRoles, &owned)
		if err != nil || super {
			return err
		}
		definers, err = readDefiners(ctx, q)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlserver: reading the role's privileges: %w", err)
	}
	var found []string
	if super {
		found = append(found, "it is a superuser: it can run shell commands on the database server (COPY ... TO PROGRAM), "+
			"read and write its files, stop other sessions and change any setting")
	} else {
		if setRoles != "" {
			found = append(found, "it is a member of "+setRoles+": with SET ROLE it has all of that role's privileges")
		}
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
		found = append(found, definers...)
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
