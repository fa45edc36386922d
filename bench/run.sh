#!/bin/sh
# Loopback comparison of the echo servers (make bench). Builds benchserver
# and compare, then runs compare with any arguments given, e.g.
#   bench/run.sh -rounds 5 -c 16 -modes http-modern
set -eu
cd "$(dirname "$0")"
out="${TMPDIR:-/tmp}/mcpkit-bench"
mkdir -p "$out"
go build -o "$out/benchserver" ./cmd/benchserver
go build -o "$out/compare" ./cmd/compare
exec "$out/compare" -server "$out/benchserver" "$@"
