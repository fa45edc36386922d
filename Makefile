# mcpkit build and test entry points. `make test` is what CI runs.

GO        ?= go
# Fuzzing budgets are execution counts, not durations: with a duration, Go
# 1.26's fuzz coordinator can report a spurious "context deadline exceeded"
# at the deadline (golang/go#75804). FUZZN is for most targets, FUZZN_FAST
# for the ones that run about ten times faster.
FUZZN      ?= 40000x
FUZZN_FAST ?= 400000x
SUITE_DIR := conformance
SUITE_BIN := $(CURDIR)/$(SUITE_DIR)/node_modules/.bin
GOFILES    = $(shell find . -name '*.go' -not -path './$(SUITE_DIR)/node_modules/*')

.PHONY: test check unit conformance suite browser fuzz bench bench-sql bench-inproc serve clean

## test: everything CI checks: format, vet, race-enabled unit tests, the
## official conformance suite against the everything-server, the browser
## tests, short fuzzing.
test: check unit conformance browser fuzz

## check: gofmt, go vet (of the bench module too, so that make bench
## builds), and the core boundary: the core packages import
## no transport (nor net/http), nothing in the core, the transports or the
## client asserts a type to find an optional feature (transport.Handler
## states all of them), no session is converted back to its type, and
## only the otel package (and the command) links OpenTelemetry.
check:
	@unformatted="$$(gofmt -l $(GOFILES))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	@deps="$$($(GO) list -deps ./protocol ./feed ./transport ./server ./server/legacy | grep -E 'mcpkit/transport/|mcpkit/client$$|^net/http$$')"; \
	if [ -n "$$deps" ]; then echo "the core imports a transport: $$deps"; exit 1; fi
	@otel="$$($(GO) list -deps ./protocol ./jsonrpc ./feed ./server/... ./client/... ./transport/... ./auth/... | grep '^go.opentelemetry.io/')"; \
	if [ -n "$$otel" ]; then echo "OpenTelemetry is linked without the otel package: $$otel"; exit 1; fi
	@sniff="$$(grep -rn --include='*.go' -E '\.\((transport\.[A-Z]|interface *\{)' server transport feed protocol client | grep -v '_test.go' | grep -v 'SetReadDeadline')"; \
	if [ -n "$$sniff" ]; then echo "type assertions for optional features:"; echo "$$sniff"; exit 1; fi
	@downcast="$$(grep -rn --include='*.go' -E '\.\(\*?([A-Za-z]+\.)?Session\)' server transport feed protocol client | grep -v '_test.go')"; \
	if [ -n "$$downcast" ]; then echo "sessions converted back to their types (look them up instead):"; echo "$$downcast"; exit 1; fi

## unit: all Go tests with the race detector.
unit:
	$(GO) test -race -count=1 ./...

## suite: install the pinned conformance suite (npm ci) when missing or stale.
suite: $(SUITE_DIR)/node_modules/.installed

$(SUITE_DIR)/node_modules/.installed: $(SUITE_DIR)/package.json $(SUITE_DIR)/package-lock.json
	cd $(SUITE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

## conformance: run the official server suite and judge every scenario
## strictly, against one process and against nginx in front of three
## replicas sharing state in Redis (deploy/run).
conformance: suite
	MCPKIT_CONFORMANCE_BIN=$(SUITE_BIN) $(GO) test -count=1 -timeout 30m -run 'Conformance' -v ./conformance/

## browser: the browser tests (internal/browsertest) in headless Chromium,
## installing Debian's chromium package when it is missing (.ci/chromium);
## screenshots go to artifacts/.
browser: suite
	chromium="$$(.ci/chromium)" && MCPKIT_CHROMIUM="$$chromium" MCPKIT_NODE_MODULES=$(CURDIR)/$(SUITE_DIR)/node_modules \
	MCPKIT_ARTIFACTS=$(CURDIR)/artifacts \
	$(GO) test -count=1 -timeout 10m -v -run 'Browser' ./internal/browsertest/

## fuzz: run every fuzz target for its budget (FUZZN or FUZZN_FAST executions).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZN_FAST) ./jsonrpc/
	$(GO) test -run '^$$' -fuzz '^FuzzEachMember$$' -fuzztime $(FUZZN_FAST) ./jsonrpc/
	$(GO) test -run '^$$' -fuzz '^FuzzServeHTTP$$' -fuzztime $(FUZZN) ./transport/streamable/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeHeaderValue$$' -fuzztime $(FUZZN) ./transport/streamable/
	$(GO) test -run '^$$' -fuzz '^FuzzCompileValidate$$' -fuzztime $(FUZZN) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzParseValue$$' -fuzztime $(FUZZN) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzValidatedSatisfiesSchema$$' -fuzztime $(FUZZN) ./server/
	$(GO) test -run '^$$' -fuzz '^FuzzStatements$$' -fuzztime $(FUZZN) ./sqlserver/

## bench: the loopback comparison against the other SDKs and the net/http
## floor (bench/, its own module): interleaved rounds, medians, ratios,
## server CPU per request and peak RSS. BENCHFLAGS passes flags to it,
## e.g. BENCHFLAGS='-rounds 5 -c 16 -modes http-modern'.
bench:
	bench/run.sh $(BENCHFLAGS)

## bench-sql: the database server comparison (bench/sql/run.sh): mcpkit's
## serve sql over stdio and Streamable HTTP against the pinned
## @modelcontextprotocol/server-postgres and @bytebase/dbhub, on the
## PostgreSQL of MCPKIT_TEST_POSTGRES_DSN (or one it starts): point lookup
## and a 990-row join at c=1 and c=16, interleaved rounds, medians, ratios,
## server and PostgreSQL CPU per request. BENCHSQLFLAGS passes flags, e.g.
## BENCHSQLFLAGS='-rounds 1 -duration 2s'; BEFORE=<revision> adds the mcpkit
## of that revision.
bench-sql:
	bench/sql/run.sh $(BENCHSQLFLAGS)

## bench-inproc: the in-process benchmarks, with allocation counts: the
## main module's, then the comparison module's (every server through
## httptest and over pipes).
bench-inproc:
	$(GO) test -run '^$$' -bench . -benchmem ./transport/... ./server/ ./schema/ ./jsonrpc/
	cd bench && $(GO) test -run '^$$' -bench . -benchmem ./...

## serve: serve the demo database on http://127.0.0.1:8080/mcp.
serve:
	$(GO) run ./cmd/mcpkit serve sql

clean:
	rm -rf $(SUITE_DIR)/node_modules
