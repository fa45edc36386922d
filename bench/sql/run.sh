#!/bin/sh
# The database server comparison (make bench-sql): mcpkit's serve sql over
# stdio and Streamable HTTP against @modelcontextprotocol/server-postgres
# and @bytebase/dbhub (pinned here, in package.json; dbhub over both
# transports, server-postgres over stdio, its only one) on one PostgreSQL:
# the one MCPKIT_TEST_POSTGRES_DSN names (a superuser DSN), or one started
# for the run with .ci/postgres. The harness (bench/cmd/sqlbench) makes
# its database and read-only role itself. Arguments go to it, e.g.
#   bench/sql/run.sh -rounds 1 -duration 2s
# BEFORE=<git revision> also measures the mcpkit of that revision.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out="${TMPDIR:-/tmp}/mcpkit-bench-sql"
mkdir -p "$out"
cd "$root"
go build -o "$out/mcpkit" ./cmd/mcpkit
(cd bench && go build -o "$out/sqlbench" ./cmd/sqlbench)
stamp=bench/sql/node_modules/.installed
if [ ! -f "$stamp" ] || [ bench/sql/package-lock.json -nt "$stamp" ]; then
  (cd bench/sql && npm ci --no-audit --no-fund --loglevel=error)
  touch "$stamp"
fi
set --  -node-modules bench/sql/node_modules "$@"
if [ -n "${BEFORE:-}" ]; then
  src="$out/before-src"
  git worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
  git worktree add -q --detach "$src" "$BEFORE"
  (cd "$src" && go build -o "$out/mcpkit-before" ./cmd/mcpkit)
  git worktree remove --force "$src"
  set -- -before "$out/mcpkit-before" "$@"
fi
dsn="${MCPKIT_TEST_POSTGRES_DSN:-}"
if [ -z "$dsn" ]; then
  pgdir=$(mktemp -d)
  chmod 755 "$pgdir"
  trap '.ci/postgres stop "$pgdir/data"; rm -rf "$pgdir"' EXIT INT TERM
  dsn=$(.ci/postgres start "$pgdir/data" "${BENCH_SQL_PG_PORT:-55498}")
fi
"$out/sqlbench" -dsn "$dsn" -mcpkit "$out/mcpkit" "$@"
